"""`rag trace` of an answer whose sources were edited, re-indexed and deleted since, as a user runs
it: `rag index` and `rag trace` in subprocesses over a real catalogue. The trace prints the text
as it was cited beside the text now, and each source's state in words."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from rag_assets.core.answering.types import Citation, StrategySpec
from rag_assets.core.lineage import answer_versions, build_record, store_answers
from rag_assets.core.store.publication import pin_index
from rag_assets.core.store.tree_tables import load_trees
from tests.answer_outcomes import answer_outcome
from tests.conftest import REPO_ROOT
from tests.integration.served_project import cli_env

CITED = "Press the switch. The light turns on."
EDITED = "Press the switch. The blue light turns on."


def _rag(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rag_assets.cli", *args],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )


def _store_answer(catalogue: Path) -> str:
    """An answer citing the kettle's switch paragraph and the pond's first paragraph, with the
    versions `rag ask` records."""
    with duckdb.connect(str(catalogue)) as con:
        trees = load_trees(con, "tiny", ["tiny/kettle.md", "tiny/pond.html"])
        [switch] = [n for n in trees["tiny/kettle.md"][0] if n.text == CITED]
        pond = next(n for n in trees["tiny/pond.html"][0] if n.kind == "content")
        citations = [
            Citation(doc, n.node_id, n.heading_path, n.text, n.span_start, n.span_end)
            for doc, n in (("tiny/kettle.md", switch), ("tiny/pond.html", pond))
        ]
        outcome = answer_outcome(
            "What happens when I press the switch?", "The light turns on.", CITED, citations=citations
        )
        versions = answer_versions(
            con,
            "tiny",
            outcome,
            index=pin_index(con, "tiny").index_info(),
            adapter_id=None,
            router_model="none",
            reader_model="SmolLM2",
            embedder="all-MiniLM-L6-v2",
        )
        record = build_record(
            outcome, StrategySpec(name="rag-hybrid", kind="rag"), collection="tiny", source="cli", versions=versions
        )
        store_answers(con, [record])
    return record.answer_id


def _trace(env: dict[str, str], answer_id: str) -> tuple[subprocess.CompletedProcess, dict[str, dict]]:
    human = _rag(env, "trace", answer_id)
    as_json = _rag(env, "trace", answer_id, "--json")
    assert as_json.returncode == human.returncode, as_json.stderr
    return human, {s["doc_id"]: s for s in json.loads(as_json.stdout)["sources"]}


@pytest.mark.timeout(1800)
def test_trace_after_an_edit_a_reindex_and_a_deletion(tmp_path: Path, corpus_dir: Path) -> None:
    env = cli_env(tmp_path, corpus_dir)
    indexed = _rag(env, "index")
    assert indexed.returncode == 0, indexed.stdout + indexed.stderr
    answer_id = _store_answer(tmp_path / "data" / "catalogue.duckdb")

    fresh, sources = _trace(env, answer_id)
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    assert sources["tiny/kettle.md"]["state"] == "unchanged" and f"cited: {CITED}" in fresh.stdout

    # an edited paragraph, after an inserted one: the cited offsets now point at other text
    kettle = corpus_dir / "kettle.md"
    kettle.write_text(kettle.read_text().replace(CITED, f"Check the cord first.\n\n{EDITED}"))
    edited, sources = _trace(env, answer_id)
    assert edited.returncode == 3
    assert sources["tiny/kettle.md"]["state"] == "changed on disk, not re-indexed"
    assert sources["tiny/kettle.md"]["current_text"] == CITED  # the catalogue still holds the cited text
    assert "tiny/kettle.md (" in edited.stderr and "changed on disk, not re-indexed" in edited.stderr

    reindexed = _rag(env, "index")
    assert reindexed.returncode == 0, reindexed.stdout + reindexed.stderr
    assert "│ tiny/kettle.md │ changed │" in reindexed.stdout
    after, sources = _trace(env, answer_id)
    assert after.returncode == 3
    kettle_source = sources["tiny/kettle.md"]
    assert kettle_source["state"] == "changed and re-indexed" and kettle_source["recorded_text"] == CITED
    assert kettle_source["current_text"] == EDITED and kettle_source["current_node_id"] != kettle_source["node_id"]
    assert f"cited: {CITED}" in after.stdout and f"now:   {EDITED}" in after.stdout
    assert "changed and re-indexed" in after.stdout and "not re-indexed" not in after.stdout
    assert sources["tiny/pond.html"]["state"] == "unchanged"

    (corpus_dir / "pond.html").unlink()
    _, sources = _trace(env, answer_id)
    assert sources["tiny/pond.html"]["state"] == "deleted on disk, not re-indexed"
    assert _rag(env, "index").returncode == 0
    gone, sources = _trace(env, answer_id)
    assert sources["tiny/pond.html"]["state"] == "deleted" and "deleted" in gone.stdout
    assert f"cited: {sources['tiny/pond.html']['recorded_text']}" in gone.stdout
