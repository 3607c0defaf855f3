"""The question-only similarity teacher: the sentence embedder scores visible content nodes and
collapsed headings (heading text + its unseen content) against the question; ANSWER above one
threshold, EXPAND above another (best few first), else refuse. `calibrate_thresholds` picks both
thresholds on a grid to maximise F1 against labelled views (e.g. the oracle on the train fold),
with defaults when nothing is labelled."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from rag_assets.core.routing.subtree import DocumentRouting
from rag_assets.core.routing.teachers.label import TeacherLabel, TeacherTask, make_label


class TextEncoder(Protocol):
    """What the similarity teacher needs of `rag_assets.core.index.embedding.Embedder`."""

    def encode(self, texts: Sequence[str], *, progress: bool | None = None) -> np.ndarray: ...


HEADING_CONTEXT_WORDS = 100
DEFAULT_GRID = tuple(round(0.05 * i, 2) for i in range(1, 20))  # 0.05 .. 0.95


@dataclass(frozen=True, slots=True)
class SimilarityThresholds:
    answer: float = 0.45  # cosine (question, paragraph) to ANSWER
    expand: float = 0.40  # cosine (question, heading + its hidden text) to EXPAND
    max_answers: int = 3  # best-scoring first; the router grammar allows 8 lines
    max_expands: int = 2


@dataclass(frozen=True, slots=True)
class SimilarityScores:
    answer: dict[int, float]  # visible content node -> cosine with the question
    expand: dict[int, float]  # collapsed heading -> cosine with the question


@dataclass(frozen=True, slots=True)
class Calibration:
    thresholds: SimilarityThresholds
    labelled: int  # labelled views used
    answer_f1: float | None  # best F1 on the grid; None = nothing labelled, default kept
    expand_f1: float | None
    details: dict[str, float] = field(default_factory=dict)


def heading_text(doc: DocumentRouting, heading_id: int, words: int = HEADING_CONTEXT_WORDS) -> str:
    """A collapsed heading as the similarity teacher sees it: its text and its unseen content."""
    hidden = [doc.nodes[c].text for c, h in doc.section.items() if h == heading_id and c not in doc.seen]
    return " ".join(f"{doc.nodes[heading_id].text}: {' '.join(hidden)}".split()[:words])


def similarity_scores(encoder: TextEncoder, tasks: Sequence[TeacherTask]) -> list[SimilarityScores]:
    """Cosine of the question with every visible content node and collapsed heading; all texts of
    all tasks are embedded in one call (each distinct text once)."""
    texts: dict[str, int] = {}

    def slot(text: str) -> int:
        return texts.setdefault(text, len(texts))

    plan = []
    for t in tasks:
        q = slot(t.query)
        answers = {n: slot(t.doc.nodes[n].text) for n in sorted(t.view.visible_content_ids)}
        expands = {h: slot(heading_text(t.doc, h)) for h in sorted(t.view.collapsed_heading_ids)}
        plan.append((q, answers, expands))
    if not texts:
        return []
    vectors = np.asarray(encoder.encode(list(texts), progress=False), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors / np.where(norms == 0, 1, norms)
    out = []
    for q, answers, expands in plan:
        out.append(
            SimilarityScores(
                {n: float(vectors[q] @ vectors[i]) for n, i in answers.items()},
                {h: float(vectors[q] @ vectors[i]) for h, i in expands.items()},
            )
        )
    return out


def pick_best(scores: dict[int, float], threshold: float, limit: int) -> list[int]:
    ranked = sorted((s, -n) for n, s in scores.items() if s >= threshold)
    return sorted(-n for _, n in ranked[::-1][:limit])


def similarity_label(doc: DocumentRouting, scores: SimilarityScores, thresholds: SimilarityThresholds) -> TeacherLabel:
    answers = pick_best(scores.answer, thresholds.answer, thresholds.max_answers)
    expands = pick_best(scores.expand, thresholds.expand, thresholds.max_expands)
    shown = sorted({**scores.answer, **scores.expand}.items(), key=lambda kv: -kv[1])[:6]
    raw = f"similarity answer>={thresholds.answer} expand>={thresholds.expand}; top: " + ", ".join(
        f"{n}={s:.3f}" for n, s in shown
    )
    return make_label(doc, answers, expands, raw, "similarity")


def similarity_teacher(
    encoder: TextEncoder, tasks: Sequence[TeacherTask], thresholds: SimilarityThresholds | None = None
) -> list[TeacherLabel]:
    thresholds = thresholds or SimilarityThresholds()
    return [similarity_label(t.doc, s, thresholds) for t, s in zip(tasks, similarity_scores(encoder, tasks))]


def _mean_view_f1(predicted: Sequence[set], gold: Sequence[set]) -> float:
    f1s = [_micro_f1(p, g) for p, g in zip(predicted, gold) if p or g]
    return sum(f1s) / len(f1s) if f1s else 0.0


def decision_f1(answered: Sequence[set[int]], expanded: Sequence[set[int]], golds: Sequence[TeacherLabel]) -> float:
    """Mean over views of the F1 of the view's whole decision (ANSWER and EXPAND actions) against
    the gold's; refusing a view the gold refuses scores 1, acting on it 0."""
    total = 0.0
    for answers, expands, gold in zip(answered, expanded, golds):
        predicted = {("answer", n) for n in answers} | {("expand", n) for n in expands}
        wanted = {("answer", n) for n in gold.answer_ids} | {("expand", n) for n in gold.expand_ids}
        total += 1.0 if not predicted and not wanted else _micro_f1(predicted, wanted)
    return total / len(golds) if golds else 0.0


