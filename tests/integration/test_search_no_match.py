"""`rag search` that finds nothing says so (a real BM25 search over a materialized index)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.integration.served_project import materialize, project_env


def test_a_search_with_no_hit_says_no_passage_matched(tmp_path: Path) -> None:
    env = {**os.environ, **project_env(tmp_path, tmp_path / "no-model"), "COLUMNS": "200"}
    materialize(env)
    rag = [sys.executable, "-m", "rag_assets.cli", "search"]
    found = subprocess.run([*rag, "kettle", "--mode", "bm25"], env=env, capture_output=True, text=True, timeout=300)
    assert found.returncode == 0 and "tiny/kettle.md" in found.stdout, found.stderr[-2000:]
    nothing = subprocess.run(
        [*rag, "zyzzyva quixotic", "--mode", "bm25"], env=env, capture_output=True, text=True, timeout=300
    )
    assert nothing.returncode == 0, nothing.stderr[-2000:]
    assert nothing.stdout.splitlines() == ["no passage matched"]
    as_json = subprocess.run(
        [*rag, "zyzzyva quixotic", "--mode", "bm25", "--json"], env=env, capture_output=True, text=True, timeout=300
    )
    assert json.loads(as_json.stdout) == []
