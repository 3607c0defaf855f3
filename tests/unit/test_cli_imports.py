"""A command pays only for what it uses: help, version, tree, trace and answers import neither
torch nor sentence-transformers nor Dagster, checked in a fresh interpreter per command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("torch", "sentence_transformers", "transformers", "dagster")
PROBE = f"""
import json, sys
from typer.testing import CliRunner
from rag_assets.cli import app
result = CliRunner().invoke(app, sys.argv[1:])
loaded = [m for m in {HEAVY!r} if m in sys.modules]
print(json.dumps(dict(exit=result.exit_code, output=result.output, loaded=loaded)))
"""


def _run(args: list[str], env: dict[str, str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120, env={**os.environ, **env}
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "args",
    [["--help"], ["--version"], ["ask", "--help"], ["serve", "--help"], ["trace", "0123456789ab"], ["answers"]],
)
def test_light_commands_load_no_model(args: list[str], tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    import duckdb

    duckdb.connect(str(data / "catalogue.duckdb")).close()  # an empty catalogue
    found = _run(args, {"RAG_DATA_DIR": str(data), "RAG_SERVICE_URL": ""})
    assert found["loaded"] == [], (args, found)


def test_tree_loads_no_model(corpus_dir: Path) -> None:
    found = _run(["tree", str(corpus_dir / "kettle.md")], {})
    assert found["exit"] == 0 and found["output"].startswith("0: Kettle manual")
    assert found["loaded"] == []


def test_version_prints_the_package_version() -> None:
    from importlib.metadata import version

    found = _run(["--version"], {})
    assert found["exit"] == 0 and found["output"] == f"rag {version('rag-assets')}\n"


def test_lancedb_uri_matches_the_vector_store_resource(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rag_assets.serving.catalogue_reads import DEFAULT_TABLE, lancedb_uri
    from resources.vectors import VectorStoreResource

    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("RAG_LANCEDB_URI", raising=False)
    assert lancedb_uri() == VectorStoreResource().resolved_uri() == str(tmp_path / "lancedb")
    monkeypatch.setenv("RAG_LANCEDB_URI", "s3://bucket/lancedb")
    assert lancedb_uri() == VectorStoreResource().resolved_uri()
    assert VectorStoreResource().table_name == DEFAULT_TABLE
