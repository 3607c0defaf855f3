"""Run a benchmark script again with the reader of an earlier commit, in the same run: the
commit's `rag_assets` is taken from git into a temporary folder that comes first on the child's
path (this checkout's `benchmarks` stays importable behind it), and the child writes its result
as JSON for the parent to compare. Imports nothing of `rag_assets` itself."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def run_at_commit(commit: str, script: str, arguments: list[str]) -> Any:
    """`script` (a path) run with `arguments` plus `--json-out FILE` under `commit`'s reader; the
    JSON it wrote there."""
    archive = subprocess.run(["git", "archive", commit, "rag_assets"], cwd=ROOT, capture_output=True, check=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(fileobj=io.BytesIO(archive)) as sources:
            sources.extractall(tmp, filter="data")
        out = Path(tmp) / "result.json"
        command = [sys.executable, script, *arguments, "--json-out", str(out)]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([tmp, str(ROOT)])}
        subprocess.run(command, cwd=tmp, env=env, check=True)
        return json.loads(out.read_text())
