"""A real `rag run` over a collection whose every file is rejected stops at `source_documents`:
exit 1, one line naming the rejected files and reasons, the steps below skipped (not failed)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT


def test_a_collection_with_no_readable_document_stops_at_its_sources(tmp_path: Path) -> None:
    folder = tmp_path / "allbad"
    folder.mkdir()
    (folder / "a.md").write_bytes(b"\x00\x01\x02 binary")
    (folder / "empty.txt").write_bytes(b"")
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(REPO_ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    collections = tmp_path / "collections.yaml"
    collections.write_text(f"collections:\n  - name: allbad\n    path: {folder}\n")
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "RAG_COLLECTIONS": str(collections),
        "RAG_DATA_DIR": str(tmp_path / "data"),
        "COLUMNS": "400",
    }
    run = subprocess.run(
        [sys.executable, "-m", "rag_assets.cli", "run"], env=env, capture_output=True, text=True, timeout=600
    )
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
