"""Figure answers (core/answering/figure_questions.py, figure_answers.py) on statements written by
hand as Markdown and read by the project's own parser and tree builder; expected figures worked
out by hand."""

from __future__ import annotations

import pytest

from rag_assets.core.answering.citations import node_citation
from rag_assets.core.answering.figure_answers import figure_answer, row_cells
from rag_assets.core.answering.figure_questions import Term, figure_question
from rag_assets.core.corpus.parsers.markdown import parse_markdown
from rag_assets.core.corpus.tree import build_tree

pytestmark = pytest.mark.unit

REPORT = """# ACME Corp annual report

## Consolidated Statements of Income

(In millions, except per share amounts)

| | 2022 | 2021 |
|---|---|---|
| Net sales | 9,400 | 8,100 |
| Operating income | 1,100 | 900 |

## Consolidated Balance Sheets

(In millions)

| | December 31, 2022 | December 31, 2021 |
|---|---|---|
| Total current assets | 1,200 | 1,000 |
| Total assets | 5,000 | 4,400 |
| Total current liabilities | 800 | 750 |

## Employees

We employ 1,200 people in 2022.
"""
DOC = "acme/report.md"


@pytest.fixture(scope="module")
def trees() -> dict:
    return {DOC: build_tree("ACME", parse_markdown(REPORT)).nodes}


def rows(trees: dict, *labels: str) -> list:
    return [node_citation(DOC, n) for n in trees[DOC] if n.block == "table_row" and n.text.split(" | ")[0] in labels]


def test_what_a_figure_question_asks_for() -> None:
    asked = figure_question(
        "What is ACME's FY2022 ROA? ROA is defined as: FY2022 net income / (average total assets between FY2021 "
        "and FY2022). Round your answer to two decimal places."
    )
    assert asked.expression == "t0 / ( t1 )"
    assert asked.terms == (Term("net income", (2022,)), Term("total assets", (2021, 2022), "average"))
    assert (asked.scale, asked.percent, asked.decimals) == (None, False, 2)
    words = figure_question(
        "What is ACME's FY2022 net working capital? Define it as total current assets less total current liabilities. Answer in USD millions."
    )
    assert words.expression == "t0 - t1" and words.scale == 1e6
    lookup = figure_question("What is ACME's year end FY2021 total current liabilities (in USD billions)?")
    assert lookup.terms == (Term("", (2021,)),) and lookup.scale == 1e9
    assert figure_question("What does the pass statement do?") is None
    assert figure_question("How did ACME's margins change in FY2022?") is None  # no formula, no unit


def test_a_ratio_is_computed_from_the_cells_it_names_with_the_working_cited(trees: dict) -> None:
    evidence = rows(trees, "Total current assets", "Total current liabilities", "Net sales")
    found = figure_answer(
        "What is ACME's FY2022 working capital ratio? Working capital ratio is defined as: total current assets / "
        "total current liabilities. Round your answer to two decimal places.",
        evidence,
        trees,
    )
    assert found is not None
    assert found.answer == (
        "1.50 = total current assets / total current liabilities; total current assets: Total current assets "
        "(December 31, 2022) 1,200 million [1]; total current liabilities: Total current liabilities "
        "(December 31, 2022) 800 million [2]"
    )
    assert [c.text.split(" | ")[0] for c in found.citations] == [
        "Total current assets",
        "Total current liabilities",
        "Net sales",  # the evidence the figure did not need follows
    ]
    assert found.supporting == 2


def test_terms_missing_from_the_evidence_are_read_from_the_routed_documents_tables(trees: dict) -> None:
    question = (
        "What is ACME's FY2022 asset turnover? Asset turnover is defined as: FY2022 revenue / (average total "
        "assets between FY2021 and FY2022). Round your answer to two decimal places."
    )
    assert figure_answer(question, rows(trees, "Net sales"), trees) is None  # total assets not in the evidence
    found = figure_answer(question, rows(trees, "Net sales"), trees, [DOC])
    assert found is not None and found.answer.startswith(
        "2.00 = FY2022 revenue / (average total assets"
    )  # 9,400 / 4,700
    assert (
        "the average of Total assets (December 31, 2021) 4,400 million [2] and Total assets (December 31, 2022) 5,000 million [2]"
        in found.answer
    )


def test_a_line_item_in_the_unit_asked(trees: dict) -> None:
    found = figure_answer(
        "What is ACME's year end FY2021 total current liabilities (in USD billions)?",
        rows(trees, "Total assets"),
        trees,
        [DOC],
    )
    assert found is not None
    assert found.answer == (
        "0.75 billion; the line item: Total current liabilities (December 31, 2021) 750 million [1]"
    )


def test_no_figure_is_guessed() -> None:
    plain = {"x/a.md": build_tree("X", parse_markdown("# X\n\n| | 2022 |\n|---|---|\n| Net sales | 940 |\n")).nodes}
    cite = [node_citation("x/a.md", n) for n in plain["x/a.md"] if n.text.startswith("Net sales")]
    # the table states no unit: a figure asked in millions is not made up
    assert figure_answer("What were X's FY2022 net sales (in USD millions)?", cite, plain) is None
    # a percentage asked of a formula that gives an amount
    assert (
        figure_answer(
            "What is X's FY2022 margin in units of percents? Margin is defined as: net sales + 1.", cite, plain
        )
        is None
    )


def test_pdf_rows_file_each_cell_under_its_column() -> None:
    cells = row_cells(
        "Purchases of property and equipment.......... $ | November 27, 2015: (184,936) | November 28, 2014: — ", 0
    )
    assert [(c.label, c.column, c.written, c.value, c.year) for c in cells] == [
        ("Purchases of property and equipment", "November 27, 2015", "(184,936)", 184936.0, 2015)
    ]


def test_a_row_reads_the_unit_of_its_own_table() -> None:
    from rag_assets.core.answering.figure_answers import table_scale

    two = (
        "# X\n\n## Selected data\n\n(In millions)\n\n| | 2022 |\n|---|---|\n| Net sales | 9,400 |\n\n"
        "(In thousands)\n\n| | 2022 |\n|---|---|\n| Employees' pay | 12,000 |\n"
    )
    nodes = build_tree("X", parse_markdown(two)).nodes
    by_label = {n.text.split(" | ")[0]: n.node_id for n in nodes if n.block == "table_row"}
    assert table_scale(nodes, by_label["Net sales"]) == 1e6
    assert table_scale(nodes, by_label["Employees' pay"]) == 1e3


def test_a_figure_answer_says_it_is_computed_not_quoted() -> None:
    from rag_assets.core.answering.figure_answers import FIGURE, FIGURE_NOTE
    from rag_assets.core.answering.types import AnswerOutcome
    from rag_assets.serving.asking import form_note

    outcome = AnswerOutcome("q?", "1.50 = a / b; ...", "", 0, [], [], [], 0, 0, 0, 0, 1, 0.1, 0, 0)
    outcome.answer_form, outcome.attribution = "extractive", FIGURE
    assert form_note(outcome) == FIGURE_NOTE == "extractive: a figure computed from the cited cells, with its working"
