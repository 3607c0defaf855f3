"""A yes or no computed from cited cells, where a question asks whether a measure is improving or
is positive.

"Does Adobe have an improving operating margin profile as of FY2022?" asks whether operating
margin (operating income / revenue: a textbook definition, `FORMULAS`) is higher at FY2022 than
at FY2021; "Does Corning have positive working capital based on FY2022 data?" whether total
current assets less total current liabilities is above 0 at FY2022. Both are one figure answer
(core/answering/figure_answers.py) over terms at named years ("(FY2022 operating income / FY2022
revenue) - (FY2021 operating income / FY2021 revenue)"), every cell read from the rows naming its
line item and cited; the verdict is the figure's sign, and the answer states it before the
working: "No: operating margin at FY2022 less operating margin at FY2021 is -2.2%; ...". Where a
cell is missing, no verdict is computed and the reader's yes or no stands (verdict.py).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rag_assets.core.answering.figure_answers import FigureAnswer, figure_answer
from rag_assets.core.answering.types import Citation
from rag_assets.core.answering.verdict import asks_yes_no
from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.index.card_matching import question_period

# what such an answer says it is (the answer's note, the page and `rag ask`)
MEASURE_VERDICT_NOTE = "extractive: a yes or no computed from the cited cells, with its working"
# measure -> (formula over line items with {y} for the year, whether it is a ratio shown in percent)
FORMULAS: dict[str, tuple[str, bool]] = {
    "gross margin": ("((FY{y} revenue - FY{y} cogs) / FY{y} revenue)", True),
    "operating margin": ("(FY{y} operating income / FY{y} revenue)", True),
    "net margin": ("(FY{y} net income / FY{y} revenue)", True),
    "net profit margin": ("(FY{y} net income / FY{y} revenue)", True),
    "working capital": ("(FY{y} total current assets - FY{y} total current liabilities)", False),
    "current ratio": ("(FY{y} total current assets / FY{y} total current liabilities)", False),
    "free cash flow": ("(FY{y} cash from operations - FY{y} capex)", False),
}
_MEASURE = "|".join(sorted((re.escape(m) for m in FORMULAS), key=len, reverse=True))
_IMPROVING = re.compile(rf"\bimproving\s+(?P<measure>{_MEASURE})\b", re.IGNORECASE)
_POSITIVE = re.compile(rf"\bpositive\s+(?P<measure>{_MEASURE})\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class MeasureQuestion:
    """`measure` at `year` compared with `against` (a year, or None: with 0)."""

    measure: str
    year: int
    against: int | None

    def formula(self) -> str:
        formula, _ = FORMULAS[self.measure]
        later = formula.format(y=self.year)
        return later if self.against is None else f"{later} - {formula.format(y=self.against)}"

    def figure_question(self) -> str:
        """The figure question whose answer's sign is the verdict."""
        _, percent = FORMULAS[self.measure]
        unit = "Answer in units of percents." if percent else "Answer in USD millions."
        return f"What is the change? The change is defined as: {self.formula()}. {unit}"

    def said(self) -> str:
        if self.against is None:
            return f"{self.measure} at FY{self.year}"
        return f"{self.measure} at FY{self.year} less {self.measure} at FY{self.against}"


def measure_question(question: str) -> MeasureQuestion | None:
    """What a yes/no question about a measure's direction or sign asks (None: it asks neither, or
    names no year)."""
    if not asks_yes_no(question):
        return None
    years = sorted(question_period(question).years)
    if not years:
        return None
    improving = _IMPROVING.search(question)
    if improving:
        earlier = years[0] if len(years) > 1 else years[-1] - 1
        return MeasureQuestion(improving.group("measure").lower(), years[-1], earlier)
    positive = _POSITIVE.search(question)
    if positive:
        return MeasureQuestion(positive.group("measure").lower(), years[-1], None)
    return None


def measure_verdict(
    question: str,
    citations: Sequence[Citation],
    trees: Mapping[str, Sequence[TreeNode]],
    documents: Sequence[str] = (),
) -> tuple[FigureAnswer, str] | None:
    """The figure answer a measure question rests on and its verdict ("Yes" or "No"); None where
    the question asks for no such verdict, a cell is missing, or the figure is 0."""
    asked = measure_question(question)
    if asked is None:
        return None
    figure = figure_answer(asked.figure_question(), citations, trees, documents)
    if figure is None:
        return None
    if figure.value == 0:
        return None
    verdict = "Yes" if figure.value > 0 else "No"
    return dataclasses.replace(figure, answer=f"{verdict}: {asked.said()} is {figure.answer}"), verdict
