"""What a question asking for a figure wants: the terms and the formula over them, the period of
each term, the unit and the rounding of the answer.

"What is the FY2015 operating cash flow ratio for Adobe? Operating cash flow ratio is defined
as: cash from operations / total current liabilities. Round your answer to two decimal places."
asks for `cash from operations @FY2015 / total current liabilities @FY2015`, to two decimals.
"What is Boeing's year end FY2018 net property, plant, and equipment (in USD millions)?" asks
for one line item at FY2018, in millions. A term may be an average or a change over two named
years ("average total assets between FY2016 and FY2017"). A question stating neither a formula
nor a unit is not a figure question: its answer is a quote (core/answering/extractive.py).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from rag_assets.core.index.card_matching import question_period

_FORMULA = re.compile(
    r"(?:\bis\s+defined\s+as|\bdefined\s+as|\bdefine\s+[^.?]{1,80}?\s+as|\bis\s+calculated\s+as)\s*:?\s*(.+?)"
    r"(?:\.(?:\s|$)|\?|$)",
    re.IGNORECASE,
)
_WORDS_TO_SIGNS = (
    (re.compile(r"\s+divided\s+by\s+", re.IGNORECASE), " / "),
    (re.compile(r"\s+(?:less|minus)\s+", re.IGNORECASE), " - "),
    (re.compile(r"\s+plus\s+", re.IGNORECASE), " + "),
    (re.compile(r"\s+(?:times|multiplied\s+by)\s+", re.IGNORECASE), " * "),
)
_NOTE = re.compile(r"\[[^\]]*\]|\bfrom\s+the\s+[\w\s]+statement\b", re.IGNORECASE)  # "[from cash flow statement]"
_UNIT = re.compile(r"\bin\s+(?:USD\s+|US\$\s*|\$\s*)?(thousands|millions|billions)\b", re.IGNORECASE)
_PERCENT = re.compile(r"\bin\s+units\s+of\s+percents?\b|%\s*margin\b|\bas\s+a\s+%", re.IGNORECASE)
_DECIMALS = re.compile(r"\b(one|two|three|four|\d)\s+decimal\s+places?\b", re.IGNORECASE)
_SCALES = {"thousands": 1e3, "millions": 1e6, "billions": 1e9}
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4}
_AVERAGE = re.compile(r"^average\s+(.+?)\s+between\s+FY\s*(\d{4})\s+and\s+FY\s*(\d{4})$", re.IGNORECASE)
_CHANGE = re.compile(r"^change\s+in\s+(.+?)\s+between\s+FY\s*(\d{4})\s+and\s+FY\s*(\d{4})$", re.IGNORECASE)
_YEAR_FIRST = re.compile(r"^(?:FY\s*(\d{4})|(\d{4}))\s+(.+)$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Term:
    """A line item at the years it is read at, combined by `how`: "at" (one year), "average" or
    "change" (the later year's less the earlier's)."""

    name: str
    years: tuple[int, ...]
    how: str = "at"


@dataclass(frozen=True, slots=True)
class FigureQuestion:
    """`expression`: Python arithmetic over `t0`, `t1`, ... (the `terms`) and numbers; `scale`:
    the unit the answer is given in (1e6: "in USD millions"; None: as the terms give it);
    `percent`: the answer is a percentage; `decimals`: its rounding."""

    expression: str
    terms: tuple[Term, ...]
    scale: float | None
    percent: bool
    decimals: int | None
    formula: str  # as the question states it ("" for a single line item)


def asked_scale(question: str) -> float | None:
    found = _UNIT.search(question)
    return _SCALES[found.group(1).lower()] if found else None


def asked_decimals(question: str) -> int | None:
    found = _DECIMALS.search(question)
    if not found:
        return None
    word = found.group(1).lower()
    return int(word) if word.isdigit() else _NUMBER_WORDS[word]


def parse_term(text: str, default_year: int | None) -> Term | None:
    """A term of a formula: "average X between FY2016 and FY2017", "change in X between ...",
    "FY2018 X" or "X" (at the question's year)."""
    text = " ".join(text.split()).strip(" ,;:()")
    for pattern, how in ((_AVERAGE, "average"), (_CHANGE, "change")):
        found = pattern.match(text)
        if found:
            return Term(found.group(1).strip(), (int(found.group(2)), int(found.group(3))), how)
    found = _YEAR_FIRST.match(text)
    if found:
        return Term(found.group(3).strip(), (int(found.group(1) or found.group(2)),))
    if default_year is None or not re.search(r"[A-Za-z]", text):
        return None
    return Term(text, (default_year,))


def _expression(formula: str, default_year: int | None) -> tuple[str, tuple[Term, ...]] | None:
    """The formula as Python arithmetic over term placeholders, or None where a piece is no term."""
    text = _NOTE.sub(" ", formula)
    for pattern, sign in _WORDS_TO_SIGNS:
        text = pattern.sub(sign, text)
    pieces = re.split(r"(\s[-+*/]\s|[()])", f" {text} ")
    terms: list[Term] = []
    out = []
    for piece in pieces:
        stripped = piece.strip()
        if not stripped:
            continue
        if stripped in "+-*/()" or re.fullmatch(r"\d+(?:\.\d+)?", stripped):
            out.append(stripped)
        else:
            term = parse_term(stripped, default_year)
            if term is None:
                return None
            out.append(f"t{len(terms)}")
            terms.append(term)
    expression = " ".join(out)
    try:
        ast.parse(expression, mode="eval")
    except SyntaxError:
        return None
    return (expression, tuple(terms)) if terms else None


def figure_question(question: str) -> FigureQuestion | None:
    """What `question` asks for, where it asks for a figure by a formula or in a stated unit."""
    years = sorted(question_period(question).years)
    year = years[-1] if years else None
    scale = asked_scale(question)
    percent = bool(_PERCENT.search(question))
    decimals = asked_decimals(question)
    stated = _FORMULA.search(question)
    if stated:
        parsed = _expression(stated.group(1), year)
        if parsed is not None:
            return FigureQuestion(parsed[0], parsed[1], scale, percent, decimals, stated.group(1).strip())
        return None
    if scale is None or percent or year is None:
        return None  # a line item is asked for in a unit, at a year
    return FigureQuestion("t0", (Term("", (year,)),), scale, False, decimals, "")
