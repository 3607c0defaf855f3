"""Router metrics on hand-made prediction/gold pairs with exact values."""

from __future__ import annotations

import pytest

from rag_assets.core.router_metrics import RoutingGold, RoutingPrediction, score_routing


def P(answers=(), expands=(), refused=False, expelled=0, collapsed=False) -> RoutingPrediction:
    return RoutingPrediction(frozenset(answers), frozenset(expands), refused, expelled, collapsed)


def G(answers=(), expands=()) -> RoutingGold:
    return RoutingGold(frozenset(answers), frozenset(expands))


def test_exact_scores() -> None:
    predictions = [
        P(answers={1, 2}),                       # gold {2, 3}: F1 = 0.5
        P(answers={7}),                          # gold refuse: answering is penalised (F1 0), not a refusal
        P(refused=True),                         # gold refuse: a real refusal
        P(collapsed=True, expelled=2),           # gold refuse: garbage is NOT a refusal
        P(expands={4, 5}, expelled=1),           # gold expand {4}: EXP-PRE 1/2
        P(),                                     # gold refuse, nothing predicted, not collapsed
    ]
    golds = [G(answers={2, 3}), G(), G(), G(), G(expands={4}), G()]
    scores = score_routing(predictions, golds)
    assert scores.samples == 6
    assert scores.ans_f1 == pytest.approx((0.5 + 0.0) / 2)
    assert scores.exp_pre == pytest.approx(0.5)
    assert scores.ref_acc == pytest.approx(1 / 4)
    assert scores.expelled_per_output == pytest.approx(3 / 6)
    assert scores.collapsed_rate == pytest.approx(1 / 6)
    assert scores.parse_failure_rate == pytest.approx(2 / 6)


def test_refusal_mixed_with_actions_is_not_counted_as_refusal() -> None:
    scores = score_routing([P(answers={1}, refused=True)], [G()])
    assert scores.ref_acc == 0.0 and scores.ans_f1 == 0.0


def test_empty_denominators_are_zero_and_lengths_must_match() -> None:
    assert score_routing([], []).as_dict() == {
        "samples": 0, "ans_f1": 0.0, "exp_pre": 0.0, "ref_acc": 0.0,
        "expelled_per_output": 0.0, "collapsed_rate": 0.0, "parse_failure_rate": 0.0}
    with pytest.raises(ValueError, match="1 predictions for 0 gold"):
        score_routing([P()], [])
