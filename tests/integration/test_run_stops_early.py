"""Real `rag` processes that stop early and say why: a collection whose every file is rejected
stops at `source_documents` (or, every file unparsable, at `document_trees`) with one line naming
the files and reasons, the steps below skipped, not failed; an out-of-range run config value
stops before any run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT

RAG = [sys.executable, "-m", "rag_assets.cli"]


def _project(tmp_path: Path, folder: Path) -> dict[str, str]:
    """A fresh DAGSTER_HOME, data folder and collections file naming `folder` as `allbad`."""
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(REPO_ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    collections = tmp_path / "collections.yaml"
    collections.write_text(f"collections:\n  - name: allbad\n    path: {folder}\n")
    return {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "RAG_COLLECTIONS": str(collections),
        "RAG_DATA_DIR": str(tmp_path / "data"),
        "COLUMNS": "400",
    }


def test_a_collection_with_no_readable_document_stops_at_its_sources(tmp_path: Path) -> None:
    folder = tmp_path / "allbad"
    folder.mkdir()
    (folder / "a.md").write_bytes(b"\x00\x01\x02 binary")
    (folder / "empty.txt").write_bytes(b"")
    env = _project(tmp_path, folder)
    run = subprocess.run([*RAG, "run"], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 1, run.stdout[-2000:] + run.stderr[-2000:]
    failed = [line.strip() for line in run.stderr.splitlines() if "failed" in line]
    assert failed[0] == (
        f"step source_documents failed: Failure: collection allbad has no readable document: 2 rejected "
        f"({folder / 'a.md'}: binary file (NUL bytes in the first 8 KB), not a text document; "
        f"{folder / 'empty.txt'}: empty document (no text))"
    )
    assert failed[1].startswith("run ") and failed[1].endswith("for allbad failed; see `make dev` for its logs")
    assert failed[2] == "error: 1 of 1 collection run(s) failed: allbad"
    assert len(failed) == 3  # no other step failed: the rest were skipped
    assert re.search(r"^  \d+ step\(s\) skipped: an upstream step failed$", run.stdout, re.MULTILINE)
    assert "max_retries" not in run.stdout + run.stderr


def test_a_collection_with_no_parsable_document_stops_at_its_trees(tmp_path: Path) -> None:
    folder = tmp_path / "allbad"
    folder.mkdir()
    (folder / "broken.json").write_text('{"section_0": {"html": 3}}')
    env = _project(tmp_path, folder)
    run = subprocess.run([*RAG, "index"], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 1, run.stdout[-2000:] + run.stderr[-2000:]
    failed = [line.strip() for line in run.stderr.splitlines() if "failed" in line]
    assert failed[0].startswith(
        f"step document_trees failed: Failure: collection allbad has no parsable document: 1 rejected "
        f"({folder / 'broken.json'}: cannot parse as manual_json: "
    )
    assert len(failed) == 3  # the step, the run, the summary


def test_the_issues_negative_limit_is_refused_before_the_run(tmp_path: Path) -> None:
    """`rag run --config neg.yaml` with `sources.max_document_mb: -1` once failed minutes later
    with only "run ... failed"; now the real command refuses it at once, naming key, value, bound."""
    folder = tmp_path / "allbad"
    folder.mkdir()
    env = _project(tmp_path, folder)
    config = tmp_path / "neg.yaml"
    config.write_text("resources:\n  sources:\n    config:\n      max_document_mb: -1\n")
    run = subprocess.run(
        [*RAG, "run", "-c", "allbad", "--config", str(config)], env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 2, run.stdout[-2000:] + run.stderr[-2000:]
    assert run.stderr.splitlines() == [
        f"error: run config {config}: resources.sources.config.max_document_mb = -1: Input should be greater than 0"
    ]
    assert not (tmp_path / "home" / "storage").exists()  # no run was started
