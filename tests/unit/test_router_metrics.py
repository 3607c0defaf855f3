"""Router metrics on hand-made prediction/gold pairs with exact values."""

from __future__ import annotations

import pytest

from rag_assets.core.routing.metrics import (
    RoutingGold,
    RoutingPrediction,
    mean_interval,
    ratio_interval,
    score_routing,
)


def P(answers=(), expands=(), refused=False, expelled=0, collapsed=False) -> RoutingPrediction:
    return RoutingPrediction(frozenset(answers), frozenset(expands), refused, expelled, collapsed)


def G(answers=(), expands=()) -> RoutingGold:
    return RoutingGold(frozenset(answers), frozenset(expands))


def test_exact_scores() -> None:
    predictions = [
        P(answers={1, 2}),  # gold {2, 3}: F1 = 0.5
        P(answers={7}),  # gold refuse: answering is penalised (F1 0), not a refusal
        P(refused=True),  # gold refuse: a real refusal
        P(collapsed=True, expelled=2),  # gold refuse: garbage is NOT a refusal
        P(expands={4, 5}, expelled=1),  # gold expand {4}: EXP-PRE 1/2
        P(),  # gold refuse, nothing predicted, not collapsed
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
    # what each rate rests on
    assert (scores.answer_views, scores.gold_answer_views, scores.refusal_views, scores.expand_lines) == (2, 1, 4, 2)
    # ANS-F1's bootstrap interval over its two views (F1 0.5 and 0): a resample's mean is 0, 0.25 or
    # 0.5 with chances 1/4, 1/2, 1/4, so the 2.5th and 97.5th percentiles are the extremes
    assert (scores.ans_f1_low, scores.ans_f1_high) == (0.0, 0.5)
    assert scores.ans_f1_interval == "0.000-0.500"
    # EXP-PRE rests on one view (1 right of 2 lines): every resample that draws it says 0.5, and a
    # resample without it has no EXPAND line, so no rate (left out, not counted as 0)
    assert (scores.exp_pre_low, scores.exp_pre_high) == (0.5, 0.5) and scores.interval("exp_pre") == "0.500-0.500"
    assert scores.ref_acc_low == 0.0 and scores.ref_acc_high >= 0.25  # one refusal right of four
    assert scores.questions == 6  # no question ids: each view is its own unit


def test_refusal_mixed_with_actions_is_not_counted_as_refusal() -> None:
    scores = score_routing([P(answers={1}, refused=True)], [G()])
    assert scores.ref_acc == 0.0 and scores.ans_f1 == 0.0


def test_empty_denominators_are_zero_and_lengths_must_match() -> None:
    assert score_routing([], []).as_dict() == {
        "samples": 0,
        "ans_f1": 0.0,
        "exp_pre": 0.0,
        "ref_acc": 0.0,
        "expelled_per_output": 0.0,
        "collapsed_rate": 0.0,
        "parse_failure_rate": 0.0,
        "answer_views": 0,
        "gold_answer_views": 0,
        "refusal_views": 0,
        "expand_lines": 0,
        "questions": 0,
        "ans_f1_low": 0.0,
        "ans_f1_high": 0.0,
        "exp_pre_low": 0.0,
        "exp_pre_high": 0.0,
        "ref_acc_low": 0.0,
        "ref_acc_high": 0.0,
    }
    with pytest.raises(ValueError, match="1 predictions for 0 gold"):
        score_routing([P()], [])


def test_ans_f1_interval_narrows_with_more_views_and_is_reproducible() -> None:
    """A handful of answer views leaves ANS-F1 wide open; the same F1s over 20x the views pin it."""
    few = [P(answers={1}), P(answers={1}), P(answers={9}), P(answers={1, 2})]
    few_gold = [G(answers={1}), G(answers={1}), G(answers={1}), G(answers={1})]
    small = score_routing(few, few_gold)
    large = score_routing(few * 20, few_gold * 20)
    assert small.ans_f1 == pytest.approx(large.ans_f1) == pytest.approx((1 + 1 + 0 + 2 / 3) / 4)
    assert small.ans_f1_low <= small.ans_f1 <= small.ans_f1_high
    assert large.ans_f1_low <= large.ans_f1 <= large.ans_f1_high
    assert small.ans_f1_high - small.ans_f1_low > 2 * (large.ans_f1_high - large.ans_f1_low) > 0
    assert score_routing(few, few_gold) == small  # fixed seed: the same interval every time
    assert mean_interval([0.5]) == mean_interval([0.5, 0.5]) == (0.5, 0.5)
    assert mean_interval([]) == (0.0, 0.0)


def test_intervals_resample_questions_not_views() -> None:
    """Two questions of ten views each, one routed right (F1 1) and one wrong (F1 0). Resampling
    questions, a resample is both right (1.0), both wrong (0.0) or one of each (0.5): the interval
    is 0-1, as two questions warrant. Resampling the twenty views as if independent would claim
    about 0.3-0.7."""
    predictions = [P(answers={1})] * 20
    golds = [G(answers={1})] * 10 + [G(answers={2})] * 10
    by_question = score_routing(predictions, golds, ["right"] * 10 + ["wrong"] * 10)
    assert (by_question.ans_f1, by_question.questions) == (0.5, 2)
    assert (by_question.ans_f1_low, by_question.ans_f1_high) == (0.0, 1.0)
    by_view = score_routing(predictions, golds)
    assert 0.25 < by_view.ans_f1_low < 0.5 < by_view.ans_f1_high < 0.75
    with pytest.raises(ValueError, match="3 question ids for 20 views"):
        score_routing(predictions, golds, ["a", "b", "c"])


def test_ratio_interval_leaves_out_resamples_without_a_denominator() -> None:
    # REF-ACC of three questions: q1 refuses its gold refusal, q2 has none, q3 answers its gold refusal
    assert ratio_interval([1, 0, 0], [1, 0, 1], ["q1", "q2", "q3"]) == (0.0, 1.0)
    # one question with two EXPAND lines, one right: 0.5 whenever drawn, undefined otherwise
    assert ratio_interval([1, 0, 0], [2, 0, 0], ["q1", "q2", "q3"]) == (0.5, 0.5)
    # a question's views are summed before resampling: 3 right of 4 lines, however drawn
    assert ratio_interval([1, 2], [2, 2], ["q1", "q1"]) == (0.75, 0.75)
    assert ratio_interval([], [], []) == (0.0, 0.0) == ratio_interval([0, 0], [0, 0], ["a", "b"])
    with pytest.raises(ValueError, match="2 numerators, 2 denominators, 1 groups"):
        ratio_interval([1, 0], [1, 1], ["a"])


# --- routed samples: recorded router outputs, parsed against the stored view, then scored ---------


def _phone():
    from rag_assets.core.routing.subtree import DocumentRouting
    from tests.unit.phone_manual import phone_nodes

    return DocumentRouting("phone", phone_nodes())


def _stored_sample(qid: str):
    from rag_assets.core.routing.samples import RoutingSample

    d = _phone()
    view = d.light([2])
    return RoutingSample(
        f"s-{qid}",
        qid,
        "q?",
        "phone",
        "initial",
        view.render(),
        tuple(sorted(view.visible_content_ids)),
        tuple(sorted(view.collapsed_heading_ids)),
        tuple(sorted(d.seen)),
    ), d.nodes


def test_recorded_router_outputs_are_parsed_against_the_restored_view_and_scored() -> None:
    from rag_assets.core.routing.action_format import parse_router_output
    from rag_assets.core.routing.held_out_routing import RoutedSample, score_routed
    from rag_assets.core.routing.samples import restore

    outputs = [
        "[ANSWER] 2: Charge the battery",  # gold answer 2: F1 1
        "[EXPAND] 4: Display\n[EXPAND] 5: Dark mode",  # gold expand 4; 5 is hidden content: expelled
        "Cannot answer",  # gold refuse: a real refusal
        "The battery lasts long.",  # gold refuse: collapsed, not a refusal
    ]
    golds = [G(answers={2}), G(expands={4}), G(), G()]
    routed = []
    for i, text in enumerate(outputs):
        sample, nodes = _stored_sample(f"q{i}")
        _, view = restore(sample, nodes)
        routed.append(RoutedSample(sample, parse_router_output(text, view), text))
    scores = score_routed(routed, golds)
    assert (scores.samples, scores.ans_f1, scores.exp_pre, scores.ref_acc) == (4, 1.0, 1.0, 0.5)
    assert scores.questions == 4  # the intervals resample the samples' questions (q0..q3)
    assert (scores.expelled_per_output, scores.collapsed_rate, scores.parse_failure_rate) == (0.25, 0.25, 0.5)


def test_stored_samples_in_duckdb(tmp_path) -> None:
    import duckdb
    import pyarrow as pa

    from rag_assets.core.routing.held_out_routing import load_routing_samples
    from rag_assets.core.store.collections import replace_collection
    from rag_assets.core.store.routing_tables import labelled_collections

    with duckdb.connect(str(tmp_path / "c.duckdb")) as con:
        assert labelled_collections(con) == []  # no routing_actions table yet
        sample, _ = _stored_sample("q1")
        failed, _ = _stored_sample("q2")
        failed = failed.__class__(*(("s-failed", *tuple(getattr(failed, f) for f in failed.__slots__[1:]))))
        fields = list(sample.__slots__)
        replace_collection(
            con,
            "tiny",
            {
                "routing_subtrees": pa.table(
                    {"collection": ["tiny", "tiny"], **{f: [getattr(sample, f), getattr(failed, f)] for f in fields}}
                ),
                "routing_actions": pa.table(
                    {
                        "collection": ["tiny", "tiny"],
                        "subtree_id": ["s-q1", "s-failed"],
                        "qid": ["q1", "q2"],
                        "fold": ["validation", "validation"],
                        "teacher": ["llm", "llm"],
                        "target": ["[EXPAND] 4: Display", ""],
                        "answer_ids": pa.array([[], []], pa.list_(pa.int32())),
                        "expand_ids": pa.array([[4], []], pa.list_(pa.int32())),
                        "kind": ["expand", "failed"],
                        "raw": ['{"expand": [4]}', "garbage"],
                    }
                ),
            },
        )
        loaded = load_routing_samples(con, "tiny", fold="validation")
        assert labelled_collections(con) == ["tiny"]
    assert [(s.subtree_id, g) for s, g in loaded] == [("s-q1", G(expands={4}))]  # the failed label is never gold
    assert loaded[0][0] == sample


def test_router_metrics_table_of_an_older_catalogue_stays_readable(tmp_path) -> None:
    import duckdb
    import pyarrow as pa

    from rag_assets.core.store.collections import replace_collection
    from rag_assets.core.store.routing_tables import load_router_metrics

    with duckdb.connect(str(tmp_path / "c.duckdb")) as con:
        # the layout before questions, dev_test and the intervals were recorded
        con.execute(
            "CREATE TABLE router_metrics (collection VARCHAR NOT NULL, model VARCHAR NOT NULL, samples INTEGER NOT "
            "NULL, ans_f1 DOUBLE NOT NULL, exp_pre DOUBLE NOT NULL, ref_acc DOUBLE NOT NULL, expelled_per_output "
            "DOUBLE NOT NULL, collapsed_rate DOUBLE NOT NULL, parse_failure_rate DOUBLE NOT NULL)"
        )
        con.execute("INSERT INTO router_metrics VALUES ('old', 'encoder', 28, 0.6, 0.0, 0.9, 0, 0, 0)")
        old = {"samples": 28, "ans_f1": 0.6, "exp_pre": 0.0, "ref_acc": 0.9}
        old |= {"expelled_per_output": 0.0, "collapsed_rate": 0.0, "parse_failure_rate": 0.0}
        assert load_router_metrics(con, "old") == {"encoder": old}
        new = {"collection": ["new"], "model": ["encoder"], "samples": pa.array([114], pa.int32())}
        new |= {"questions": pa.array([19], pa.int32()), "dev_test": [True]}
        new |= {name: [value] for name, value in old.items() if name != "samples"}
        new |= {"ans_f1_low": [0.4], "ans_f1_high": [0.8], "exp_pre_low": [0.0], "exp_pre_high": [0.0]}
        new |= {"ref_acc_low": [0.75], "ref_acc_high": [1.0]}
        counts = {"answer_views": 90, "gold_answer_views": 80, "refusal_views": 24, "expand_lines": 0}
        new |= {name: pa.array([value], pa.int32()) for name, value in counts.items()}
        replace_collection(con, "new", {"router_metrics": pa.table(new)})  # adds the new columns
        # the old row's counts are unknown (NULL), not 0: left out, so no rate of it reads as undefined
        assert load_router_metrics(con, "old") == {"encoder": {**old, "questions": 0, "dev_test": 0}}
        assert load_router_metrics(con, "new") == {
            "encoder": {
                **old,
                "samples": 114,
                "questions": 19,
                "dev_test": 1,
                **{"ans_f1_low": 0.4, "ans_f1_high": 0.8, "exp_pre_low": 0.0, "exp_pre_high": 0.0},
                **{"ref_acc_low": 0.75, "ref_acc_high": 1.0},
                **counts,
            }
        }
