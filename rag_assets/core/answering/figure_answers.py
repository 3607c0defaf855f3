"""A figure answered from the cells of the evidence's table rows, with the working shown.

A statement's row node reads "Net cash provided by operating activities ...... | November 27,
2015: 1,469,502 | November 28, 2014: 1,287,482" (the PDF reader files each cell under its column
header). For a figure question (core/answering/figure_questions.py) each term is the cell of the
row whose label names it (its words, or a standard name of the line item: `LINE_ITEMS`) in the
column of the term's year, scaled by the table's own "(In thousands ...)" line; the formula is
computed over them and the answer shows every cell with its row, column and citation, so every
figure in it is a cited cell's or is computed from cited cells. Where a term finds no row of the
evidence, no figure answer is made and the quote answers instead (nothing is guessed).

Signs are read as presented magnitudes: a statement shows an outflow as "(4,625)" and a formula
over line items ("cash from operations - capex") means the amounts.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rag_assets.core.answering.citations import node_citation
from rag_assets.core.answering.figure_questions import FigureQuestion, Term, figure_question
from rag_assets.core.answering.types import Citation
from rag_assets.core.corpus.blocks import BlockKind
from rag_assets.core.corpus.tree import STRUCTURE, TreeNode

FIGURE = "figure"  # the attribution method of a figure answer
FIGURE_NOTE = "extractive: a figure computed from the cited cells, with its working"
TABLE_ROW = BlockKind.TABLE_ROW.value
MAX_PERCENT_RATIO = 10.0  # a percentage is a ratio: 1,000% at most
ROUTED_FOR_FIGURES = 2  # the first retrieved documents whose tables a figure is also read from
_LEADER = re.compile(r"(?:\s*\.){2,}|\s\$\s*$|^\$\s*")
_VALUE = re.compile(r"^\(?-?\$?\s*\(?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\)?\s*%?$")
_YEAR = re.compile(r"\b(19\d\d|20\d\d)\b")
_TABLE_SCALE = re.compile(r"\b(?:in|\$\s*in|dollars\s+in)\s+(thousands|millions|billions)\b", re.IGNORECASE)
_SCALES = {"thousands": 1e3, "millions": 1e6, "billions": 1e9}
_SCALE_WORDS = {1e3: "thousand", 1e6: "million", 1e9: "billion"}
_CITED = re.compile(r"\x00(\d+)\x00")  # a cell's pool index, until the answer numbers its citations
_TOKEN = re.compile(r"[a-z0-9&]+")
_STOP = frozenset({"the", "of", "and", "a", "an", "in", "for", "to", "by", "from", "on", "at", "as"})
# where a question says which statement or date to read ("off of the balance sheet", "year end"):
# its frame, not the line item it asks for
_FRAME = re.compile(
    r"\b(?:(?:consolidated\s+)?balance\s+sheets?|statements?\s+of\s+(?:cash\s+flows|income|operations|"
    r"earnings|financial\s+position)|(?:cash\s+flow|income|p&l)\s+statements?|year[- ]end|end\s+of\s+(?:the\s+)?"
    r"(?:fiscal\s+)?year|fiscal\s+year)\b",
    re.IGNORECASE,
)
# Standard names of statement line items (what the question says -> what a statement prints):
# accounting vocabulary, not any one filing's.
LINE_ITEMS: dict[str, tuple[str, ...]] = {
    "cash from operations": (
        "net cash provided by operating activities",
        "net cash from operating activities",
        "cash provided by operating activities",
        "net cash provided by operations",
        "cash flow from operating activities",
    ),
    "capex": (
        "capital expenditures",
        "capital expenditure",
        "capital spending",
        "purchases of property and equipment",
        "purchases of property plant and equipment",
        "payments for property plant and equipment",
        "additions to property and equipment",
    ),
    "revenue": ("revenues", "total revenues", "net revenues", "net sales", "total net sales", "sales"),
    "cogs": ("cost of sales", "cost of goods sold", "cost of revenue", "cost of revenues", "cost of products sold"),
    "pp&e": ("property plant and equipment net", "property and equipment net"),
    "operating income": ("operating income", "income from operations", "operating profit", "operating earnings"),
    "net income": ("net income", "net earnings"),
    "depreciation and amortization": ("depreciation and amortization", "depreciation amortization"),
    "inventory": ("inventories", "inventory", "merchandise inventories"),
    "accounts receivable": ("accounts receivable net", "receivables net", "trade receivables"),
}
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


@dataclass(frozen=True, slots=True)
class Cell:
    citation: int  # index into the citations given
    label: str
    column: str
    written: str  # as printed: "(1,577)"
    value: float  # its magnitude, in the table's own unit
    year: int | None


@dataclass(frozen=True, slots=True)
class FigureAnswer:
    answer: str
    citations: list[Citation]  # the cells' rows first, then the other evidence
    supporting: int  # the rows the figure was read from
    value: float  # the figure computed, in base units (a percentage as a ratio)


def label_tokens(text: str) -> list[str]:
    # years and other numbers are a column's or a note's, never what names a line item
    return [
        t.rstrip("s") if len(t) > 3 else t for t in _TOKEN.findall(text.lower()) if t not in _STOP and not t.isdigit()
    ]


def row_cells(text: str, citation: int, headers: Sequence[str] = ()) -> list[Cell]:
    """The cells of a table row's text, empty ones left out: "label | column: value | ..." (each
    cell under its column, as the PDF and Word readers write rows), or "label | value | ..." under
    `headers`, the table's header row (its first cell heads the labels)."""
    label, *parts = text.split(" | ")
    label = _LEADER.sub(" ", label).strip()
    cells = []
    for j, part in enumerate(parts):
        column, sep, written = part.rpartition(": ")
        if not sep and j + 1 < len(headers):
            column, written = headers[j + 1], part
        found = _VALUE.match(written.strip()) if column else None
        if not found:
            continue
        value = float(found.group(1).replace(",", "") + (found.group(2) or ""))
        years = _YEAR.findall(column)
        cells.append(Cell(citation, label, column.strip(), written.strip(), value, int(years[-1]) if years else None))
    return cells


