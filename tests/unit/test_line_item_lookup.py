"""rdr2's line-item lookup (core/answering/line_item_lookup.py) on a report written by hand as
Markdown and read by the project's own parser and tree builder; the rows expected are picked by
hand, and the lookup is run inside rdr2's evidence gathering with the hit-nodes router."""

from __future__ import annotations

import pytest

from rag_assets.core.answering.line_item_lookup import line_item_rows, looked_up_rows, named_line_items
from rag_assets.core.answering.strategies import gather_evidence
from rag_assets.core.answering.types import StrategySpec
from rag_assets.core.corpus.parsers.markdown import parse_markdown
from rag_assets.core.corpus.tree import build_tree
from rag_assets.core.index.retrieval import SearchHit
from rag_assets.core.routing.scoring_router import HitNodesRouter

pytestmark = pytest.mark.unit

REPORT = """# ACME Corp annual report

## Management's discussion

Net sales grew on strong demand for our widgets in every region we serve.

| | 2022 | 2021 |
|---|---|---|
| Net sales | 9,400 | 8,100 |
| Widgets sold | 310 | 280 |

## Consolidated Statements of Income

(In millions)

| | 2022 | 2021 |
|---|---|---|
| Net sales | 9,400 | 8,100 |
| Cost of sales | 6,000 | 5,200 |
| Operating income | 1,100 | 900 |

## Consolidated Balance Sheets

(In millions)

| | December 31, 2022 | December 31, 2021 |
|---|---|---|
| Total current assets | 1,200 | 1,000 |
| Total current liabilities | 800 | 750 |

## Five-year summary

| | 2018 | 2017 |
|---|---|---|
| Total current assets | 700 | 650 |
"""
DOC = "acme/report.md"


@pytest.fixture(scope="module")
def nodes() -> list:
    return build_tree("ACME", parse_markdown(REPORT)).nodes


def labelled(nodes: list, label: str, heading: str) -> int:
    (found,) = [
        n.node_id
        for n in nodes
        if n.block == "table_row" and n.text.split(" | ")[0] == label and n.heading_path[-1] == heading
    ]
    return found


def test_the_line_items_a_question_names_directly_by_a_measure_or_by_a_formula() -> None:
    margin = named_line_items("Does ACME have an improving operating margin profile as of FY2022?")
    assert [names[0] for names in margin] == ["operating margin", "operating income", "revenue"]
    assert "net sales" in margin[2]  # a standard name the statement may print revenue under
    working = named_line_items("Does ACME have positive working capital based on FY2022 data?")
    assert [names[0] for names in working] == ["working capital", "total current assets", "total current liabilities"]
    ratio = named_line_items(
        "What is ACME's FY2022 working capital ratio? Working capital ratio is defined as: total current assets / "
        "total current liabilities. Round your answer to two decimal places."
    )
    assert [names[0] for names in ratio] == ["total current assets", "total current liabilities"]
    assert named_line_items("What industry does ACME primarily operate in?") == []
    assert named_line_items("How do I reset the remote control of my television?") == []


def test_each_item_is_read_from_the_statement_at_the_year_asked(nodes: list) -> None:
    rows = line_item_rows("Does ACME have an improving operating margin profile as of FY2022?", nodes)
    # operating income, then revenue: the income statement's "Net sales", not the discussion's
    assert rows == [
        labelled(nodes, "Operating income", "Consolidated Statements of Income"),
        labelled(nodes, "Net sales", "Consolidated Statements of Income"),
    ]
    working = line_item_rows("Does ACME have positive working capital based on FY2022 data?", nodes)
    assert working == [
        labelled(nodes, "Total current assets", "Consolidated Balance Sheets"),
        labelled(nodes, "Total current liabilities", "Consolidated Balance Sheets"),
    ]
    # asked at 2018, the summary's row, the only one with a 2018 figure, comes before the statement's
    assert line_item_rows("What were ACME's total current assets in FY2018?", nodes)[0] == labelled(
        nodes, "Total current assets", "Five-year summary"
    )
    assert line_item_rows("What were ACME's total current assets in FY2022?", nodes)[0] == labelled(
        nodes, "Total current assets", "Consolidated Balance Sheets"
    )
    assert line_item_rows("What industry does ACME primarily operate in?", nodes) == []


def test_the_rows_stay_within_a_third_of_the_budget(nodes: list) -> None:
    question = "Does ACME have an improving gross margin profile as of FY2022?"
    free, free_words = looked_up_rows(question, [(DOC, nodes)], None)
    assert len(free) == 2  # net sales and cost of sales; gross profit is not printed
    tight, tight_words = looked_up_rows(question, [(DOC, nodes)], 3 * (free_words - 1))
    assert 0 < len(tight) < len(free) and tight_words <= free_words - 1


def test_rdr2_puts_the_rows_first_and_the_router_fills_the_words_left(nodes: list) -> None:
    """The hit-nodes router answers the retrieved paragraph; the lookup adds the statement rows,
    and the evidence stays within the budget; without the lookup only the paragraph is given."""
    paragraph = next(n for n in nodes if n.text.startswith("Net sales grew"))
    hit = SearchHit(0, 1.0, "p0", DOC, "acme", (paragraph.node_id,), ((0, 1),), paragraph.heading_path, paragraph.text)

    def retrieve(query: str, mode: str, k: int, **options: object) -> list[SearchHit]:
        return [hit]

    question = "Does ACME have an improving operating margin profile as of FY2022?"
    spec = StrategySpec("rdr2", "rdr2", top_k=1, router="hit-nodes", evidence_budget_from="rag-hybrid")
    routers = {"hit-nodes": HitNodesRouter()}
    trees = {DOC: nodes}
    (with_rows,) = gather_evidence(
        [question], spec, retrieve=retrieve, trees=trees, routers=routers, evidence_budgets=[200]
    )
    statement = "Consolidated Statements of Income"
    expected = {labelled(nodes, "Operating income", statement), labelled(nodes, "Net sales", statement)}
    assert expected | {paragraph.node_id} <= {c.node_id for c in with_rows.citations}
    assert sorted(with_rows.retrieval["line_items"]) == sorted([DOC, n] for n in expected)
    assert with_rows.words <= 200
    without = StrategySpec(
        "rdr2", "rdr2", top_k=1, router="hit-nodes", evidence_budget_from="rag-hybrid", line_items=False
    )
    (plain,) = gather_evidence(
        [question], without, retrieve=retrieve, trees=trees, routers=routers, evidence_budgets=[200]
    )
    assert not expected & {c.node_id for c in plain.citations} and "line_items" not in plain.retrieval


def test_the_lookup_is_rdr2s_by_default_a_setting_turns_it_off_and_answers_record_it() -> None:
    from rag_assets.core.answering.policy.catalogue import StrategySettings, strategy_specs

    on = strategy_specs(StrategySettings(), "short", None)
    off = strategy_specs(StrategySettings(line_items=False), "short", None)
    assert on["rdr2"].line_items and on["rdr2-extractive"].line_items and on["rdr2-encoder"].line_items
    assert not off["rdr2"].line_items and not off["rdr2-extractive"].line_items
    assert on["rdr2"].knobs()["line_items"] is True and "line_items" not in off["rdr2"].knobs()
    assert "line_items" not in on["rag-hybrid"].knobs()  # retrieve-and-read looks nothing up
