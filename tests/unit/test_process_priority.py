"""Pipeline processes yield the CPU to the service: the niceness setting and the lowering of every
thread (each run in a fresh interpreter, so the test process keeps its priority)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from rag_assets.core.errors import ConfigError
from rag_assets.core.settings import pipeline_niceness

pytestmark = pytest.mark.unit

LOWER_WITH_A_THREAD_RUNNING = """
import os, threading
from rag_assets.core.process_priority import lower_priority
started, go = threading.Event(), threading.Event()
seen = []
def worker():
    started.set(); go.wait(); seen.append(os.nice(0))
thread = threading.Thread(target=worker); thread.start(); started.wait()
now = lower_priority(18)
again = lower_priority(12)  # never raises the priority back
go.set(); thread.join()
print(now, again, seen[0])
"""


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True, timeout=120
    )


def test_every_running_thread_is_lowered_and_never_raised_back() -> None:
    assert os.nice(0) < 18  # the child starts at this process's niceness (10 once the definitions loaded)
    done = run_python(LOWER_WITH_A_THREAD_RUNNING)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["18", "18", "18"]


@pytest.mark.parametrize(("raw", "expected"), [("", 10), ("0", 0), ("19", 19), (" 4 ", 4)])
def test_the_setting_reads_a_niceness(monkeypatch: pytest.MonkeyPatch, raw: str, expected: int) -> None:
    monkeypatch.setenv("RAG_PIPELINE_NICE", raw)
    assert pipeline_niceness() == expected


@pytest.mark.parametrize("raw", ["20", "-1", "ten", "1.5"])
def test_a_niceness_out_of_range_is_named(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("RAG_PIPELINE_NICE", raw)
    with pytest.raises(ConfigError, match=r"RAG_PIPELINE_NICE='.*': expected a niceness from 0"):
        pipeline_niceness()
