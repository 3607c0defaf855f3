"""Routing quality: ANS-F1, EXP-PRE, REF-ACC, expelled ids, collapsed and parse-failure rates.

Fixes three flaws of the reference implementation:
- REF-ACC counts only real refusals: a collapsed (garbage) output is not a refusal;
- ANS-F1 penalises answers on samples whose gold has none (F1 = 0 there), instead of skipping them;
- expelled is a mean *count* of invalid action lines per output, not a percentage.

Each rate also says how many views it rests on, and ANS-F1 carries a bootstrap interval over
those views: a validation fold of a few real questions has a handful of answer views (nq_wiki's:
7), where one view moves ANS-F1 by a tenth.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import bootstrap

# Resamples of the per-view F1s for ANS-F1's interval (fixed seed: the same scores, the same interval).
INTERVAL_RESAMPLES = 2000
INTERVAL_LEVEL = 0.95


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
    # what each rate rests on: the views ANS-F1 averages over (a gold or a predicted ANSWER), the
    # views with a gold ANSWER among them, the gold refusals (REF-ACC) and the EXPAND lines (EXP-PRE)
    answer_views: int = 0
    gold_answer_views: int = 0
    refusal_views: int = 0
    expand_lines: int = 0
    # ANS-F1's percentile-bootstrap interval (INTERVAL_LEVEL) over the answer views
    ans_f1_low: float = 0.0
    ans_f1_high: float = 0.0

    @property
    def ans_f1_interval(self) -> str:
        """ANS-F1's interval as shown in tables and metadata, e.g. "0.119-0.578"."""
        return f"{self.ans_f1_low:.3f}-{self.ans_f1_high:.3f}"

    def as_dict(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _f1(predicted: frozenset[int], gold: frozenset[int]) -> float:
    hit = len(predicted & gold)
    if not hit:
        return 0.0
    precision, recall = hit / len(predicted), hit / len(gold)
    return 2 * precision * recall / (precision + recall)


def mean_interval(values: Sequence[float]) -> tuple[float, float]:
    """The percentile-bootstrap interval of the mean of `values` (a point when fewer than two or
    all equal; (0, 0) when empty)."""
    if not values:
        return 0.0, 0.0
    data = np.asarray(values, dtype=float)
    if len(data) < 2 or np.all(data == data[0]):
        return float(data.mean()), float(data.mean())
    found = bootstrap(
        (data,),
        np.mean,
        confidence_level=INTERVAL_LEVEL,
        n_resamples=INTERVAL_RESAMPLES,
        method="percentile",
        rng=np.random.default_rng(0),
    )
    return float(found.confidence_interval.low), float(found.confidence_interval.high)


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
    low, high = mean_interval(f1s)
    return RoutingScores(
        samples=n,
        ans_f1=sum(f1s) / len(f1s) if f1s else 0.0,
        exp_pre=right_expansions / expanded if expanded else 0.0,
        ref_acc=sum(refusals) / len(refusals) if refusals else 0.0,
        expelled_per_output=sum(p.expelled for p in predictions) / n if n else 0.0,
        collapsed_rate=sum(p.collapsed for p in predictions) / n if n else 0.0,
        parse_failure_rate=sum(p.expelled > 0 or p.collapsed for p in predictions) / n if n else 0.0,
        answer_views=len(f1s),
        gold_answer_views=sum(bool(g.answer_ids) for g in golds),
        refusal_views=len(refusals),
        expand_lines=expanded,
        ans_f1_low=low,
        ans_f1_high=high,
    )
