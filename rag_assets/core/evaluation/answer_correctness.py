"""Is an answer right about the figures and the yes or no its gold answer gives (FinanceBench's
grading, made mechanical)?

A financial answer is right when it states the gold answer's figures, whatever words surround
them: "$1,832 million", "1.83 billion dollars" and "1832.00" are one figure. So:

- a gold answer that begins with yes or no ("No, American Water Works had negative working
  capital ...") is right when the answer begins with the same word (its polarity);
- else a gold answer holding figures is right when every one of them is in the answer within 1%,
  or equal at the gold's decimals ("0.01" is 0.0123 rounded), after scale words ("million",
  "bn", "mn", "k") and percent signs are read: 0.654 states 65.4%, 1.83 billion states 1832 (in
  millions) when the gold states no scale of its own. Signs are not compared: a decline is said
  in words as often as with a minus ("fell 3.7%" for -3.7). Years (1900-2100 written alone, as
  in "FY 2021") are the period a figure belongs to, not a figure;
- other gold answers (names, lists, sentences) are judged by containment of the normalised
  gold, a second, stricter figure (`gold_contained`), since no rule can grade a paraphrase.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag_assets.core.answer_metrics import contains_answer, normalize_answer, yes_no

_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)")
_AFTER = re.compile(r"\s*(%|percent\b|per\s+cent\b|[a-zA-Z]+)?")
_SCALES = {
    "thousand": 1e3,
    "thousands": 1e3,
    "k": 1e3,
    "million": 1e6,
    "millions": 1e6,
    "mn": 1e6,
    "mm": 1e6,
    "m": 1e6,
    "billion": 1e9,
    "billions": 1e9,
    "bn": 1e9,
    "b": 1e9,
    "trillion": 1e12,
    "tn": 1e12,
}
_TOLERANCE = 0.01


@dataclass(frozen=True, slots=True)
class Figure:
    """A number as written (`written`: 1,832.00 -> 1832.0), its `scale` (1e6 for "million"),
    whether it is a percentage, and its decimals as written."""

    written: float
    scale: float
    percent: bool
    decimals: int

    @property
    def value(self) -> float:
        return self.written * self.scale


def figures(text: str) -> list[Figure]:
    """The figures of `text`, years left out."""
    found = []
    for match in _NUMBER.finditer(text):
        digits = match.group(1)
        if re.match(r"-[A-Za-z]", text[match.end() : match.end() + 2]):
            continue  # "10-K", "8-K": a form's name
        unit = (_AFTER.match(text, match.end()).group(1) or "").lower()
        if unit and unit not in _SCALES and unit[0].isalpha() and not unit.startswith("per"):
            if text[match.end() : match.end() + 1].isalpha():  # glued to a word ("777X", "10K"): a name
                continue
            unit = ""
        percent = unit.startswith("%") or unit.startswith("per")
        scale = _SCALES.get(unit, 1.0)
        written = float(digits.replace(",", ""))
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        before = text[max(0, match.start() - 1) : match.start()]
        plain = not percent and scale == 1.0 and not decimals and "," not in digits and before != "$"
        if plain and 1900 <= written <= 2100:
            continue  # a year: the period, not the figure
        found.append(Figure(written, scale, percent, decimals))
    return found


def _close(stated: float, gold: float, decimals: int) -> bool:
    stated, gold = abs(stated), abs(gold)
    if gold == 0:
        return stated == 0
    return abs(stated - gold) <= _TOLERANCE * gold or round(stated, decimals) == gold


def states(stated: Figure, gold: Figure) -> bool:
    """Whether `stated` is `gold`, scale and percent read (see the module doc)."""
    candidates = [stated.written, stated.value]
    if gold.scale == 1.0 and stated.scale != 1.0:  # "1832.00" (in millions) is stated by "1.83 billion"
        candidates += [stated.value / s for s in (1e3, 1e6, 1e9)]
    if gold.percent and not stated.percent:  # 65.4% is stated by the fraction 0.654
        candidates.append(stated.written * 100)
    if stated.percent and not gold.percent:  # and the fraction 0.654 by 65.4%
        candidates.append(stated.written / 100)
    gold_values = {gold.written, gold.value}
    return any(_close(c, g, gold.decimals) for c in candidates for g in gold_values)


@dataclass(frozen=True, slots=True)
class Correctness:
    """`right`: None where no rule applies (the gold is neither polar nor figures); `rule`: the
    rule that judged ("polarity", "figures", ""); `contained`: the normalised gold is in the answer."""

    right: bool | None
    rule: str
    contained: bool


def polarity(gold: str) -> str | None:
    """The yes or no a gold answer begins with (None: it begins with neither)."""
    return yes_no(gold)


def judge(answer: str, gold: str) -> Correctness:
    """`answer` against one gold answer (see the module doc)."""
    contained = contains_answer(answer, [gold])
    said = polarity(gold)
    if said is not None:
        return Correctness(yes_no(answer) == said, "polarity", contained)
    wanted = figures(gold)
    if wanted:
        stated = figures(answer)
        return Correctness(all(any(states(s, g) for s in stated) for g in wanted), "figures", contained)
    return Correctness(None, "", contained)


def correctness_metrics(answer: str, golds: list[str]) -> dict[str, float]:
    """`correct` (figures or polarity, where one applies) and, where neither does,
    `gold_contained`; a gold that is exactly "yes" or "no" is left to `yes_no_acc`."""
    golds = [g for g in golds if normalize_answer(g) and normalize_answer(g) not in ("yes", "no")]
    if not golds:
        return {}
    judged = [judge(answer, g) for g in golds]
    ruled = [j for j in judged if j.right is not None]
    if ruled:
        return {"correct": float(any(j.right for j in ruled))}
    return {"gold_contained": float(any(j.contained for j in judged))}
