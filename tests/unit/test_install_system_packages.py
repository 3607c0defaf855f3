"""`install-system-packages.sh` installs what is missing: with --bench, a Java runtime for the PDF
engine benchmark. Run on a PATH holding this machine's qpdf, tesseract and grep but no java, with
apt-get replaced by a script that records its arguments and `id` by one that says root
(installing a JRE in a unit test would download it; the decision of what to install is what is
tested)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

SCRIPT = Path(__file__).resolve().parents[2] / "install-system-packages.sh"


def _run(tmp_path: Path, *args: str) -> tuple[int, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for tool in ("qpdf", "tesseract", "grep"):
        found = shutil.which(tool)
        assert found is not None, f"{tool} is missing: make install brings it"
        (bin_dir / tool).unlink(missing_ok=True)
        (bin_dir / tool).symlink_to(found)
    calls = tmp_path / "apt-calls"
    (bin_dir / "id").write_text("#!/bin/sh\necho 0\n")  # as root, whoever runs the tests
    (bin_dir / "id").chmod(0o755)
    (bin_dir / "apt-get").write_text(f'#!/bin/sh\necho "$@" >> {calls}\n')
    (bin_dir / "apt-get").chmod(0o755)
    done = subprocess.run(
        ["/bin/sh", str(SCRIPT), *args],
        env={**os.environ, "PATH": str(bin_dir)},
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode, calls.read_text() if calls.exists() else ""


def test_the_reader_packages_present_install_nothing(tmp_path: Path) -> None:
    assert _run(tmp_path) == (0, "")


def test_bench_installs_a_java_runtime_where_java_is_missing(tmp_path: Path) -> None:
    code, calls = _run(tmp_path, "--bench")
    assert "update -qq" in calls
    assert (
        "install -y -qq tesseract-ocr tesseract-ocr-eng tesseract-ocr-osd tesseract-ocr-fra qpdf openjdk-17-jre-headless"
        in calls
    )
    assert code == 1  # the recording apt-get installed nothing: java is still missing, and it says so
