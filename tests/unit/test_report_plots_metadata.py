"""What the evaluation report's Plots tab charts: metrics per strategy, never counts."""

from __future__ import annotations

from rag_assets.defs.evaluation.evaluation_report import plotted_metrics


def test_an_answer_and_an_evidence_metric_per_strategy() -> None:
    results = {
        "rag-hybrid": {"right": 0.1, "f1": 0.31234, "passage_hit": 0.5, "questions": 40, "evidence_words": 120.0},
        "rdr2": {"right": 0.2, "f1": 0.4, "passage_hit": float("nan"), "questions": 40},
    }
    assert plotted_metrics(results) == {"f1 rag-hybrid": 0.3123, "passage_hit rag-hybrid": 0.5, "f1 rdr2": 0.4}


def test_fallbacks_when_f1_or_evidence_metrics_are_absent() -> None:
    assert plotted_metrics({"disco": {"rouge_l": 0.25, "questions": 3}}) == {"rouge_l disco": 0.25}
    assert plotted_metrics({}) == {}
