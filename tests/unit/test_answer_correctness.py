"""Answer correctness on figures and polarity (core/evaluation/answer_correctness.py), on gold
answers of FinanceBench's dev file and answers written by hand."""

from __future__ import annotations

import pytest

from rag_assets.core.evaluation.answer_correctness import correctness_metrics, figures, judge

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("gold", "answer", "right"),
    [
        ("$1832.00", "Capital expenditure was $1,832 million in FY2022.", True),
        ("$1832.00", "about 1.83 billion dollars", True),  # in millions, said in billions
        ("$1832.00", "$1,932 million", False),  # 5% off
        ("65.4%", "The ratio is 0.654.", True),  # the fraction states the percentage
        ("65.4%", "6540", False),  # a bare number is no percentage
        ("0.66", "0.66", True),
        ("0.66", "660", False),  # no scale word: not 0.66 thousand
        ("0.01", "roughly 0.0123", True),  # equal at the gold's two decimals
        ("-3.7", "It declined by 3.7 percent.", True),  # the sign said in words
        ("AMCOR's Adj. EBITDA was $2,018mn in FY 2023", "Adjusted EBITDA: $2.018 billion", True),
        ("Effective tax rate in FY2022 was 0.62%, compared to  -14.76% in FY2021.", "0.62% against -14.76%", True),
        ("Effective tax rate in FY2022 was 0.62%, compared to  -14.76% in FY2021.", "It was 0.62%.", False),
        ("No, American Water Works had negative working capital of -$1561M in FY 2022.", "No. -1,561", True),
        ("No, American Water Works had negative working capital of -$1561M in FY 2022.", "Yes, $1,561M", False),
        ("Yes, his name is Richard A. Johnson", "Richard A. Johnson", False),  # no verdict: not right
    ],
)
def test_figures_within_one_percent_and_polarity(gold: str, answer: str, right: bool) -> None:
    assert judge(answer, gold).right is right


def test_years_and_names_are_not_figures() -> None:
    gold = "Boeing forecasts an increase in the production rates for the 737, 777X and 787 aircrafts in 2023."
    assert [f.written for f in figures(gold)] == [737.0, 787.0]
    assert figures("in FY 2021, per the 10-K filed in Q2") == []
    assert [(f.written, f.scale, f.percent) for f in figures("$2,018mn, 36.8% and 1,561 thousand")] == [
        (2018.0, 1e6, False),
        (36.8, 1.0, True),
        (1561.0, 1e3, False),
    ]


def test_other_golds_are_judged_by_containment_and_bare_yes_no_is_left_to_yes_no_accuracy() -> None:
    assert correctness_metrics("They are customer deposits.", ["Customer deposits"]) == {"gold_contained": 1.0}
    assert correctness_metrics("Deposits from customers.", ["Customer deposits"]) == {"gold_contained": 0.0}
    assert correctness_metrics("Yes.", ["yes"]) == {}
    assert correctness_metrics("$0.40 per share", ["$0.40"]) == {"correct": 1.0}
    assert correctness_metrics("", ["$0.40"]) == {"correct": 0.0}


def test_the_report_table_gives_each_question_type_for_rag_hybrid_and_rdr2() -> None:
    from rag_assets.core.corpus.question_sets import Question
    from rag_assets.core.evaluation.correctness_table import correctness_section
    from rag_assets.core.evaluation.scoring import ScoredAnswer

    questions = {
        "m1": Question("m1", "ratio?", ("0.66",), question_type="metrics-generated"),
        "m2": Question("m2", "capex?", ("$1832.00",), question_type="metrics-generated"),
        "d1": Question("d1", "who?", ("Customer deposits",), question_type="domain-relevant"),
        "y1": Question("y1", "is it?", ("yes",), question_type="domain-relevant"),
    }

    def scored(strategy: str, qid: str, **metrics: float) -> ScoredAnswer:
        return ScoredAnswer(qid, strategy, "", -1, metrics)

    answers = [
        scored("rdr2", "m1", correct=1.0, right=1.0),
        scored("rdr2", "m2", correct=0.0, right=0.0),
        scored("rdr2", "d1", right=1.0),  # a short gold without figures: its containment
        scored("rdr2", "y1", right=1.0, yes_no_acc=1.0),  # a bare yes/no: left to yes/no accuracy
        scored("rag-hybrid", "m1", correct=0.0),
        scored("no-retrieval", "m1", correct=1.0),  # not a compared row
        ScoredAnswer("m1", "rdr2", "top_k", 3, {"correct": 1.0}),  # a grid point: not the main row
    ]
    title, header, rows, _, _ = correctness_section(answers, questions, order=["rag-hybrid", "rdr2"])
    assert title == "Answer correctness by question type"
    assert header == ["strategy", "question type", "correct (95% CI)", "gold contained (95% CI)"]
    assert [row[:2] for row in rows] == [
        ["rag-hybrid", "metrics-generated"],
        ["rag-hybrid", "all"],
        ["rdr2", "domain-relevant"],
        ["rdr2", "metrics-generated"],
        ["rdr2", "all"],
    ]
    assert rows[3][2].startswith("0.500 (") and rows[3][2].endswith("n=2") and rows[3][3] == ""
    assert rows[2][2:] == ["", "1.000 (1.000–1.000) n=1"]
    assert rows[4][2].endswith("n=2") and rows[4][3].endswith("n=1")
    # a set without question types has no table
    untyped = {qid: Question(qid, q.query, q.answers) for qid, q in questions.items()}
    assert correctness_section(answers, untyped) is None
