"""`rag tree` on each format, as a user runs it."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from rag_assets.cli import app

runner = CliRunner()


def test_tree_outline_for_markdown(corpus_dir: Path) -> None:
    result = runner.invoke(app, ["tree", str(corpus_dir / "kettle.md")])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "0: Kettle manual"
    assert "  1: Read this manual before first use." in lines
    assert "  2: Filling" in lines
    assert "      4: at least 0.5 litres" in lines  # list item under its introducing paragraph


def test_tree_json_for_every_format(corpus_dir: Path) -> None:
    for name in ("kettle.md", "pond.html", "pass.txt", "phone.json"):
        result = runner.invoke(app, ["tree", str(corpus_dir / name), "--json"])
        assert result.exit_code == 0, (name, result.output)
        doc = json.loads(result.stdout)
        assert doc["nodes"][0] == {
            "node_id": 0,
            "parent_id": None,
            "kind": "structure",
            "depth": 0,
            "text": doc["title"],
        }
        assert any(n["kind"] == "content" for n in doc["nodes"])
    pages = json.loads(runner.invoke(app, ["tree", str(corpus_dir / "pages.jsonl"), "--json"]).stdout)
    assert [p["title"] for p in pages] == ["Lighthouses", "Tide"]


def test_tree_reports_a_rejected_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"\xff\xfe\x00binary")
    result = runner.invoke(app, ["tree", str(bad)])
    assert result.exit_code == 1
    assert "binary file" in result.stderr


def test_run_then_search_end_to_end(tmp_path: Path, corpus_dir: Path) -> None:
    """`rag run` materializes the whole graph into a fresh DAGSTER_HOME; `rag search` answers."""
    import os
    import shutil
    import subprocess
    import sys

    from tests.conftest import REPO_ROOT

    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(REPO_ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    collections = tmp_path / "collections.yaml"
    collections.write_text(f"collections:\n  - name: tiny\n    path: {corpus_dir}\n")
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "RAG_COLLECTIONS": str(collections),
        "RAG_DATA_DIR": str(tmp_path / "data"),
    }
    rag = [sys.executable, "-m", "rag_assets.cli"]
    config = tmp_path / "run.yaml"
    config.write_text(
        "ops:\n  router_adapter:\n    config: {max_steps: 2, batch_size: 2}\n"
        "  passage_reranker:\n    config: {max_steps: 2, batch_size: 2}\n"
    )
    run = subprocess.run([*rag, "run", "--config", str(config)], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    printed = " ".join(run.stdout.split())  # rich wraps long lines at the terminal width
    assert "succeeded" in printed and "tiny" in printed and f"run config: {config}" in printed
    found = subprocess.run(
        [*rag, "search", "how hot for green tea", "-k", "2", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert found.returncode == 0, found.stderr[-3000:]
    hits = json.loads(found.stdout)
    assert hits[0]["doc_id"] == "tiny/kettle.md" and hits[0]["rank"] == 1
    assert "green tea | 80 C" in hits[0]["text"]
    bad = subprocess.run([*rag, "search", "x", "--mode", "fuzzy"], env=env, capture_output=True, text=True)
    assert bad.returncode == 2 and "--mode must be" in bad.stderr
    # --document: only that document's passages (by file name), in search and in ask
    for document, expected in (("kettle.md", "tiny/kettle.md"), ("pond", "tiny/pond.html")):
        only = subprocess.run(
            [*rag, "search", "how hot for green tea", "-k", "3", "--json", "--document", document],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert only.returncode == 0, only.stderr[-3000:]
        assert {hit["doc_id"] for hit in json.loads(only.stdout)} == {expected}
    for command in (["search", "tea"], ["ask", "how hot for green tea?"]):
        unknown = subprocess.run(
            [*rag, *command, "--document", "teapot.md"], env=env, capture_output=True, text=True, timeout=300
        )
        assert unknown.returncode != 0 and "no document 'teapot.md' in tiny" in " ".join(unknown.stderr.split())

    def ask_pass(*options: str) -> subprocess.CompletedProcess:
        """The pass question answered by rag-hybrid's quote (as JSON), with `options`."""
        question = "What does the pass statement do?"
        command = [*rag, "ask", question, *options, "-s", "rag-hybrid", "--form", "extractive", "--json"]
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)

    # by default: every document, since no card names an organisation; the note says so
    steered = ask_pass()
    assert steered.returncode == 0, steered.stderr[-3000:]
    assert len(json.loads(steered.stdout)["retrieved_doc_ids"]) > 1
    assert "searched every document (no card matched: no document card names an organisation or product)" in (
        " ".join(steered.stderr.split())
    )
    # --all-documents: no steer at all, so no note about where it searched
    unsteered = ask_pass("--all-documents")
    assert unsteered.returncode == 0, unsteered.stderr[-3000:]
    assert "searched every document" not in " ".join(unsteered.stderr.split())
    # --by-name: where no card matches, the documents the question names by file name ("pass" names pass.txt)
    named = ask_pass("--by-name")
    assert named.returncode == 0, named.stderr[-3000:]
    assert json.loads(named.stdout)["retrieved_doc_ids"] == ["tiny/pass.txt"]
    assert (
        "searched the documents the question names by file name (no card matched: no document card names an "
        "organisation or product): tiny/pass.txt"
    ) in " ".join(named.stderr.split())


