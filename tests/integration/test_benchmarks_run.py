"""Every benchmark still starts: its `--help` runs as the README runs it (`python -m benchmarks.NAME`
from the repository root), and every import it makes, function-level ones included (most import
their heavy pieces inside `main`), names a module and a name that exist. A benchmark broken by a
change elsewhere (a module removed, a function renamed) fails here, not when someone next runs it."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.integration

BENCHMARKS = sorted(p for p in (REPO_ROOT / "benchmarks").glob("*.py") if p.name != "__init__.py")
WITH_MAIN = [p for p in BENCHMARKS if "argparse.ArgumentParser(" in p.read_text()]
FIRST_PARTY = ("rag_assets", "resources", "checks", "benchmarks", "tests")


@pytest.mark.parametrize("path", WITH_MAIN, ids=lambda p: p.stem)
def test_benchmark_help_runs(path: Path) -> None:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{path.stem}", "--help"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("usage:"), done.stdout[:500]


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.stem)
def test_every_import_of_a_benchmark_resolves(path: Path) -> None:
    missing = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom) or node.level or (node.module or "").split(".")[0] not in FIRST_PARTY:
            continue
        module = importlib.import_module(node.module)
        for alias in node.names:
            if not hasattr(module, alias.name) and importlib.util.find_spec(f"{node.module}.{alias.name}") is None:
                missing.append(f"{node.lineno}: {node.module}.{alias.name}")
    assert missing == []


def test_every_script_with_a_main_is_checked() -> None:
    """The scripts without an argument parser are helpers, not benchmarks to run."""
    helpers = {
        "common",
        "records",
        "step_clock",
        "heading_truth",
        "pdf_engine_outputs",
        "reading_order",
        "git_baseline",
    }
    assert {p.stem for p in BENCHMARKS} - {p.stem for p in WITH_MAIN} == helpers
