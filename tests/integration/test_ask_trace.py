"""`rag ask` then `rag trace`, as a user runs them, against a graph materialized on the tiny corpus."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from rag_assets.cli import app
from tests.conftest import REPO_ROOT

runner = CliRunner()

# The stages `rag ask` reads (sources -> trees -> passages -> index): the `reindex` job, in a
# subprocess because the code location resolves its data folder when it is imported.
MATERIALIZE = """
import dagster as dg
from rag_assets.definitions import defs
from rag_assets.defs.partitions import register_collections
with dg.DagsterInstance.get() as instance:
    register_collections(instance, ["tiny"])
    result = defs.resolve_job_def("reindex").execute_in_process(partition_key="tiny", instance=instance)
    print("success" if result.success else "failed")
"""


@pytest.fixture
def materialized(tmp_path: Path, corpus_dir: Path, smollm2_checkpoint: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(REPO_ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    collections = tmp_path / "collections.yaml"
    collections.write_text(f"collections:\n  - name: tiny\n    path: {corpus_dir}\n")
    data = tmp_path / "data"
    env = {"DAGSTER_HOME": str(home), "RAG_COLLECTIONS": str(collections), "RAG_DATA_DIR": str(data)}
    run = subprocess.run(
        [sys.executable, "-c", MATERIALIZE],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=900,
        cwd=REPO_ROOT,
    )
    assert run.returncode == 0 and "success" in run.stdout, run.stdout[-3000:] + run.stderr[-3000:]
    # The converted base model of this test session, where the LLM resource looks for it.
    (data / "models").mkdir(parents=True, exist_ok=True)
    (data / "models" / smollm2_checkpoint.name).symlink_to(smollm2_checkpoint, target_is_directory=True)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return data


@pytest.mark.timeout(1800)  # materializing + two model answers on 2 shared CPU cores
def test_ask_then_trace_then_a_changed_source(materialized: Path) -> None:
    asked = runner.invoke(
        app, ["ask", "How hot should the water be for green tea?", "--strategy", "rag", "-k", "2", "--json"]
    )
    assert asked.exit_code == 0, asked.output
    row = json.loads(asked.stdout)
    # no answer_policy was materialized here: the collection answers with a quote, labelled with its form
    assert row["source"] == "cli" and row["strategy"] == "rag-hybrid-extractive" and row["collection"] == "tiny"
    assert row["cited_doc_ids"][0] == "tiny/kettle.md" and len(row["passage_ids"]) == 2
    versions = json.loads(row["versions"])
    assert versions["index"]["table"] == "passages" and versions["index"]["tag"].startswith("tiny-")
    assert "tiny/kettle.md" in versions["doc_hashes"] and versions["embedder"] and versions["reader_model"]

    routed = runner.invoke(app, ["ask", "What keeps the pond fish alive in winter?", "-k", "1", "--iters", "1"])
    assert routed.exit_code == 0, routed.output
    assert "answer id" in routed.stdout and "no trained encoder router" in routed.stderr
    routed_id = next(line.split()[2] for line in routed.stdout.splitlines() if line.startswith("answer id: "))

    traced = runner.invoke(app, ["trace", row["answer_id"], "--json"])
    assert traced.exit_code == 0, traced.output
    trace = json.loads(traced.stdout)
    assert not trace["changed"] and trace["sources"]
    for source in trace["sources"]:
        assert source["current_text"] == source["recorded_text"] and source["uri"]
    assert runner.invoke(app, ["trace", routed_id]).exit_code == 0
    human = runner.invoke(app, ["trace", row["answer_id"]])
    assert human.exit_code == 0 and "unchanged" in human.stdout and "Kettle manual" in human.stdout

    # contregen: its sub-query tree is stored with the answer and traced down to the source spans
    question = "How hot should the water be for green tea?"
    knobs = ["--depth", "1", "--branching", "1", "-k", "1", "--json"]
    tree = runner.invoke(app, ["ask", question, "-s", "contregen", *knobs])
    assert tree.exit_code == 0, tree.output
    tree_row = json.loads(tree.stdout)
    assert tree_row["strategy"] == "contregen" and json.loads(tree_row["structure"])["tree"]["query"].startswith(
        "How hot"
    )
    traced_tree = json.loads(runner.invoke(app, ["trace", tree_row["answer_id"], "--json"]).stdout)
    spans = [c for p in _leaf_passages(traced_tree["structure"]["tree"]) for c in p["citations"]]
    assert spans and all(c["current_text"] == c["text"] and not c["changed"] for c in spans)
    human_tree = runner.invoke(app, ["trace", tree_row["answer_id"]])
    assert human_tree.exit_code == 0 and "synthesis tree (contregen, depth 1" in human_tree.stdout

    with duckdb.connect(str(materialized / "catalogue.duckdb")) as con:
        con.execute(
            "UPDATE document_texts SET content_hash = 'edited', text = upper(text) WHERE doc_id = 'tiny/kettle.md'"
        )
    changed = runner.invoke(app, ["trace", row["answer_id"]])
    # the catalogue's text no longer matches the answer, nor the file on disk the catalogue
    assert changed.exit_code == 3 and "SOURCE CHANGED" in changed.stderr
    assert "changed on disk, not re-indexed" in changed.stdout

    unknown = runner.invoke(app, ["trace", "0123456789ab"])
    assert unknown.exit_code == 2 and "no answer with id" in unknown.stderr
    bad = runner.invoke(app, ["ask", "x", "--strategy", "magic"])
    assert bad.exit_code == 2 and "strategy must be one of" in bad.stderr
    empty = runner.invoke(app, ["ask", "  "])
    assert empty.exit_code == 2 and "the question is empty" in empty.stderr

    # every answer asked here is listed with its id, newest first, and filters narrow the list
    listed = runner.invoke(app, ["answers", "--json"])
    assert listed.exit_code == 0, listed.output
    ids = [a["answer_id"] for a in json.loads(listed.stdout)]
    assert ids == [tree_row["answer_id"], routed_id, row["answer_id"]]
    only_rag = json.loads(runner.invoke(app, ["answers", "-s", "rag-hybrid-extractive", "--json"]).stdout)
    assert [a["answer_id"] for a in only_rag] == [row["answer_id"]] and only_rag[0]["source"] == "cli"
    assert "pond" in runner.invoke(app, ["answers", "--contains", "pond"]).stdout


def test_cli_mistakes_are_one_line_and_bm25_search_loads_no_model(materialized: Path) -> None:
    for args, message in (
        (["search", "tea", "-c", "nosuch"], "unknown collection 'nosuch'"),
        (["search", "tea", "-c", "../../x"], "unknown collection '../../x'"),
        (["ask", "tea?", "-c", "nosuch"], "unknown collection 'nosuch'"),
        (["ask", ""], "the question is empty"),
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    probe = (
        "import sys, json; from typer.testing import CliRunner; from rag_assets.cli import app; "
        "r = CliRunner().invoke(app, ['search', 'green tea', '--mode', 'bm25', '-k', '1', '--json']); "
        "print(json.dumps([r.exit_code, r.stdout, [m for m in ('torch', 'sentence_transformers', 'lancedb', 'pandas') if m in sys.modules]]))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
    code, out, loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert code == 0 and json.loads(out)[0]["doc_id"] == "tiny/kettle.md"
    assert loaded == []


def _leaf_passages(node: dict) -> list[dict]:
    return list(node.get("passages", [])) + [p for child in node["children"] for p in _leaf_passages(child)]
