"""Evaluation metrics and aggregation on hand-made answers with exact expected values."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pytest

from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.evaluation.scoring import (
    aggregate,
    aggregate_grid,
    answer_metrics,
    evidence_recall,
    headline_metrics,
    metric_intervals,
    passage_hit,
    score_answer,
    score_answers,
    section_hit,
)


@dataclass
class Row:
    qid: str
    answer: str
    strategy: str = "rdr2"
    grid: str = ""
    grid_value: int = -1
    evidence: str = ""
    evidence_words: int = 0
    cited_texts: list[str] = field(default_factory=list)
    cited_heading_paths: list[str] = field(default_factory=list)
    router_prompt_tokens: int = 0
    router_output_tokens: int = 0
    engine_calls: int = 0
    seconds: float = 0.0


SHORT = Question("q1", "How hot for green tea?", answers=("80 C",))
YES = Question(
    "q2",
    "Can I adopt?",
    answers=("yes",),
    evidences=("<p>You may be able to adopt a child if you’re aged 21 or over.</p>", "<li>you live in the UK</li>"),
)
LONG = Question(
    "q3",
    "How do I charge?",
    answers=(
        "Plug in the supplied charger and wait until the green light shows that the battery is fully charged now.",
    ),
    section_path=("Getting started", "Battery"),
)
UNANSWERABLE = Question("q4", "What is the moon made of?", not_answerable=True)


def test_answer_metrics_apply_by_gold_kind() -> None:
    # p=2/4, r=1; the gold's figure 80 is stated: correct
    assert answer_metrics("It is 80 C.", SHORT.answers) == {"right": 1.0, "f1": pytest.approx(2 / 3), "correct": 1.0}
    assert answer_metrics("It is 90 C.", SHORT.answers)["correct"] == 0.0
    assert answer_metrics("Yes, if you are over 21.", YES.answers) == {
        "right": 1.0,
        "f1": pytest.approx(2 / 7),
        "yes_no_acc": 1.0,
    }
    assert answer_metrics("No.", YES.answers) == {"right": 0.0, "f1": 0.0, "yes_no_acc": 0.0}
    long = answer_metrics("plug in the supplied charger", LONG.answers)
    # a long gold without figures or a verdict: its containment beside ROUGE-L
    assert set(long) == {"rouge_l", "gold_contained"} and 0 < long["rouge_l"] < 1 and long["gold_contained"] == 0.0
    assert answer_metrics("anything", ()) == {}


def test_evidence_metrics_exact_values() -> None:
    assert passage_hit("# Boiling\ngreen tea | 80 C", SHORT.answers) == 1.0
    assert passage_hit("black tea | 100 C", SHORT.answers) == 0.0
    assert passage_hit("Yes it is", YES.answers) is None  # yes/no gold is never in a document
    assert passage_hit("x", LONG.answers) is None
    cited = ["You may be able to adopt a child if you're aged 21 or over.", "Unrelated line"]
    assert evidence_recall(cited, YES.evidences) == 0.5
    assert evidence_recall([*cited, "you live in the UK"], YES.evidences) == 1.0
    assert evidence_recall([], YES.evidences) == 0.0
    assert evidence_recall(cited, ()) is None
    assert section_hit(["Phone > Getting started > Battery > Charging"], LONG.section_path) == 1.0
    assert section_hit(["Phone > Getting started", "Phone > Settings > Battery"], LONG.section_path) == 0.0
    assert section_hit([("Phone", "getting started", "BATTERY")], LONG.section_path) == 1.0
    assert section_hit(["Phone > Battery"], ()) is None


def test_score_answer_keeps_only_applicable_metrics() -> None:
    row = Row(
        "q4",
        "I cannot tell.",
        evidence="a b c",
        evidence_words=3,
        router_prompt_tokens=100,
        router_output_tokens=10,
        engine_calls=2,
        seconds=0.5,
    )
    scored = score_answer(row, UNANSWERABLE)
    assert scored.metrics == {
        "echoed": 0.0,  # every answer: did the reader echo its prompt
        "evidence_words": 3.0,
        "router_prompt_tokens": 100.0,
        "router_output_tokens": 10.0,
        "engine_calls": 2.0,
        "seconds": 0.5,
    }
    yes = score_answer(Row("q2", "yes", cited_texts=["you live in the UK"]), YES)
    assert yes.metrics["yes_no_acc"] == 1.0 and yes.metrics["evidence_recall"] == 0.5
    assert "passage_hit" not in yes.metrics and "section_hit" not in yes.metrics


def test_aggregation_means_percentiles_and_no_nan() -> None:
    questions = {q.qid: q for q in (SHORT, YES, UNANSWERABLE)}
    rows = [
        Row("q1", "80 C", strategy="rag", evidence="80 C", evidence_words=2, seconds=1.0, engine_calls=1),
        Row("q2", "no", strategy="rag", evidence="", evidence_words=0, seconds=3.0, engine_calls=1),
        Row("q4", "?", strategy="rag", evidence_words=4, seconds=2.0, engine_calls=1),
        Row("q1", "100 C", strategy="none", seconds=1.0),
        Row("q1", "80 C", grid="top_k", grid_value=3, evidence="80 C", evidence_words=2, seconds=1.0),
        Row("q1", "100 C", grid="top_k", grid_value=1, evidence="100 C", evidence_words=2, seconds=1.0),
    ]
    scored = score_answers(rows, questions)
    results = aggregate(scored)
    assert list(results) == ["rag", "none"]
    rag = results["rag"]
    assert rag["right"] == 0.5 and rag["f1"] == 0.5  # q1 right, q2 wrong, q4 has no gold answer
    assert rag["yes_no_acc"] == 0.0 and rag["passage_hit"] == 1.0 and rag["evidence_recall"] == 0.0
    assert rag["evidence_words"] == 2.0 and rag["engine_calls"] == 1.0 and rag["questions"] == 3.0
    assert rag["seconds_p50"] == 2.0 and rag["seconds_p95"] == pytest.approx(2.9)
    assert "section_hit" not in rag and "rouge_l" not in rag and "seconds" not in rag
    assert results["none"]["right"] == 0.0 and "yes_no_acc" not in results["none"]
    grid = aggregate_grid(scored)
    assert list(grid["top_k"]) == [1, 3]
    assert grid["top_k"][1]["right"] == 0.0 and grid["top_k"][3]["right"] == 1.0
    assert all(math.isfinite(v) for s in results.values() for v in s.values())
    assert headline_metrics(results)[:3] == ["right", "f1", "yes_no_acc"]


def test_batched_rows_have_no_p95_and_rates_have_intervals() -> None:
    short = [Question(f"s{i}", "How hot for green tea?", answers=("80 C",)) for i in range(10)]
    # one batch: every answer carries the batch mean, so a p95 would repeat the p50
    rows = [Row(q.qid, "80 C" if i < 6 else "no", strategy="rag", seconds=0.4) for i, q in enumerate(short)]
    rows.append(Row("s0", "80 C", grid="top_k", grid_value=1, seconds=0.4))
    scored = score_answers(rows, {q.qid: q for q in short})
    rag = aggregate(scored)["rag"]
    assert rag["seconds_p50"] == 0.4 and "seconds_p95" not in rag and rag["right"] == 0.6
    intervals = metric_intervals(scored)
    assert list(intervals) == ["rag"]  # the grid rows are not part of the main comparison
    low, high = intervals["rag"]["right"]
    assert 0.2 <= low < 0.6 < high <= 0.95
    assert intervals["rag"]["passage_hit"] == (0.0, 0.0)  # no evidence given: every question misses


def test_equal_answers_in_another_order_get_the_same_interval() -> None:
    """Intervals follow the questions, not the catalogue's row order: a strategy that gives the
    same answers as another (R4 keeping retrieval order) shows the same interval."""
    questions = [Question(f"q{i}", "How hot for green tea?", answers=("80 C",)) for i in range(12)]
    texts = ["80 C" + " and more" * (i % 5) for i in range(12)]  # token F1 1.0, 0.67, 0.5, 0.4, 0.33
    rows = [Row(q.qid, t, strategy="rag") for q, t in zip(questions, texts)]
    rows += [Row(q.qid, t, strategy="rag+r4") for q, t in reversed(list(zip(questions, texts)))]
    intervals = metric_intervals(score_answers(rows, {q.qid: q for q in questions}))
    assert intervals["rag"]["f1"] == intervals["rag+r4"]["f1"]
    assert intervals["rag"]["f1"][0] < 0.6 < intervals["rag"]["f1"][1]
