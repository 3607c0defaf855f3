"""Which documents hand-written questions name by hand-written cards (core/index/card_matching.py)."""

from __future__ import annotations

import pytest

from rag_assets.core.corpus.document_cards import DocumentCard
from rag_assets.core.index.card_matching import match_cards, question_period

CARDS = [
    DocumentCard("f/a.pdf", organisation="AMCOR PLC", kind="10-K", fiscal_year=2023, date="2023-06-30"),
    DocumentCard("f/b.pdf", organisation="AMCOR PLC", kind="10-Q", date="2022-12-31"),
    DocumentCard("f/c.pdf", organisation="Amcor", kind="earnings release", fiscal_year=2023),
    DocumentCard("f/d.pdf", organisation="AMCOR PLC", kind="8-K", date="2022-07-01"),
    DocumentCard("f/e.pdf", organisation="ADOBE SYSTEMS INCORPORATED", kind="10-K", fiscal_year=2015),
    DocumentCard("f/f.pdf", organisation="ADOBE INC.", kind="10-K", fiscal_year=2022),
    DocumentCard("f/g.pdf", organisation="American Express Company", kind="10-K", fiscal_year=2022),
    DocumentCard("f/h.pdf", organisation="AMERICAN WATER WORKS COMPANY, INC.", kind="10-K", fiscal_year=2022),
    DocumentCard("f/i.pdf", organisation="ADVANCED MICRO DEVICES, INC.", kind="10-K", fiscal_year=2015),
    DocumentCard("f/j.pdf", organisation="BEST BUY CO., INC.", kind="10-K", fiscal_year=2023, date="2023-01-28"),
    DocumentCard("f/k.pdf", organisation="BEST BUY CO., INC.", kind="10-Q", date="2023-07-29"),
    DocumentCard("f/l.pdf", organisation="MGM R ESORTS I NTERNATIONAL", kind="10-K", fiscal_year=2018),
    DocumentCard("f/m.pdf", organisation="MGM Resorts International", kind="10-K", fiscal_year=2020),
    DocumentCard("f/n.pdf", title="Manual", product="Aquila X2 Robot Vacuum", model="RV-2000X"),
]


@pytest.mark.parametrize(
    ("question", "named"),
    [
        # a company and a fiscal year: that year's documents of the company
        ("What was AMCOR's adjusted EBITDA for FY 2023?", ["f/a.pdf", "f/b.pdf", "f/c.pdf"]),
        # the 10-Q of December 2022 is Amcor's Q2 of FY2023 (its fiscal year ends in June)
        ("What is AMCOR's restructuring liability as of Q2 of FY2023?", ["f/b.pdf"]),
        # a form narrows the company's documents
        ("What was the key agenda of AMCOR's 8-K filing dated 1st July 2022?", ["f/d.pdf"]),
        # a company and no period: all of its documents; its renamed self included
        ("What industry does Adobe operate in?", ["f/e.pdf", "f/f.pdf"]),
        ("What is the FY2015 operating cash flow ratio for Adobe?", ["f/e.pdf"]),
        # a year the company has no document of: all of them
        ("What production rate changes is Adobe forecasting for FY2030?", ["f/e.pdf", "f/f.pdf"]),
        # the name with more of its words held wins ("American" alone names both)
        ("How much has the effective tax rate of American Express changed in 2022?", ["f/g.pdf"]),
        ("Does American Water Works have positive working capital based on FY2022 data?", ["f/h.pdf"]),
        # an acronym of the name's initials, a first word in capitals, a small-capitals cover
        ("What was AMD's revenue in FY2015?", ["f/i.pdf"]),
        ("What is the year end FY2018 accounts payable for MGM Resorts?", ["f/l.pdf"]),
        # Best Buy's fiscal year ends in January: July 2023 lies in Q2 of FY2024
        ("What were Best Buy's sales in Q2 FY2024?", ["f/k.pdf"]),
        # a product and its model
        ("How do I empty the dust bin of the Aquila X2?", ["f/n.pdf"]),
    ],
)
def test_a_question_names_its_documents(question: str, named: list[str]) -> None:
    assert match_cards(CARDS, question).doc_ids == named


