"""Routing quality: ANS-F1, EXP-PRE, REF-ACC, expelled ids, collapsed and parse-failure rates.

Fixes three flaws of the reference implementation:
- REF-ACC counts only real refusals: a collapsed (garbage) output is not a refusal;
- ANS-F1 penalises answers on samples whose gold has none (F1 = 0 there), instead of skipping them;
- expelled is a mean *count* of invalid action lines per output, not a percentage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RoutingPrediction:
    answer_ids: frozenset[int]
    expand_ids: frozenset[int]
    refused: bool  # a real "Cannot answer" line
    expelled: int  # action lines that failed validation
    collapsed: bool  # no usable line and no refusal


@dataclass(frozen=True, slots=True)
class RoutingGold:
    answer_ids: frozenset[int]
    expand_ids: frozenset[int]

    @property
    def refuse(self) -> bool:
        return not self.answer_ids and not self.expand_ids


@dataclass(frozen=True, slots=True)
class RoutingScores:
    samples: int
    ans_f1: float
    exp_pre: float
    ref_acc: float
    expelled_per_output: float
    collapsed_rate: float
    parse_failure_rate: float

    def as_dict(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _f1(predicted: frozenset[int], gold: frozenset[int]) -> float:
    hit = len(predicted & gold)
    if not hit:
        return 0.0
    precision, recall = hit / len(predicted), hit / len(gold)
    return 2 * precision * recall / (precision + recall)


def score_routing(predictions: Sequence[RoutingPrediction], golds: Sequence[RoutingGold]) -> RoutingScores:
    """Scores over aligned prediction/gold pairs (NaN-free: an empty denominator scores 0.0)."""
    if len(predictions) != len(golds):
        raise ValueError(f"{len(predictions)} predictions for {len(golds)} gold labels")
    f1s = [
        _f1(p.answer_ids, g.answer_ids) for p, g in zip(predictions, golds) if g.answer_ids or p.answer_ids
    ]  # both empty: nothing to score for answers
    expanded = sum(len(p.expand_ids) for p in predictions)
    right_expansions = sum(len(p.expand_ids & g.expand_ids) for p, g in zip(predictions, golds))
    refusals = [p.refused and not p.answer_ids and not p.expand_ids for p, g in zip(predictions, golds) if g.refuse]
    n = len(predictions)
    return RoutingScores(
        samples=n,
        ans_f1=sum(f1s) / len(f1s) if f1s else 0.0,
        exp_pre=right_expansions / expanded if expanded else 0.0,
        ref_acc=sum(refusals) / len(refusals) if refusals else 0.0,
        expelled_per_output=sum(p.expelled for p in predictions) / n if n else 0.0,
        collapsed_rate=sum(p.collapsed for p in predictions) / n if n else 0.0,
        parse_failure_rate=sum(p.expelled > 0 or p.collapsed for p in predictions) / n if n else 0.0,
    )
