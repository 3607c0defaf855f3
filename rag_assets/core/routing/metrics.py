"""Routing quality: ANS-F1, EXP-PRE, REF-ACC, expelled ids, collapsed and parse-failure rates.

Fixes three flaws of the reference implementation:
- REF-ACC counts only real refusals: a collapsed (garbage) output is not a refusal;
- ANS-F1 penalises answers on samples whose gold has none (F1 = 0 there), instead of skipping them;
- expelled is a mean *count* of invalid action lines per output, not a percentage.

Each rate also says how many views it rests on, and ANS-F1, EXP-PRE and REF-ACC carry 95%
percentile-bootstrap intervals. The bootstrap resamples QUESTIONS when the views are grouped by
question (`score_routing(..., questions=...)`), not views: the views of one question (its top
documents, their expansions) share its wording and its gold, so they succeed or fail together, and
resampling them one by one would pretend to more independent evidence than there is.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import bootstrap

# Bootstrap resamples for the intervals (fixed seed: the same scores, the same interval).
INTERVAL_RESAMPLES = 2000
INTERVAL_LEVEL = 0.95
# The rates that carry an interval (RoutingScores.<rate>_low / <rate>_high).
INTERVAL_RATES = ("ans_f1", "exp_pre", "ref_acc")
# The count each of those rates is a ratio over (RoutingScores.<count>): over a count of 0 a rate is
# undefined (scored 0.0 to stay finite), e.g. EXP-PRE of a router that never wrote an EXPAND line.
RATE_COUNTS = {"ans_f1": "answer_views", "exp_pre": "expand_lines", "ref_acc": "refusal_views"}


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
    # the questions the views come from (the bootstrap's unit; each view its own when not grouped)
    questions: int = 0
    # percentile-bootstrap intervals (INTERVAL_LEVEL) of the three rates, resampling questions
    ans_f1_low: float = 0.0
    ans_f1_high: float = 0.0
    exp_pre_low: float = 0.0
    exp_pre_high: float = 0.0
    ref_acc_low: float = 0.0
    ref_acc_high: float = 0.0

    def interval(self, rate: str) -> str:
        """A rate's interval as shown in tables and metadata, e.g. "0.119-0.578"."""
        if rate not in INTERVAL_RATES:
            raise ValueError(f"{rate!r} has no interval; expected one of {INTERVAL_RATES}")
        return f"{getattr(self, f'{rate}_low'):.3f}-{getattr(self, f'{rate}_high'):.3f}"

    @property
    def ans_f1_interval(self) -> str:
        return self.interval("ans_f1")

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


def ratio_interval(
    numerators: Sequence[float], denominators: Sequence[float], groups: Sequence[Hashable]
) -> tuple[float, float]:
    """The percentile-bootstrap interval of sum(numerators) / sum(denominators) (aligned per view),
    resampling whole `groups` (the views' questions) with replacement. A resample with an empty
    denominator (no gold refusal among the drawn questions, say) has no rate and is left out
    rather than counted as 0. (0, 0) when no group has a denominator, as the rate itself."""
    if not len(numerators) == len(denominators) == len(groups):
        raise ValueError(f"{len(numerators)} numerators, {len(denominators)} denominators, {len(groups)} groups")
    sums: dict[Hashable, list[float]] = {}
    for numerator, denominator, group in zip(numerators, denominators, groups):
        total = sums.setdefault(group, [0.0, 0.0])
        total[0] += numerator
        total[1] += denominator
    per_group = np.asarray(list(sums.values()), dtype=float).reshape(-1, 2)
    if not per_group[:, 1].any():
        return 0.0, 0.0
    drawn = np.random.default_rng(0).integers(0, len(per_group), size=(INTERVAL_RESAMPLES, len(per_group)))
    numerator_sums, denominator_sums = per_group[drawn, 0].sum(axis=1), per_group[drawn, 1].sum(axis=1)
    defined = denominator_sums > 0
    rates = numerator_sums[defined] / denominator_sums[defined]
    tail = 100 * (1 - INTERVAL_LEVEL) / 2
    low, high = np.percentile(rates, [tail, 100 - tail])
    return float(low), float(high)


def score_routing(
    predictions: Sequence[RoutingPrediction],
    golds: Sequence[RoutingGold],
    questions: Sequence[str] | None = None,
) -> RoutingScores:
    """Scores over aligned prediction/gold pairs (NaN-free: an empty denominator scores 0.0).
    `questions`: each view's question id, the unit the intervals resample (None: each view is
    its own unit)."""
    if len(predictions) != len(golds):
        raise ValueError(f"{len(predictions)} predictions for {len(golds)} gold labels")
    if questions is not None and len(questions) != len(golds):
        raise ValueError(f"{len(questions)} question ids for {len(golds)} views")
    groups: Sequence[Hashable] = questions if questions is not None else range(len(golds))
    # per view: (numerator, denominator) of each rate; a view outside a rate's denominator adds (0, 0)
    answers = [
        (_f1(p.answer_ids, g.answer_ids), 1.0) if g.answer_ids or p.answer_ids else (0.0, 0.0)
        for p, g in zip(predictions, golds)
    ]  # both empty: nothing to score for answers
    expansions = [(len(p.expand_ids & g.expand_ids), len(p.expand_ids)) for p, g in zip(predictions, golds)]
    refusals = [
        (float(p.refused and not p.answer_ids and not p.expand_ids), 1.0) if g.refuse else (0.0, 0.0)
        for p, g in zip(predictions, golds)
    ]
    rates, intervals = {}, {}
    for rate, parts in (("ans_f1", answers), ("exp_pre", expansions), ("ref_acc", refusals)):
        numerator, denominator = sum(n for n, _ in parts), sum(d for _, d in parts)
        rates[rate] = numerator / denominator if denominator else 0.0
        low, high = ratio_interval([n for n, _ in parts], [d for _, d in parts], groups)
        intervals |= {f"{rate}_low": low, f"{rate}_high": high}
    n = len(predictions)
    return RoutingScores(
        samples=n,
        **rates,
        expelled_per_output=sum(p.expelled for p in predictions) / n if n else 0.0,
        collapsed_rate=sum(p.collapsed for p in predictions) / n if n else 0.0,
        parse_failure_rate=sum(p.expelled > 0 or p.collapsed for p in predictions) / n if n else 0.0,
        answer_views=int(sum(d for _, d in answers)),
        gold_answer_views=sum(bool(g.answer_ids) for g in golds),
        refusal_views=int(sum(d for _, d in refusals)),
        expand_lines=int(sum(d for _, d in expansions)),
        questions=len(set(groups)),
        **intervals,
    )
