"""Seed systems against their base: does each reproduced system help on these models and data?

Every seed system is a change to a base strategy (DoTA, ConTReGen and Disco-RAG to retrieve-and-
read's `rag-hybrid`; R4's learned reorder to `rag-hybrid` or to `rdr2`). The reader-based table
gives each row's own mean over its own questions, which does not say whether the change helped:
the rows may rest on different questions, and two overlapping intervals can hide a consistent
per-question gain. So each system is compared with its base on the questions both answered: the
paired per-question difference of every answer and evidence metric both carry, with the 95%
percentile bootstrap of its mean (`evidence.estimate`, the evidence table's helper, fixed seed).

The verdict reads the intervals, nothing else: "helps" when a metric's interval lies above 0 and
none below, "hurts" the other way round, "mixed" when both happen, and otherwise "no measurable
difference on N questions". Where the system gave the reader the same evidence and the reader
gave the same answer on every question, it says so: the system did nothing on these questions.
For R4 it also says how often the learned policy changed the order the reader saw (each answer
records that order: `versions.retrieval.order`, the retrieval ranks as the reader saw them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from rag_assets.core.evaluation.evidence import METRIC_HEADERS, Estimate, estimate
from rag_assets.core.evaluation.scoring import ScoredAnswer

# seed system -> the strategy it changes (the rows the `answers` asset builds them from)
SEED_BASES = {
    "dota": "rag-hybrid",
    "contregen": "rag-hybrid",
    "disco": "rag-hybrid",
    "disco-no-structure": "rag-hybrid",
    "rag-hybrid+r4": "rag-hybrid",
    "rdr2+r4": "rdr2",
}
REORDERING_SYSTEMS = frozenset({"rag-hybrid+r4", "rdr2+r4"})
# the metrics compared, in column order: the answer's, then the evidence's (whichever the set's
# gold labels allow: short answers, long answers, evidence lines, manual sections)
PAIRED_METRICS = ("right", "f1", "rouge_l", "passage_hit", "evidence_recall", "section_hit")
LABELS = {
    "right": "right",
    "f1": "token F1",
    "rouge_l": "ROUGE-L",
    "first_cite_gold": "first cite gold",
    **METRIC_HEADERS,
}


class AnswerRow(Protocol):
    """What the comparison reads from an answer besides its scores (an `AnswerRecord`)."""

    qid: str
    strategy: str
    grid: str
    answer: str
    evidence: str

    @property
    def versions_dict(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class SeedComparison:
    """One seed system against its base on the `questions` both answered."""

    system: str
    base: str
    questions: int
    differences: dict[str, Estimate] = field(default_factory=dict)  # metric -> system minus base
    identical: int = 0  # questions with the same evidence and the same answer as the base
    same_evidence: int = 0  # questions with the same evidence as the base
    order_changed: int | None = None  # R4: questions whose order the policy changed (None: not R4)
    order_recorded: int = 0  # R4: questions whose answer recorded the order the reader saw
    verdict: str = ""

    def as_dict(self) -> dict:
        out = dataclasses.asdict(self)
        out["differences"] = {m: dataclasses.asdict(e) for m, e in self.differences.items()}
        return out


def _changed_order(row: AnswerRow) -> bool | None:
    """Whether the reader saw the evidence out of retrieval order (None: the order is not recorded)."""
    order = (row.versions_dict.get("retrieval") or {}).get("order")
    if order is None:
        return None
    return list(order) != sorted(order)


def _questions(n: int) -> str:
    return f"{n} question" if n == 1 else f"{n} questions"


def _reorder_lines(comparison: SeedComparison) -> list[str]:
    """R4: how often the policy changed the order the reader saw (nothing for other systems)."""
    n, changed, recorded = comparison.questions, comparison.order_changed, comparison.order_recorded
    if changed is None:
        return []
    lines = [f"R4's order recorded for {recorded}/{_questions(n)}"] if recorded < n else []
    if recorded:
        lines.append(
            f"R4 kept retrieval order on {recorded}/{_questions(n)}"
            if changed == 0
            else f"R4 changed the passage order on {changed}/{_questions(recorded)}"
        )
    return lines


def _outcome(comparison: SeedComparison) -> str:
    """What the intervals say (module doc)."""
    n = comparison.questions
    helped = [LABELS[m] for m, e in comparison.differences.items() if e.low > 0]
    hurt = [LABELS[m] for m, e in comparison.differences.items() if e.high < 0]
    if helped and hurt:
        outcome = f"mixed on {_questions(n)}: helps {', '.join(helped)}; hurts {', '.join(hurt)}"
    elif helped:
        outcome = f"helps ({', '.join(helped)}) on {_questions(n)}"
    elif hurt:
        outcome = f"hurts ({', '.join(hurt)}) on {_questions(n)}"
    else:
        outcome = f"no measurable difference on {_questions(n)}"
    if comparison.same_evidence == n:
        outcome += " (same evidence on every question: only the reader's output differs)"
    return outcome


def verdict(comparison: SeedComparison) -> str:
    """The one-line verdict of the module doc, from the intervals and the identity counts."""
    n = comparison.questions
    if n == 0:
        return f"not comparable: no question answered by both {comparison.system} and {comparison.base}"
    lines = _reorder_lines(comparison)
    if comparison.identical == n:
        return ": ".join([*lines, "same evidence, same answers" + ("" if lines else f" on {n}/{_questions(n)}")])
    return ": ".join([*lines, _outcome(comparison)])


def _compare(
    system: str,
    base: str,
    rows: Mapping[str, Mapping[str, AnswerRow]],
    scores: Mapping[str, Mapping[str, Mapping[str, float]]],
    metrics: Sequence[str] = PAIRED_METRICS,
) -> SeedComparison:
    """`system` against `base` on the questions both answered (main comparison only)."""
    mine, theirs = rows[system], rows[base]
    shared = [q for q in mine if q in theirs]
    paired: dict[str, list[float]] = {m: [] for m in metrics}
    for qid in shared:
        a, b = scores.get(system, {}).get(qid, {}), scores.get(base, {}).get(qid, {})
        for m in metrics:
            if m in a and m in b:
                paired[m].append(a[m] - b[m])
    same_evidence = [q for q in shared if mine[q].evidence == theirs[q].evidence]
    identical = sum(mine[q].answer == theirs[q].answer for q in same_evidence)
    order_changed, order_recorded = None, 0
    if system in REORDERING_SYSTEMS:
        recorded = [c for c in (_changed_order(mine[q]) for q in shared) if c is not None]
        order_changed, order_recorded = sum(recorded), len(recorded)
    comparison = SeedComparison(
        system,
        base,
        len(shared),
        {m: estimate(v) for m, v in paired.items() if v},
        identical,
        len(same_evidence),
        order_changed,
        order_recorded,
    )
    return dataclasses.replace(comparison, verdict=verdict(comparison))


def compare_seed_systems(
    answers: Iterable[AnswerRow],
    scored: Iterable[ScoredAnswer],
    bases: Mapping[str, str] = SEED_BASES,
    metrics: Sequence[str] = PAIRED_METRICS,
) -> list[SeedComparison]:
    """Each seed system of `bases` that answered some main-comparison question, against its base
    (when the base answered too), in `bases` order. `answers` and `scored` are the same answers:
    the records (for the evidence, the answer text and the recorded order) and their scores."""
    rows: dict[str, dict[str, AnswerRow]] = {}
    for row in answers:
        if not row.grid:
            rows.setdefault(row.strategy, {})[row.qid] = row
    scores: dict[str, dict[str, dict[str, float]]] = {}
    for s in scored:
        if not s.grid:
            scores.setdefault(s.strategy, {})[s.qid] = s.metrics
    return [
        _compare(system, base, rows, scores, metrics)
        for system, base in bases.items()
        if system in rows and base in rows
    ]


SEED_TITLE = "Seed systems against their base"
# Below this many paired questions the footnote warns that an interval is little more than the
# range of the questions' own differences (with 2, exactly their two values).
FEW_QUESTIONS = 5


def seed_section(comparisons: Sequence[SeedComparison]) -> list[tuple[str, list[str], list[list[str]], str, str]]:
    """The report section (title, header, rows, no plot, footnote), or none without comparisons."""
    if not comparisons:
        return []
    metrics = [m for m in PAIRED_METRICS if any(m in c.differences for c in comparisons)]
    reordering = any(c.order_changed is not None for c in comparisons)
    header = ["system", "base", "questions", *(f"Δ {LABELS[m]} (95% CI)" for m in metrics)]
    header += ["R4 changed order"] if reordering else []
    header += ["verdict"]
    rows: list[list[str]] = []
    for c in comparisons:
        row = [c.system, c.base, str(c.questions)]
        row += [c.differences[m].text(signed=True) if m in c.differences else "" for m in metrics]
        if reordering:
            row += [f"{c.order_changed}/{c.order_recorded}" if c.order_changed is not None else ""]
        rows.append([*row, c.verdict])
    counts = "/".join(str(n) for n in sorted({c.questions for c in comparisons}))
    footnote = (
        "Δ: the system minus its base on the questions both answered, with the 95% percentile bootstrap "
        "interval of the paired per-question difference (fixed seed). helps / hurts: some metric's interval "
        "lies above / below 0 (and none the other way); otherwise no measurable difference on these questions. "
        "Nothing was tuned to these questions: a seed system that does not help here is reported as such."
    )
    fewest = min(c.questions for c in comparisons)
    if 0 < fewest < FEW_QUESTIONS:
        footnote += (
            f" On {_questions(fewest)} a percentile bootstrap cannot reach beyond the questions' own differences: "
            "helps / hurts there says they all moved the same way, not that the effect would hold on more questions."
        )
    if reordering:
        footnote += (
            " R4 changed order: questions where the learned policy moved a passage out of retrieval order, of "
            "those whose answer recorded the order the reader saw."
        )
    return [(f"{SEED_TITLE} (paired, {counts} questions)", header, rows, "", footnote)]
