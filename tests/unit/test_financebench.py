"""FinanceBench as a question set: gold pages from its evidence records, page hit on cited nodes,
both kept through the catalogue (an older catalogue without them stays readable)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from rag_assets.core.corpus.question_sets import Question, load_questions
from rag_assets.core.evaluation.evidence import EvidenceRow
from rag_assets.core.evaluation.scoring import cited_pages, evidence_scores, page_hit
from rag_assets.core.store.collections import replace_collection
from rag_assets.core.store.evidence import load_evidence, store_evidence
from rag_assets.core.store.question_table import load_question_rows, questions_table

pytestmark = pytest.mark.unit

RECORD = {
    "qid": "financebench_id_00001",
    "question": "What is the FY2018 capital expenditure amount (in USD millions) for 3M?",
    "answers": ["$1577.00"],
    "company": "3M",
    "doc_name": "3M_2018_10K",
    "doc_period": 2018,
    "evidences": [
        {"doc_name": "3M_2018_10K", "page": 60, "text": "Purchases of property, plant and equipment (PP&E) (1,577)"},
        {"doc_name": "3M_2018_10K", "page": 59, "text": "Cash Flows from Investing Activities"},
        {"doc_name": "3M_2017_10K", "page": 12, "text": "a page of another filing"},
    ],
}


def test_financebench_record_gives_gold_document_pages_and_texts(tmp_path: Path) -> None:
    path = tmp_path / "questions_dev.jsonl"
    path.write_text(json.dumps(RECORD) + "\n")
    (question,), problems = load_questions(str(path))
    assert problems == []
    assert question.gold_doc == "3M_2018_10K"
    assert question.gold_pages == (59, 60)  # the other filing's page is not a page of this one
    assert question.evidences[0] == "Purchases of property, plant and equipment (PP&E) (1,577)"
    assert question.answers == ("$1577.00",)


def test_financebench_bad_page_is_named(tmp_path: Path) -> None:
    path = tmp_path / "questions_dev.jsonl"
    bad = {**RECORD, "evidences": [{"doc_name": "3M_2018_10K", "page": "sixty", "text": "x"}]}
    path.write_text(json.dumps(bad) + "\n")
    questions, problems = load_questions(str(path))
    assert questions == []
    assert problems == [f"{path} line 1: evidence page 'sixty' is not a 1-based page number"]


@pytest.mark.parametrize(
    ("cited", "hit"),
    [
        ([("financebench/3M_2018_10K.pdf", "p. 60")], 1.0),
        ([("financebench/3M_2018_10K.pdf", "pp. 58-59")], 1.0),  # a node over two pages
        ([("financebench/3M_2018_10K.pdf", "p. 61"), ("financebench/3M_2017_10K.pdf", "p. 60")], 0.0),
        ([("financebench/3M_2018_10K.pdf", "")], 0.0),
        ([], 0.0),
    ],
)
def test_page_hit(cited: list[tuple[str, str]], hit: float) -> None:
    assert page_hit(cited, "3M_2018_10K", (59, 60)) == hit


def test_page_hit_needs_gold_pages() -> None:
    question = Question("q", "capex?", answers=("$1577.00",), gold_doc="3M_2018_10K")
    scores = evidence_scores(
        "capex was 1,577", ["capex was 1,577"], [("3M",)], question, [("x/3M_2018_10K.pdf", "p. 1")]
    )
    assert "page_hit" not in scores
    assert cited_pages("pp. 3-5") == range(3, 6) and cited_pages("") == range(0)


def test_gold_pages_and_page_hit_through_the_catalogue(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "catalogue.duckdb"))
    # a catalogue written before gold pages and page hit: tables without those columns
    con.execute(
        "CREATE TABLE questions (collection VARCHAR NOT NULL, qid VARCHAR NOT NULL, query VARCHAR NOT NULL, "
        "answers VARCHAR[] NOT NULL, evidences VARCHAR[] NOT NULL, section_path VARCHAR[] NOT NULL, "
        "gold_doc VARCHAR NOT NULL, not_answerable BOOLEAN NOT NULL, split VARCHAR NOT NULL)"
    )
    con.execute("INSERT INTO questions VALUES ('old', 'q0', 'what?', [], [], [], 'doc', false, 'dev')")
    assert load_question_rows(con, "old")[0].gold_pages == ()
    question = Question("q1", "capex?", ("$1577.00",), (), (), "3M_2018_10K", False, "dev", (59, 60))
    replace_collection(con, "financebench", {"questions": questions_table("financebench", [question])})
    assert load_question_rows(con, "financebench") == [question]
    assert load_question_rows(con, "old")[0].gold_pages == ()

    con.execute(
        "CREATE TABLE evidence_evaluation (collection VARCHAR NOT NULL, run_id VARCHAR NOT NULL, "
        "created_at TIMESTAMP NOT NULL, position INTEGER NOT NULL, strategy VARCHAR NOT NULL, router VARCHAR NOT NULL, "
        "filled BOOLEAN NOT NULL, qid VARCHAR NOT NULL, passage_hit DOUBLE, evidence_recall DOUBLE, "
        "section_hit DOUBLE, words INTEGER NOT NULL, seconds DOUBLE NOT NULL)"
    )
    con.execute(
        "INSERT INTO evidence_evaluation VALUES ('old', 'r', now(), 0, 'rag-hybrid', '', false, 'q0', 1, NULL, NULL, 9, 0.1)"
    )
    assert load_evidence(con, "old")[0].metrics == {"passage_hit": 1.0}
    row = EvidenceRow("rag-hybrid", "", False, "q1", {"passage_hit": 0.0, "page_hit": 1.0}, 120, 0.5)
    store_evidence(con, "financebench", [row], run_id="run", created_at=datetime(2026, 1, 1))
    assert load_evidence(con, "financebench") == [row]


def test_datasets_config_reads_financebench_with_gold_pages(
    shared_datasets: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rag_assets.settings import load_collections

    monkeypatch.setenv("RAG_DATA", str(shared_datasets))
    root = Path(__file__).resolve().parents[2]
    (spec,) = [s for s in load_collections(root / "collections.datasets.yaml") if s.name == "financebench"]
    assert spec.format == "pdf" and spec.path.endswith("financebench/pdfs")
    questions, problems = load_questions(spec.questions)
    assert problems == [] and len(questions) == 78
    assert all(q.gold_doc and q.gold_pages for q in questions)
    assert all((Path(spec.path) / f"{q.gold_doc}.pdf").exists() for q in questions)