@pytest.mark.parametrize(
    "question",
    [
        "Which region had the highest growth during FY2022?",  # a period but no company
        "Give the best answer you can about the dividends.",  # "best" in lower case is no Best Buy
        "What is the capital of France?",
    ],
)
def test_a_question_naming_no_organisation_restricts_nothing(question: str) -> None:
    match = match_cards(CARDS, question)
    assert match.doc_ids == [] and "names no organisation" in match.reason


def test_the_reason_says_what_was_matched() -> None:
    assert match_cards(CARDS, "AMCOR's restructuring liability as of Q2 of FY2023").reason == (
        "names AMCOR PLC, Amcor; of FY2023; Q2"
    )


@pytest.mark.parametrize(
    ("question", "years", "quarter"),
    [
        ("FY2018 - FY2020 average", {2018, 2020}, None),
        ("between FY20 and FY21", {2020, 2021}, None),
        ("As of FY2023Q1, why", {2023}, 1),
        ("the biggest drop in Q22023 year over year", {2023}, 2),
        ("As of Q2'2023, is Pfizer", {2023}, 2),
        ("in the second quarter of 2022", {2022}, 2),
    ],
)
def test_question_periods(question: str, years: set[int], quarter: int | None) -> None:
    period = question_period(question)
    assert (set(period.years), period.quarter) == (years, quarter)


def test_the_steer_asks_the_cards_first_then_with_by_name_the_file_names(tmp_path) -> None:
    import duckdb

    from rag_assets.core.answering.policy.sessions import document_steer
    from rag_assets.core.corpus.sources import SourceDocument
    from rag_assets.core.store.card_tables import cards_table
    from rag_assets.core.store.collections import replace_collection
    from rag_assets.core.store.document_tables import documents_table

    files = ["scan_0001.pdf", "scan_0002.pdf", "ADOBE_2022_10K.pdf"]
    docs = [SourceDocument(f"f/{name}", "f", name, "pdf", name, "h", 1, "") for name in files]
    with duckdb.connect(str(tmp_path / "catalogue.duckdb")) as con:
        replace_collection(con, "f", {"source_documents": documents_table(docs)})
        # no cards: by default nothing is restricted; with by-name, the file names as before
        assert document_steer(con, ["f"]).documents_for("Adobe's FY2022 revenue?") is None
        assert document_steer(con, ["f"]).note("Adobe's FY2022 revenue?") == (
            "searched every document (no card matched: no document card names an organisation or product)"
        )
        by_name = document_steer(con, ["f"], "cards+names")
        assert by_name.documents_for("Adobe's FY2022 revenue?") == ["f/ADOBE_2022_10K.pdf"]
        assert by_name.note("Adobe's FY2022 revenue?") == (
            "searched the documents the question names by file name (no card matched: no document card names "
            "an organisation or product): f/ADOBE_2022_10K.pdf"
        )
        assert document_steer(con, ["f"], "off") is None
        with pytest.raises(ValueError, match="unknown document steer 'names'"):
            document_steer(con, ["f"], "names")
        cards = [
            DocumentCard("f/scan_0001.pdf", organisation="AMCOR PLC", kind="10-K", fiscal_year=2023),
            DocumentCard("f/scan_0002.pdf", organisation="AMCOR PLC", kind="10-K", fiscal_year=2022),
            DocumentCard("f/ADOBE_2022_10K.pdf", organisation="ADOBE INC.", kind="10-K", fiscal_year=2022),
        ]
        replace_collection(con, "f", {"document_cards": cards_table("f", cards)})
        steer = document_steer(con, ["f"])
        # the cards name what the file names cannot
        assert steer.documents_for("What was AMCOR's quick ratio in FY2023?") == ["f/scan_0001.pdf"]
        assert steer.note("What was AMCOR's quick ratio in FY2023?") == (
            "searched the documents whose cards the question names (names AMCOR PLC; of FY2023): f/scan_0001.pdf"
        )
        # a question naming no card's organisation: every document, and the note says why
        assert steer.documents_for("What is a quick ratio?") is None
        assert steer.note("What is a quick ratio?") == (
            "searched every document (no card matched: the question names no organisation or product on them)"
        )
