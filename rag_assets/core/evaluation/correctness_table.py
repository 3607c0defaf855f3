"""The report's answer-correctness table: each question type of a set that has types (FinanceBench:
metrics-generated, domain-relevant, novel-generated), for rag-hybrid and the rdr2 rows.

`correct` (figures within 1%, or the gold's yes/no: core/evaluation/answer_correctness.py) with its
95% bootstrap interval over the type's questions, and, for the golds neither rule applies to,
containment of the normalised gold as a second figure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.evaluation.report import Section
from rag_assets.core.evaluation.scoring import ScoredAnswer
from rag_assets.core.routing.metrics import mean_interval

ALL_TYPES = "all"


def _cell(values: Sequence[float]) -> str:
    if not values:
        return ""
    low, high = mean_interval(list(values))
    return f"{sum(values) / len(values):.3f} ({low:.3f}–{high:.3f}) n={len(values)}"


def _compared(strategy: str) -> bool:
    return strategy.startswith(("rag-hybrid", "rdr2"))


def judged(answer: ScoredAnswer) -> tuple[str, float] | None:
    """("correct", value) where a rule judged the answer; else ("gold_contained", value): a long
    gold's containment, or a short gold's (its `right`); None for a bare yes/no gold (`yes_no_acc`)."""
    metrics = answer.metrics
    if "correct" in metrics:
        return "correct", metrics["correct"]
    if "yes_no_acc" in metrics:
        return None
    if "gold_contained" in metrics:
        return "gold_contained", metrics["gold_contained"]
    return ("gold_contained", metrics["right"]) if "right" in metrics else None


def correctness_section(
    scored: Sequence[ScoredAnswer], questions: Mapping[str, Question], order: Sequence[str] = ()
) -> Section | None:
    """The table (strategies in `order`, then as met), or None where no question has a type or no
    compared row was judged."""
    typed = {qid: q.question_type for qid, q in questions.items() if q.question_type}
    values: dict[tuple[str, str], dict[str, list[float]]] = {}
    for answer in sorted(scored, key=lambda s: s.qid):
        verdict = judged(answer)
        if answer.grid or not _compared(answer.strategy) or answer.qid not in typed or verdict is None:
            continue
        for kind in (typed[answer.qid], ALL_TYPES):
            values.setdefault((answer.strategy, kind), {"correct": [], "gold_contained": []})[verdict[0]].append(
                verdict[1]
            )
    if not any(bucket["correct"] for bucket in values.values()):
        return None
    kinds = [*sorted({kind for _, kind in values} - {ALL_TYPES}), ALL_TYPES]
    met = [strategy for strategy, _ in values]
    strategies = list(dict.fromkeys([*(s for s in order if s in met), *met]))
    rows = [
        [strategy, kind, _cell(values[strategy, kind]["correct"]), _cell(values[strategy, kind]["gold_contained"])]
        for strategy in strategies
        for kind in kinds
        if (strategy, kind) in values
    ]
    return (
        "Answer correctness by question type",
        ["strategy", "question type", "correct (95% CI)", "gold contained (95% CI)"],
        rows,
        "",
        "*correct*: every figure of the gold answer stated within 1% (scale words and percent signs read, "
        "years left out), or, where the gold begins with yes or no, the same verdict first; *gold contained*: "
        "the normalised gold answer in the answer, for golds with neither figures nor a verdict. n: the "
        "questions each figure rests on.",
    )
