"""`document_cards` materialized on the tiny project with an owner's cards.yaml, its check, and
`rag documents`; and cards read from real FinanceBench filings' first pages."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from typer.testing import CliRunner

from rag_assets.cli import app
from rag_assets.core.corpus.first_pages import pdf_card
from rag_assets.definitions import ALL_ASSETS, ALL_CHECKS
from tests.conftest import tiny_project

SIDECAR = """\
kettle.md:            # by the file's path inside the collection folder
  organisation: Acme Kettles
  kind: manual
  model: K-17
tiny/pond.html:       # by doc id
  fiscal_year: 2024
tiny/teapot.md:       # names no document: reported, not fatal
  title: Teapot
"""


def test_cards_are_materialized_with_the_owners_overrides(
    tmp_path: Path, corpus_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (corpus_dir / "cards.yaml").write_text(SIDECAR, encoding="utf-8")
    # the cards steps load no model: the checkpoint path is never read
    project = tiny_project(tmp_path, corpus_dir, tmp_path / "no-model", "")
    result = dg.materialize(
        [*ALL_ASSETS, *ALL_CHECKS],
        resources=project["resources"],
        partition_key="tiny",
        instance=project["instance"],
        selection=dg.AssetSelection.assets("source_documents", "document_trees", "document_cards"),
    )
    assert result.success
    checks = {e.check_name: e for e in result.get_asset_check_evaluations()}
    assert checks["every_document_has_a_card"].passed, checks["every_document_has_a_card"].metadata
    meta = {m.asset_key.to_user_string(): m for m in result.get_asset_materialization_events()}
    cards_meta = meta["document_cards"].materialization.metadata
    assert cards_meta["documents"].value == 6  # the cards file is no document
    assert cards_meta["sidecar_unknown_entries"].value == ["tiny/teapot.md"]
    with duckdb.connect(str(project["db"])) as con:
        rows = {
            r[0]: r[1:]
            for r in con.execute(
                "SELECT doc_id, title, organisation, kind, model, fiscal_year, from_sidecar FROM document_cards"
            ).fetchall()
        }
        documents = {r[0] for r in con.execute("SELECT doc_id FROM source_documents").fetchall()}
    assert set(rows) == documents and "tiny/cards.yaml" not in documents
    assert rows["tiny/kettle.md"] == (
        "Kettle manual",
        "Acme Kettles",
        "manual",
        "K-17",
        None,
        ["organisation", "kind", "model"],
    )
    assert rows["tiny/pond.html"] == ("Garden pond", "", "", "", 2024, ["fiscal_year"])
    assert rows["tiny/pass.txt"][0] == 'The "pass" statement' and rows["tiny/pass.txt"][-1] == []

    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path))  # `rag documents` reads this project's catalogue
    listed = CliRunner().invoke(app, ["documents", "-c", "tiny", "--json"])
    assert listed.exit_code == 0, listed.output
    kettle = next(c for c in json.loads(listed.output) if c["doc_id"] == "tiny/kettle.md")
    assert kettle["organisation"] == "Acme Kettles" and kettle["from_sidecar"] == ["organisation", "kind", "model"]


# hand-labelled from each filing's cover page: (organisation, kind, fiscal year, quarter, date)
FILINGS = {
    "AMCOR_2023Q2_10Q.pdf": ("AMCOR PLC", "10-Q", None, None, "2022-12-31"),
    "NIKE_2018_10K.pdf": ("NIKE, Inc.", "10-K", 2018, None, "2018-05-31"),
    "FOOTLOCKER_2022_8K_dated-2022-05-20.pdf": ("Foot Locker, Inc.", "8-K", None, None, "2022-05-20"),
    "PEPSICO_2023Q1_EARNINGS.pdf": ("PepsiCo, Inc.", "earnings release", 2023, 1, "2023-03-25"),
}


@pytest.mark.parametrize("name", sorted(FILINGS))
def test_cards_of_real_filings(shared_datasets: Path, name: str) -> None:
    card = pdf_card(shared_datasets / "financebench" / "pdfs" / name, f"financebench/{name}")
    assert (card.organisation, card.kind, card.fiscal_year, card.quarter, card.date) == FILINGS[name]


def test_evidence_is_searched_where_the_cards_say_and_unsteered_beside_it(
    tmp_path: Path, corpus_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A question naming Acme Kettles is searched in the kettle manual only (its card's
    organisation): the answer in pass.txt is out of reach there, and found in every document."""
    (corpus_dir / "cards.yaml").write_text(SIDECAR, encoding="utf-8")
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))
    questions = [
        {"qid": "named", "question": "What does the pass statement do, Acme Kettles?", "answers": ["null operation"]},
        {"qid": "unnamed", "question": "What does the pass statement do?", "answers": ["null operation"]},
    ]
    jsonl = "".join(json.dumps({**q, "split": "dev"}) + "\n" for q in questions)
    project = tiny_project(tmp_path, corpus_dir, tmp_path / "no-model", jsonl)  # no LLM kind: no model read
    keys = ("source_documents", "document_trees", "document_cards", "passages", "passage_index", "questions")
    config = {"kinds": ["hit-nodes"], "every_document": ["tiny"], "rag_top_k": 3}
    result = dg.materialize(
        [*ALL_ASSETS, *ALL_CHECKS],
        resources=project["resources"],
        partition_key="tiny",
        instance=project["instance"],
        selection=dg.AssetSelection.assets(*keys, "evidence_evaluation"),
        run_config={"ops": {"evidence_evaluation": {"config": config}}},
    )
    assert result.success
    with duckdb.connect(str(project["db"])) as con:
        hits = {
            (strategy, qid): hit
            for strategy, qid, hit in con.execute(
                "SELECT strategy, qid, passage_hit FROM evidence_evaluation WHERE router = ''"
            ).fetchall()
        }
    assert hits[("rag-hybrid", "named")] == 0.0  # steered into the kettle manual, which does not say
    assert hits[("rag-hybrid (all documents)", "named")] == 1.0
    assert hits[("rag-hybrid", "unnamed")] == 1.0  # naming no card's organisation: every document
