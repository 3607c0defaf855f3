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
    "question_type": "metrics-generated",
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
    assert question.question_type == "metrics-generated"


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


def test_reader_rows_score_page_hit_and_a_first_citation_on_a_gold_page(tmp_path: Path) -> None:
    from rag_assets.core.corpus.blocks import BlockKind, new_block
    from rag_assets.core.corpus.sources import SourceDocument
    from rag_assets.core.corpus.tree import build_tree
    from rag_assets.core.evaluation.scoring import first_citation_gold, score_answers
    from rag_assets.core.store.tree_tables import node_pages, nodes_table

    # a question whose gold text no cited node holds: only the pages tell the first citation is gold
    question = Question("q1", "capex?", ("$1577.00",), (), (), "3M_2018_10K", False, "dev", (60,))
    assert first_citation_gold(["PP&E purchases"], ["3M"], question, [("fb/3M_2018_10K.pdf", "p. 60")]) == 1.0
    assert first_citation_gold(["PP&E purchases"], ["3M"], question, [("fb/3M_2018_10K.pdf", "p. 61")]) == 0.0
    # without pages only the short answer's text can tell, and the node does not hold "$1577.00"
    assert first_citation_gold(["PP&E purchases"], ["3M"], question) == 0.0

    blocks = [
        new_block(BlockKind.PARAGRAPH, "Capital spending rose.", 0, 59, 59),
        new_block(BlockKind.PARAGRAPH, "PP&E 1,577", 0, 60, 60),
    ]
    tree = build_tree("3M 2018 10-K", blocks)
    doc = SourceDocument("fb/3M_2018_10K.pdf", "financebench", "3M_2018_10K.pdf", "pdf", "3M 2018 10-K", "h", 1, "")
    con = duckdb.connect(str(tmp_path / "catalogue.duckdb"))
    replace_collection(con, "financebench", {"document_nodes": nodes_table([(doc, tree)])})
    pages = node_pages(con, "financebench", [doc.doc_id])
    assert pages[(doc.doc_id, 1)] == "p. 59" and pages[(doc.doc_id, 2)] == "p. 60"

    class Row:  # an answer citing node 2 first, then node 1
        qid, strategy, grid, grid_value, answer, evidence = "q1", "rdr2", "", -1, "1,577", "PP&E 1,577"
        evidence_words, router_prompt_tokens, router_output_tokens, engine_calls, seconds = 2, 0, 0, 1, 0.1
        cited_texts, cited_heading_paths = ("PP&E 1,577", "Capital spending rose."), ("3M 2018 10-K",) * 2
        cited_doc_ids, cited_node_ids = (doc.doc_id,) * 2, (2, 1)

    [scored] = score_answers(
        [Row()], {"q1": question}, lambda r: [(d, pages[(d, n)]) for d, n in zip(r.cited_doc_ids, r.cited_node_ids)]
    )
    assert scored.metrics["page_hit"] == 1.0 and scored.metrics["first_cite_gold"] == 1.0
    [unpaged] = score_answers([Row()], {"q1": question})
    assert unpaged.metrics["page_hit"] == 0.0  # pages unknown: no cited node is shown on a gold page


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
    question = Question(
        "q1", "capex?", ("$1577.00",), (), (), "3M_2018_10K", False, "dev", (59, 60), "metrics-generated"
    )
    replace_collection(con, "financebench", {"questions": questions_table("financebench", [question])})
    assert load_question_rows(con, "financebench") == [question]
    assert load_question_rows(con, "financebench")[0].question_type == "metrics-generated"
    assert load_question_rows(con, "old")[0].gold_pages == ()
    assert load_question_rows(con, "old")[0].question_type == ""

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
    from rag_assets.core.settings import load_collections

    monkeypatch.setenv("RAG_DATA", str(shared_datasets))
    root = Path(__file__).resolve().parents[2]
    (spec,) = [s for s in load_collections(root / "collections.datasets.yaml") if s.name == "financebench"]
    assert spec.format == "pdf" and spec.path.endswith("financebench/pdfs")
    questions, problems = load_questions(spec.questions)
    assert problems == [] and len(questions) == 78
    assert all(q.gold_doc and q.gold_pages for q in questions)
    assert all((Path(spec.path) / f"{q.gold_doc}.pdf").exists() for q in questions)
