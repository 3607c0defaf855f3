"""rdr2's line-item lookup: the statement rows a question names, found by the tree's structure.

A question about a filing's figures names line items ("FY2018 capital expenditure", "total
current liabilities") or a standard measure over them ("operating margin": operating income and
revenue; "working capital": current assets and current liabilities). The filing prints each in a
table row whose label names it, its figures filed under column headers that name their periods
(the PDF reader's table nodes). The router scores a node by its likeness to the question, and a
statement row, mostly figures, scores low against "capital expenditure": the gold page of a metric
question is a statement the router is seldom shown. So rdr2 also looks the rows up by their
labels in the documents it routes: for each line item, a row with figures whose label names it,
preferring one with a figure at a year the question names, then one in a primary statement
(balance sheet, statement of income, operations, earnings, cash flows), then the best-named
(a five-year summary is read for a year the statements no longer show). The rows join the routed
evidence ahead of the router's own choices (their words come off the evidence budget) and are
cited like any routed node.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag_assets.core.answering.figure_answers import (
    LINE_ITEMS,
    TABLE_ROW,
    header_row,
    label_match,
    label_tokens,
    row_cells,
    term_names,
)
from rag_assets.core.answering.figure_questions import figure_question
from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.index.card_matching import question_period
from rag_assets.core.routing.routed_evidence import RoutedDocument, heading_words, node_words

# Standard measures over statement line items (textbook definitions, not any filing's): a question
# naming the measure names its line items, and the measure itself where a filing prints it as a
# row ("Free cash flow", "Adjusted EBITDA").
MEASURES: dict[str, tuple[str, ...]] = {
    "gross margin": ("gross profit", "revenue", "cogs"),
    "operating margin": ("operating income", "revenue"),
    "net margin": ("net income", "revenue"),
    "profit margin": ("net income", "revenue"),
    "ebitda": ("operating income", "depreciation and amortization"),
    "working capital": ("total current assets", "total current liabilities"),
    "current ratio": ("total current assets", "total current liabilities"),
    "quick ratio": ("cash and cash equivalents", "accounts receivable", "total current liabilities"),
    "free cash flow": ("cash from operations", "capex"),
    "cash conversion": ("cash from operations", "net income"),
    "return on assets": ("net income", "total assets"),
    "return on equity": ("net income", "total equity"),
    "asset turnover": ("revenue", "total assets"),
    "fixed asset turnover": ("revenue", "pp&e"),
    "inventory turnover": ("cogs", "inventory"),
    "days sales outstanding": ("accounts receivable", "revenue"),
    "debt to equity": ("long-term debt", "total equity"),
    "interest coverage": ("operating income", "interest expense"),
    "effective tax rate": ("provision for income taxes", "income before income taxes"),
    "dividend payout": ("dividends paid", "net income"),
    "retention ratio": ("dividends paid", "net income"),
    "capital intensive": ("capex", "total assets", "revenue"),
    "capital intensity": ("capex", "total assets", "revenue"),
    "revenue growth": ("revenue",),
    "sales growth": ("revenue",),
}
# where a company reports its line items: the primary statements
_STATEMENT = re.compile(
    r"\bbalance\s+sheets?\b|\bstatements?\s+of\s+(?:consolidated\s+)?(?:income|operations|earnings|cash\s+flows?|"
    r"financial\s+(?:position|condition)|comprehensive\s+(?:income|loss))\b|\b(?:income|cash\s+flows?)\s+statements?\b",
    re.IGNORECASE,
)
MAX_ROWS = 6  # a question's looked-up rows, at most
BUDGET_SHARE = 3  # ... and within a third of its evidence budget


def named_line_items(question: str) -> list[list[str]]:
    """Each line item `question` names, as the names a row may print it under (a figure
    question's terms; else the standard line items and measures its words name)."""
    asked = figure_question(question)
    if asked is not None:
        return [names for term in asked.terms if (names := term_names(term, question))]
    words = set(label_tokens(question))
    items: dict[str, list[str]] = {}  # item -> its names, in the order named
    for measure, parts in MEASURES.items():
        if set(label_tokens(measure)) <= words:
            items.setdefault(measure, [measure])
            for part in parts:
                items.setdefault(part, [part, *LINE_ITEMS.get(part, ())])
    for key, printed in LINE_ITEMS.items():
        if any(set(label_tokens(name)) <= words for name in (key, *printed) if label_tokens(name)):
            items.setdefault(key, [key, *printed])
    for part in dict.fromkeys(p for parts in MEASURES.values() for p in parts):  # "total current assets"
        if set(label_tokens(part)) <= words:
            items.setdefault(part, [part, *LINE_ITEMS.get(part, ())])
    return list(items.values())


def _label(text: str) -> str:
    return text.split(" | ", 1)[0]


def line_item_rows(question: str, nodes: Sequence[TreeNode], items: list[list[str]] | None = None) -> list[int]:
    """The table rows of one document (node ids, in the order of the items named) that print the
    line items `question` names: per item, the best-named row with figures, preferring one with a
    figure at a year the question names, then a primary statement's."""
    items = named_line_items(question) if items is None else items  # `items`: named once per question
    if not items:
        return []
    years = question_period(question).years
    rows = [n for n in nodes if n.block == TABLE_ROW and " | " in n.text]
    chosen: list[int] = []
    for names in items:
        best, best_key = None, None
        for node in rows:
            score = label_match(_label(node.text), names, question)
            if score < 0.75:
                continue
            cells = row_cells(node.text, 0, header_row(nodes, node.node_id))  # columns in a header row too
            if not cells:
                continue
            in_statement = bool(_STATEMENT.search(" ".join(node.heading_path)))
            at_year = bool(years) and any(c.year in years for c in cells)
            key = (at_year, in_statement, round(score, 2), -node.node_id)
            if best_key is None or key > best_key:
                best, best_key = node.node_id, key
        if best is not None and best not in chosen:
            chosen.append(best)
    return chosen


def looked_up_rows(
    question: str, documents: Sequence[tuple[str, Sequence[TreeNode]]], budget: int | None
) -> tuple[list[tuple[int, int]], int]:
    """The rows the lookup adds to a question's evidence, as (document index, node id) in the
    documents' order, at most `MAX_ROWS` and within a `BUDGET_SHARE` of `budget` (None: free),
    and the words they take (each heading path counted once, as the evidence prints it)."""
    items = named_line_items(question)
    if not items:
        return [], 0
    cap = None if budget is None else budget // BUDGET_SHARE
    chosen: list[tuple[int, int]] = []
    headed: set[tuple[int, tuple[str, ...]]] = set()
    used = 0
    for index, (_, nodes) in enumerate(documents):
        for node_id in line_item_rows(question, nodes, items):
            node = nodes[node_id]
            group = (index, tuple(node.heading_path))
            cost = node_words(node) + (0 if group in headed else heading_words(node))
            if len(chosen) >= MAX_ROWS or (cap is not None and used + cost > cap):
                continue
            chosen.append((index, node_id))
            headed.add(group)
            used += cost
    return chosen, used


def join_looked_up(routed: Sequence[RoutedDocument], rows: Sequence[tuple[int, int]]) -> None:
    """Add the looked-up rows (document index, node id) to the routed documents' selections, in
    place; a row the router chose as well is kept once (and no longer counts as budget fill)."""
    for index, node_id in rows:
        doc = routed[index]
        if node_id not in doc.selected_node_ids:
            doc.selected_node_ids.append(node_id)
        if node_id in doc.filled_node_ids:
            doc.filled_node_ids.remove(node_id)
