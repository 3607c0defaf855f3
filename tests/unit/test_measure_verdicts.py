"""Yes/no verdicts computed from cited cells (core/answering/measure_verdicts.py) on a report
written by hand as Markdown and read by the project's own parser and tree builder; every figure
expected is worked out by hand in the comments."""

from __future__ import annotations

import pytest

from rag_assets.core.answering.measure_verdicts import MeasureQuestion, measure_question, measure_verdict
from rag_assets.core.corpus.parsers.markdown import parse_markdown
from rag_assets.core.corpus.tree import build_tree

pytestmark = pytest.mark.unit

REPORT = """# ACME Corp annual report

## Consolidated Statements of Income

(In millions)

| | 2022 | 2021 |
|---|---|---|
| Net sales | 9,400 | 8,100 |
| Cost of sales | 6,000 | 5,200 |
| Operating income | 1,100 | 1,000 |

## Consolidated Balance Sheets

(In millions)

| | December 31, 2022 | December 31, 2021 |
|---|---|---|
| Total current assets | 1,200 | 1,000 |
| Total current liabilities | 800 | 1,500 |
"""
DOC = "acme/report.md"


@pytest.fixture(scope="module")
def trees() -> dict:
    return {DOC: build_tree("ACME", parse_markdown(REPORT)).nodes}


def test_what_a_measure_question_asks() -> None:
    assert measure_question("Does ACME have an improving operating margin profile as of FY2022?") == MeasureQuestion(
        "operating margin", 2022, 2021
    )
    assert measure_question(
        "Does ACME have positive working capital based on FY2022 data? If working capital is not useful, say why."
    ) == MeasureQuestion("working capital", 2022, None)
    assert measure_question("What drove operating margin change as of FY2022 for ACME?") is None  # not a yes/no
    assert measure_question("Does ACME have an improving operating margin profile?") is None  # no year


def test_a_declining_margin_is_a_no_with_its_working_cited(trees: dict) -> None:
    # operating margin: 1,100 / 9,400 = 11.70% in 2022, 1,000 / 8,100 = 12.35% in 2021: -0.64 points
    answer, verdict = measure_verdict(
        "Does ACME have an improving operating margin profile as of FY2022?", [], trees, [DOC]
    )
    assert verdict == "No"
    assert answer.answer.startswith("No: operating margin at FY2022 less operating margin at FY2021 is -0.6%")
    assert (
        "Operating income (2022) 1,100 million [1]" in answer.answer
        and "Net sales (2021) 8,100 million [2]" in answer.answer
    )
    assert [c.text.split(" | ")[0] for c in answer.citations[:2]] == ["Operating income", "Net sales"]


def test_an_improving_gross_margin_and_a_sign_of_working_capital(trees: dict) -> None:
    # gross margin: (9,400 - 6,000) / 9,400 = 36.17% in 2022, (8,100 - 5,200) / 8,100 = 35.80% in 2021
    gross, verdict = measure_verdict("Does ACME have an improving gross margin profile as of FY2022?", [], trees, [DOC])
    assert verdict == "Yes" and gross.answer.startswith(
        "Yes: gross margin at FY2022 less gross margin at FY2021 is 0.4%"
    )
    # working capital: 1,200 - 800 = 400 at 2022; 1,000 - 1,500 = -500 at 2021
    now, yes = measure_verdict("Does ACME have positive working capital based on FY2022 data?", [], trees, [DOC])
    assert yes == "Yes" and now.answer.startswith("Yes: working capital at FY2022 is 400.00 million")
    then, no = measure_verdict("Did ACME have positive working capital at the end of FY2021?", [], trees, [DOC])
    assert no == "No" and then.answer.startswith("No: working capital at FY2021 is -500.00 million")


def test_no_verdict_where_a_cell_is_missing(trees: dict) -> None:
    # no cash flow statement: free cash flow has no cells, so the reader's verdict stands
    assert measure_verdict("Does ACME have positive free cash flow in FY2022?", [], trees, [DOC]) is None
    assert (
        measure_verdict("Does ACME have an improving operating margin profile as of FY2019?", [], trees, [DOC]) is None
    )


def test_a_measure_verdict_says_its_yes_or_no_is_computed() -> None:
    from rag_assets.core.answering.figure_answers import FIGURE
    from rag_assets.core.answering.types import AnswerOutcome
    from rag_assets.serving.asking import form_note

    outcome = AnswerOutcome("q?", "No: operating margin ...", "", 0, [], [], [], 0, 0, 0, 0, 1, 0.1, 0, 0)
    outcome.answer_form, outcome.attribution, outcome.verdict = "extractive", FIGURE, "No"
    assert form_note(outcome) == "extractive: a yes or no computed from the cited cells, with its working"