def test_run_config_is_checked_before_anything_runs(tmp_path: Path) -> None:
    import os

    home = tmp_path / "home"
    for text, message in (
        ("ops:\n  answers:\n    config: {no_such_knob: 1}\n", "does not fit the job"),
        ("ops: [\n", "run config"),
        ("- a list\n", "expected a mapping"),
    ):
        config = tmp_path / "run.yaml"
        config.write_text(text)
        result = runner.invoke(app, ["run", "--config", str(config)], env={**os.environ, "DAGSTER_HOME": str(home)})
        assert result.exit_code == 2, result.output
        printed = " ".join(result.stderr.split())  # rich wraps long lines at the terminal width
        assert message in printed and str(config) in printed
        assert not (home / "storage").exists()  # nothing ran


def test_the_datasets_run_config_fits_the_main_job() -> None:
    import dagster as dg
    import yaml

    from rag_assets.definitions import defs
    from tests.conftest import REPO_ROOT

    config = yaml.safe_load((REPO_ROOT / "run.datasets.yaml").read_text())
    dg.validate_run_config(defs.resolve_job_def("main_job"), config)
    assert config["ops"]["routing_actions"]["config"]["teacher"] == "oracle"


def test_a_failed_run_names_its_failed_step(tmp_path: Path, corpus_dir: Path) -> None:
    """A step that fails (the index folder is a file) ends the run with exit 1 and one line naming
    the step and its error, not an internal error."""
    import os
    import shutil
    import subprocess
    import sys

    from tests.conftest import REPO_ROOT

    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(REPO_ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    collections = tmp_path / "collections.yaml"
    collections.write_text(f"collections:\n  - name: tiny\n    path: {corpus_dir}\n")
    not_a_folder = tmp_path / "lancedb"
    not_a_folder.write_text("a file where the index folder should be")
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "RAG_COLLECTIONS": str(collections),
        "RAG_DATA_DIR": str(tmp_path / "data"),
        "RAG_LANCEDB_URI": str(not_a_folder),
    }
    run = subprocess.run(
        [sys.executable, "-m", "rag_assets.cli", "index"], env=env, capture_output=True, text=True, timeout=900
    )
    printed = " ".join(run.stderr.split())
    assert run.returncode == 1, run.stdout[-2000:] + run.stderr[-2000:]
    assert "step passage_index failed:" in printed and "internal error" not in printed
    assert "1 of 1 collection run(s) failed: tiny" in printed


def test_tree_json_gives_pages_for_a_pdf_only() -> None:
    """A real PDF (haystack's sample, tests/data/documents) carries the page of every node; the
    Markdown tree above carries none."""
    pdf = Path(__file__).resolve().parents[1] / "data" / "documents" / "sample_pdf_1.pdf"
    result = runner.invoke(app, ["tree", str(pdf), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["nodes"][0]["pages"] == "pp. 1-4"  # the title spans the whole document
    assert doc["nodes"][1] == {
        "node_id": 1,
        "parent_id": 0,
        "kind": "structure",
        "depth": 1,
        "text": "History and standardization",
        "pages": "p. 1",
    }