def header_row(nodes: Sequence[TreeNode], node_id: int) -> list[str]:
    """The header cells of the table a row belongs to: the first row of its run of rows, where
    no cell of it is a figure ([] where there is none, or the row is the header)."""
    first = node_id
    parent = nodes[node_id].parent_id
    while first > 0 and nodes[first - 1].block == TABLE_ROW and nodes[first - 1].parent_id == parent:
        first -= 1
    if first == node_id:
        return []
    cells = [c.strip() for c in nodes[first].text.split(" | ")]
    if any(_VALUE.match(c) and not _YEAR.fullmatch(c) for c in cells):  # "2022" heads a column
        return []
    # a header row without a label column ("December 31, 2022 | December 31, 2021") heads the figures
    return cells if len(cells) == len(nodes[node_id].text.split(" | ")) else ["", *cells]


def term_names(term: Term, question: str) -> list[str]:
    """What a term may be printed as: its own words and the standard names of the line item it
    names (for a single-item question, of each line item the question names)."""
    text = term.name or question
    words = set(label_tokens(text))
    names = [term.name] if term.name else []
    for key, printed in LINE_ITEMS.items():
        if any(set(label_tokens(p)) <= words for p in (key, *printed) if label_tokens(p)):
            names += [key, *printed]
    return names


def label_match(label: str, names: Sequence[str], question: str) -> float:
    """How well a row label names the term: the share of a name's words the label holds, less a
    little for each word of the label beyond it; for a single-item question without a known
    name, the share of the label's words the question holds."""
    have = set(label_tokens(label))
    if not have:
        return 0.0
    best = 0.0
    for name in names:
        want = set(label_tokens(name))
        if want:
            best = max(best, len(want & have) / len(want) - 0.05 * len(have - want))
    if not names:
        words = set(label_tokens(_FRAME.sub(" ", question)))
        best = len(have & words) / len(have) - 0.05 * max(0, 3 - len(have))
    return best


def _cell(cells: Sequence[Cell], names: list[str], year: int, question: str) -> Cell | None:
    scored = [(c, label_match(c.label, names, question)) for c in cells if c.year == year]
    scored = [(c, s) for c, s in scored if s >= 0.75]
    return max(scored, key=lambda pair: (pair[1], -len(pair[0].label)))[0] if scored else None


def table_scale(nodes: Sequence[TreeNode], node_id: int) -> float | None:
    """The unit a table row's figures are printed in: the nearest "(In thousands, except par
    value)" above it within its section, else its heading's; None where the table does not say."""
    parent = nodes[node_id].parent_id
    while parent is not None and nodes[parent].kind != STRUCTURE:
        parent = nodes[parent].parent_id
    if parent is None:
        return None
    for node in (*reversed(nodes[parent + 1 : node_id]), nodes[parent]):  # a section may hold tables of two units
        found = _TABLE_SCALE.search(node.text[:200])
        if found:
            return _SCALES[found.group(1).lower()]
    return None


def _headers(cite: Citation, trees: Mapping[str, Sequence[TreeNode]]) -> list[str]:
    nodes = trees.get(cite.doc_id)
    if not nodes or not 0 <= cite.node_id < len(nodes) or nodes[cite.node_id].block != TABLE_ROW:
        return []
    return header_row(nodes, cite.node_id)


