"""`rag token create` refuses a collection the catalogue does not hold, naming the known ones; an
empty catalogue (nothing indexed yet) creates the token and says the names went unchecked."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rag_assets.cli import app
from tests.conftest import write_corpus
from tests.unit.service_catalogue import build_catalogue

pytestmark = pytest.mark.unit
runner = CliRunner()


def _create(data: Path, *collections: str) -> object:
    args = ["token", "create", "ops"] + [a for c in collections for a in ("--collection", c)]
    return runner.invoke(app, args, prog_name="rag", env={"RAG_DATA_DIR": str(data)})


def test_a_token_for_an_unknown_collection_is_refused_naming_the_known_ones(tmp_path: Path) -> None:
    data = tmp_path / "data"
    build_catalogue(data, write_corpus(tmp_path / "corpus"), with_tokens=False)
    refused = _create(data, "tiny", "tinny")
    assert refused.exit_code == 2 and refused.stdout == ""
    assert refused.stderr.splitlines() == [
        "error: no collection 'tinny' in the catalogue: it has tiny (or '*' for every collection)"
    ]
    listed = runner.invoke(app, ["token", "list"], prog_name="rag", env={"RAG_DATA_DIR": str(data)})
    assert "ops" not in listed.stdout  # nothing was created
    for collections in (["tiny"], ["*"]):
        created = _create(data, *collections)
        assert created.exit_code == 0 and created.stdout.startswith("rag_"), created.stderr
        assert runner.invoke(app, ["token", "revoke", "ops"], env={"RAG_DATA_DIR": str(data)}).exit_code == 0


def test_before_anything_is_indexed_the_token_is_created_and_the_names_said_unchecked(tmp_path: Path) -> None:
    created = _create(tmp_path / "data", "handbook")
    assert created.exit_code == 0 and created.stdout.startswith("rag_"), created.stderr
    assert "no collection yet, so handbook could not be checked" in created.stderr