def _micro_f1(predicted: set, gold: set) -> float:
    hit = len(predicted & gold)
    return 2 * hit / (len(predicted) + len(gold)) if hit else 0.0


def calibrate_thresholds(  # noqa: C901 — per action kind, the grid search and its documented exceptions
    scores: Sequence[SimilarityScores],
    golds: Sequence[TeacherLabel],
    *,
    grid: Sequence[float] = DEFAULT_GRID,
    default: SimilarityThresholds | None = None,
    objective: str = "micro",
    answer_limits: Sequence[int] | None = None,
) -> Calibration:
    """Per action kind, the grid threshold with the best F1 of the decisions against `golds`
    (ties: the lowest threshold); the default where no gold has that action (but see EXPAND under
    "view" below).

    `objective`: "micro" = F1 over all (view, node) decisions; "view" = for ANSWER, the mean
    per-view F1 over views where gold or prediction answers something, which is exactly the
    router metric ANS-F1 (`score_routing`), so a wrong answer on a view that should be refused or
    expanded costs a whole view; for EXPAND, the mean over every view of the F1 of its whole
    decision (the ANSWERs at the chosen answer threshold plus the EXPANDs) against the gold's, a
    refusal where the gold refuses scoring 1 (`decision_f1`). Micro F1 of the expands alone is
    blind to refusals: on nq_wiki's validation fold it chose to expand every collapsed heading, and
    the router refused none of the views the teacher refuses (REF-ACC 0.000 against the untrained
    router's 0.250; 1.000 with this objective, EXP-PRE 0.425 -> 0.538, ANS-F1 unchanged). Where
    no gold view expands, "view" sets the expand threshold to the top of the grid (never expanding
    is then the best whole decision) instead of keeping the default.
    `answer_limits`: also choose the ANSWER lines per view among these (default: only
    `default.max_answers`)."""
    default = default or SimilarityThresholds()
    if objective not in ("micro", "view"):
        raise ValueError(f"objective must be 'micro' or 'view', not {objective!r}")
    if len(scores) != len(golds):
        raise ValueError(f"{len(scores)} scored views for {len(golds)} labels")
    best: dict[str, tuple[float, float, int] | None] = {}
    details: dict[str, float] = {}
    answered: list[set[int]] = []  # each view's ANSWERs at the chosen answer threshold
    for kind, limits in (("answer", answer_limits or (default.max_answers,)), ("expand", (default.max_expands,))):
        per_view = [set(g.answer_ids if kind == "answer" else g.expand_ids) for g in golds]
        if kind == "expand":
            chosen = best["answer"] or (default.answer, 0.0, default.max_answers)
            answered = [set(pick_best(s.answer, chosen[0], chosen[2])) for s in scores]
        if not any(per_view):
            # No gold action of this kind: no F1 to calibrate on, the default stays; except for
            # EXPAND under the whole-decision objective, where never expanding is then the best
            # decision (an expand costs a view the teacher refuses, and precision on one it
            # answers), so the threshold is the top of the grid.
            if objective == "view" and kind == "expand" and grid and golds:
                top = max(grid)
                expanded = [set(pick_best(s.expand, top, default.max_expands)) for s in scores]
                best[kind] = (top, decision_f1(answered, expanded, golds), default.max_expands)
            else:
                best[kind] = None
            continue
        found: tuple[float, float, int] | None = None
        for limit in limits:
            for threshold in grid:
                predicted = [set(pick_best(getattr(s, kind), threshold, limit)) for s in scores]
                if objective == "view" and kind == "answer":
                    f1 = _mean_view_f1(predicted, per_view)
                elif objective == "view":
                    f1 = decision_f1(answered, predicted, golds)
                else:
                    f1 = _micro_f1(
                        {(i, n) for i, p in enumerate(predicted) for n in p},
                        {(i, n) for i, g in enumerate(per_view) for n in g},
                    )
                suffix = f"/{limit}" if len(limits) > 1 else ""
                details[f"{kind}_f1@{threshold:g}{suffix}"] = round(f1, 4)
                if found is None or f1 > found[1]:
                    found = (threshold, f1, limit)
        best[kind] = found if found and found[1] > 0 else None
    answer, expand = best["answer"], best["expand"]
    thresholds = SimilarityThresholds(
        answer[0] if answer else default.answer,
        expand[0] if expand else default.expand,
        answer[2] if answer else default.max_answers,
        default.max_expands,
    )
    return Calibration(thresholds, len(golds), answer[1] if answer else None, expand[1] if expand else None, details)