def _evaluate(expression: str, values: Sequence[float]) -> float:
    def walk(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return float(node.value)
        if isinstance(node, ast.Name) and node.id.startswith("t"):
            return values[int(node.id[1:])]
        raise ValueError(f"not arithmetic: {ast.dump(node)}")

    return walk(ast.parse(expression, mode="eval"))


def _number(value: float, decimals: int) -> str:
    return f"{value:,.{decimals}f}"


def statement_rows(
    documents: Sequence[str], trees: Mapping[str, Sequence[TreeNode]], known: set[tuple[str, int]]
) -> list[Citation]:
    """The table rows of `documents` (in document order) not among `known`: where a statement's
    line item is read when the routed evidence does not hold it."""
    rows = []
    for doc_id in documents:
        for node in trees.get(doc_id, ()):
            if node.block == TABLE_ROW and " | " in node.text and (doc_id, node.node_id) not in known:
                rows.append(node_citation(doc_id, node))
    return rows


def figure_answer(
    question: str,
    citations: Sequence[Citation],
    trees: Mapping[str, Sequence[TreeNode]],
    documents: Sequence[str] = (),
) -> FigureAnswer | None:
    """The figure `question` asks for, computed from cells of the evidence's table rows, else of
    the table rows of `documents` (the documents the evidence was routed in); None where it asks
    for none, or a term's cell is found in neither."""
    asked = figure_question(question)
    if asked is None:
        return None
    pool = list(citations)
    pool += statement_rows(documents, trees, {(c.doc_id, c.node_id) for c in citations})
    cells = [c for i, cite in enumerate(pool) for c in row_cells(cite.text, i, _headers(cite, trees))]
    if not cells:
        return None
    values, lines, used, scaled = [], [], [], set()
    for term in asked.terms:
        read = _read_term(term, cells, question, pool, trees, asked.scale is not None)
        if read is None:
            return None
        value, shown, rows, known = read
        scaled.add(known)
        values.append(value)
        lines.append(f"{term.name or 'the line item'}: {shown}")
        used += [r for r in dict.fromkeys(rows) if r not in used]  # a row read at two years: cited once
    if len(scaled) > 1:
        return None  # figures of a stated unit with figures of none: their ratio would be a guess
    try:
        result = _evaluate(asked.expression, values)
    except (ValueError, ZeroDivisionError):
        return None
    if asked.percent and abs(result) > MAX_PERCENT_RATIO:
        return None  # a percentage asked, and the formula gave an amount: the question says more than it
    text = _result_text(result, asked)
    working = f"{text} = {asked.formula}" if asked.formula else text
    # the cells' rows are cited first, numbered as the answer names them
    cited = [pool[i] for i in used] + [c for i, c in enumerate(citations) if i not in used]
    number = {i: n + 1 for n, i in enumerate(used)}
    answer = _CITED.sub(lambda m: str(number[int(m.group(1))]), f"{working}; " + "; ".join(lines))
    return FigureAnswer(answer, cited, len(used), result)


def _read_term(
    term: Term,
    cells: Sequence[Cell],
    question: str,
    pool: Sequence[Citation],
    trees: Mapping[str, Sequence[TreeNode]],
    unit_asked: bool,
) -> tuple[float, str, list[int], bool] | None:
    """The term's value in base units, the cells as shown (each cell's pool index marked for its
    citation number, `_CITED`), the pool indexes they come from and whether their tables state their unit. None where a cell is missing, or its
    table states no unit while the question asks for one (nothing is guessed)."""
    names = term_names(term, question)
    found = [_cell(cells, names, year, question) for year in term.years]
    if any(c is None for c in found):
        return None
    amounts, shown, known = [], [], True
    for cell in found:
        cite = pool[cell.citation]
        nodes = trees.get(cite.doc_id)
        scale = table_scale(nodes, cite.node_id) if nodes else None
        if scale is None and unit_asked:
            return None
        known = known and scale is not None
        amounts.append(cell.value * (scale or 1.0))
        unit = f" {_SCALE_WORDS[scale]}" if scale else ""
        shown.append(f"{cell.label} ({cell.column}) {cell.written}{unit} [\x00{cell.citation}\x00]")
    if term.how == "average":
        value = sum(amounts) / len(amounts)
    elif term.how == "change":
        value = amounts[-1] - amounts[0]
    else:
        value = amounts[0]
    how = {"average": "the average of ", "change": "the change from "}.get(term.how, "")
    return value, how + " and ".join(shown), [c.citation for c in found], known


def _result_text(result: float, asked: FigureQuestion) -> str:
    if asked.percent:
        return f"{_number(result * 100, asked.decimals if asked.decimals is not None else 1)}%"
    if asked.scale:
        return f"{_number(result / asked.scale, asked.decimals if asked.decimals is not None else 2)} {_SCALE_WORDS[asked.scale]}"
    return _number(result, asked.decimals if asked.decimals is not None else 2)
