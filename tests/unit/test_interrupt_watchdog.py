"""The interrupt watchdog of `rag run` / `rag index`: a command whose main thread does not unwind
after SIGTERM (stuck in a native call, or a cleanup that never ends) still stops, with the
interrupted exit code, because the watchdog heard the signal through the wakeup socket."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit

# the main thread swallows every KeyboardInterrupt: only the watchdog can end this process
# ("ready" is printed inside the try: a signal sent as soon as it is read lands inside it)
STUCK_COMMAND = """
import time
from rag_assets.commands.runs import sigterm_as_interrupt
with sigterm_as_interrupt():
    announced = False
    while True:
        try:
            if not announced:
                print("ready", flush=True)
                announced = True
            time.sleep(60)
        except KeyboardInterrupt:
            pass
"""

FINISHING_COMMAND = """
from rag_assets.commands.runs import sigterm_as_interrupt
with sigterm_as_interrupt():
    print("ready", flush=True)
import time
time.sleep(8)  # past the grace period, outside the block: the watchdog must be gone
print("done", flush=True)
"""


def _start(code: str) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-c", code], cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline() == "ready\n"
    return process


def test_sigterm_ends_a_command_whose_main_thread_does_not_unwind() -> None:
    process = _start(STUCK_COMMAND)
    process.send_signal(signal.SIGTERM)
    try:
        _, stderr = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail("the watchdog did not stop the process after SIGTERM")
    assert process.returncode == 130
    assert "interrupted" in stderr


def test_the_watchdog_ends_with_the_block() -> None:
    process = _start(FINISHING_COMMAND)
    stdout, stderr = process.communicate(timeout=60)
    assert (process.returncode, stdout, stderr) == (0, "done\n", "")
