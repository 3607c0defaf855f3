"""How the trained encoder router reads and ranks nodes, chosen on held-out questions: the
section weight (`scoring_router.section_smoothed`), the evidence budget fill's order
(`routing.fill_scores`) and the node text (`NODE_TEXTS`), and the thresholds calibrated with
them. `encoder_training.train_encoder` calls `choose_scoring_settings` and `calibrate` after
fine-tuning (its module docstring tells the whole recipe)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rag_assets.core.routing.routed_evidence import node_words
from rag_assets.core.routing.scoring_router import ScoringRouter
from rag_assets.core.routing.teachers import Calibration, SimilarityScores, SimilarityThresholds, calibrate_thresholds

if TYPE_CHECKING:
    from rag_assets.core.evaluation.held_out_evidence import HeldOutEvidence
    from rag_assets.core.routing.encoder_settings import EncoderSettings
    from rag_assets.core.routing.samples import RoutingExample

# How the router reads a content node: after its path (`content_context`: the heading path, and
# the content nodes it is nested under with `EncoderSettings.ancestor_levels`), or bare (and
# then a collapsed heading as the similarity teacher reads it, `teachers.heading_text`). The
# path tells a line what it is about on the real sets (nq_wiki's validation ANS-F1 0.348 with it,
# 0.306 bare); where every node of a document shares a short path that outweighs its few words
# (the built-in Python reference: 0.463 with it, 0.631 bare), it drowns what tells nodes apart.
NODE_TEXTS = ("heading_path", "bare")


@dataclass(frozen=True, slots=True)
class SectionWeightTrial:
    """One section weight tried on the validation fold, reading nodes as `node_text`: the gold
    ANSWER nodes kept within the word budgets (`budget_recall`, mean over the budgets), the
    validation ANS-F1 at thresholds calibrated for it (`answer_f1`) and, with held-out questions,
    their routed evidence metric with the budget filled in `fill_order`."""

    weight: float
    budget_recall: float
    routed_evidence: float | None = None
    fill_order: str = "router"  # the budget fill's order the routed evidence was measured with
    node_text: str = NODE_TEXTS[0]
    answer_f1: float | None = None


def _queries(examples: Sequence[RoutingExample]) -> list[tuple]:
    return [
        (e.query, e.state, sorted(e.view.visible_content_ids), sorted(e.view.collapsed_heading_ids)) for e in examples
    ]


def budget_recall(
    scored: Sequence[SimilarityScores], examples: Sequence[RoutingExample], words: int
) -> tuple[float, int] | None:
    """Mean share of each question's gold ANSWER nodes among its best-scored nodes that fit in
    `words` (all views of the question pooled, a node counted once, at its best score), over the
    questions with a gold node, and how many there were; None without any.

    A proxy of what the reader gets from routing at a word budget (`route_documents` fills the
    budget best score first across the routed documents), used to choose the section weight when
    no held-out questions can be retrieved. It ignores retrieval, expansion and heading lines, and
    chose weight 1 on conditionalqa where the routed evidence itself chose 1.5 (README, "Latest
    figures"); per-view average precision of the gold nodes, the criterion before it, chose 0."""
    best: dict[str, dict[tuple[str, int], float]] = {}
    gold: dict[str, set[tuple[str, int]]] = {}
    size: dict[tuple[str, int], int] = {}
    for scores, example in zip(scored, examples):
        doc = example.state.doc_id
        pooled = best.setdefault(example.query, {})
        for n, score in scores.answer.items():
            key = (doc, n)
            pooled[key] = max(pooled.get(key, score), score)
            size[key] = node_words(example.state.nodes[n])
        gold.setdefault(example.query, set()).update((doc, n) for n in example.answer_ids if n in scores.answer)
    recalls = []
    for query, pooled in best.items():
        if not gold[query]:
            continue
        used, kept = 0, set()
        for key in sorted(pooled, key=lambda k: (-pooled[k], k)):
            if used + size[key] <= words:
                used += size[key]
                kept.add(key)
        recalls.append(len(kept & gold[query]) / len(gold[query]))
    return (sum(recalls) / len(recalls), len(recalls)) if recalls else None


# The budget fill orders tried with each section weight on held-out questions, the first winning
# a tie. Fusion first: on a tie it keeps the retrieval ranking retrieve-and-read's evidence comes
# from, where the router's own order ignores it. Retrieval order alone is not tried: it ignores the
# router's scores in the fill; it was the worst order at every weight on conditionalqa's 23
# validation questions and won nq_wiki's 10 by one question, where its dev + test passage hit was
# 0.739 against 0.870 for fusion (README, "Latest figures"); it stays a strategy knob.
CHOSEN_FILL_ORDERS = ("fused", "router")


@dataclass(frozen=True, slots=True)
class ScoringChoice:
    """The section weight, evidence budget fill order and node text chosen, and every combination
    tried."""

    section_weight: float
    fill_order: str
    trials: list[SectionWeightTrial]
    node_text: str = NODE_TEXTS[0]


def trial_figure(trial: SectionWeightTrial) -> float:
    """What a trial is judged by: its routed evidence, or without held-out questions its budget
    recall."""
    return trial.budget_recall if trial.routed_evidence is None else trial.routed_evidence


def chosen_trial(
    trials: Sequence[SectionWeightTrial],
    node_texts: Sequence[str],
    *,
    evidence_step: float = 0.0,
    answer_f1_step: float = 0.0,
) -> SectionWeightTrial:
    """The trial `choose_scoring_settings` keeps (its docstring gives the rule): the best of the
    first node text, unless another node text's best is no worse on the figure and the ANS-F1
    and better on one by more than its step.

    The steps are what one held-out question (`evidence_step`: 1 / questions) or one labelled
    view (`answer_f1_step`: 1 / views, a per-view F1 lies in [0, 1]) can move the mean by: a gain
    no larger than that may be a single question's or view's luck, and the first node text is
    the one the encoder was trained to read."""

    def best_of(node_text: str) -> SectionWeightTrial:
        mine = [t for t in trials if t.node_text == node_text]
        top = max(map(trial_figure, mine))
        return min(
            (t for t in mine if trial_figure(t) == top),
            key=lambda t: (t.weight, CHOSEN_FILL_ORDERS.index(t.fill_order)),
        )

    chosen = best_of(node_texts[0])
    for node_text in node_texts[1:]:
        other = best_of(node_text)
        gains = (trial_figure(other) - trial_figure(chosen), (other.answer_f1 or 0.0) - (chosen.answer_f1 or 0.0))
        steps = (evidence_step, answer_f1_step)
        if min(gains) >= 0 and any(gain > step + 1e-9 for gain, step in zip(gains, steps)):
            chosen = other
    return chosen


def choose_scoring_settings(
    router: ScoringRouter,
    examples: Sequence[RoutingExample],
    settings: EncoderSettings,
    held_out: HeldOutEvidence | None = None,
) -> ScoringChoice:
    """The section weight among `settings.section_weights` (and 0), the budget fill order (among
    `CHOSEN_FILL_ORDERS`) and the node text (among `settings.node_texts`) whose routing gives the
    most.

    With `held_out`, every (weight, node text, fill order) is judged by the held-out questions'
    routed evidence (thresholds calibrated on `examples` for each weight and node text). Without
    held-out questions, each (weight, node text) is judged by the gold ANSWER nodes of `examples`
    kept within `settings.section_budgets` (mean `budget_recall`) and the fill order is "router"
    (nothing to judge it by). Within a node text, ties go to the smaller weight, then the earlier
    order of CHOSEN_FILL_ORDERS. The first node text is kept unless another one's best trial is
    at least as good on both the figure and the calibrated ANS-F1 on `examples`, and better on
    one by more than one held-out question or one labelled view can move it: a validation fold
    of a few questions must not trade the reading the encoder was trained on for one question's
    or one view's luck. On nq_wiki bare text was chosen twice on its 10 held-out questions by such
    a gain (7 of 10 against 6 with a lower ANS-F1, before ANS-F1 counted; then 7 of 10 both, with
    ANS-F1 0.286 against 0.278 on 22 views) and both times lost dev + test passage hit (0.696 and
    0.652, against 0.870 reading the heading path). On the built-in corpus bare text gains ANS-F1
    0.631 against 0.463 on 28 views, far beyond one view's 0.036, and is kept. Weight 0, order
    "router", the first node text and no trials when no example has a gold ANSWER node."""
    unknown = [t for t in settings.node_texts if t not in NODE_TEXTS]
    if unknown or not settings.node_texts:
        raise ValueError(f"node_texts must be some of {NODE_TEXTS}, got {settings.node_texts}")
    trials: list[SectionWeightTrial] = []
    for weight in sorted(set(settings.section_weights) | {0.0}):
        for node_text in settings.node_texts:
            twin = router.with_section_weight(weight, contextual=node_text == "heading_path")
            scored = twin.score(_queries(examples))
            recalls = [budget_recall(scored, examples, words) for words in settings.section_budgets]
            if any(r is None for r in recalls):
                return ScoringChoice(0.0, "router", [], settings.node_texts[0])
            recall = round(sum(r[0] for r in recalls) / len(recalls), 4)
            calibration = calibrate(twin, examples, settings)
            answer_f1 = round(calibration.answer_f1 or 0.0, 4)
            if held_out is None:
                trials.append(SectionWeightTrial(weight, recall, node_text=node_text, answer_f1=answer_f1))
                continue
            calibrated = twin.with_section_weight(weight, calibration.thresholds)
            for order in CHOSEN_FILL_ORDERS:
                evidence = round(held_out.score(calibrated, order), 4)
                trials.append(SectionWeightTrial(weight, recall, evidence, order, node_text, answer_f1))

    # what one held-out question / one labelled view can move a mean by (see `chosen_trial`)
    evidence_step = 1 / len(held_out.questions) if held_out is not None and held_out.questions else 0.0
    # every trial calibrates on the same `examples`, so the last calibration's count is theirs
    answer_f1_step = 1 / calibration.labelled if calibration.labelled else 0.0
    chosen = chosen_trial(trials, settings.node_texts, evidence_step=evidence_step, answer_f1_step=answer_f1_step)
    return ScoringChoice(chosen.weight, chosen.fill_order, trials, chosen.node_text)


def calibrate(router: ScoringRouter, examples: Sequence[RoutingExample], settings: EncoderSettings) -> Calibration:
    """The answer threshold and ANSWER lines per view (1..max_answers) that maximise the router
    metric ANS-F1 (mean per-view F1) on `examples`; the expand threshold by the F1 of each view's
    whole decision, a refusal where the teacher refuses counting 1 (`decision_f1`)."""
    scores = router.score(_queries(examples))
    default = SimilarityThresholds(max_answers=settings.max_answers, max_expands=settings.max_expands)
    grid = tuple(round(-0.2 + 0.025 * i, 3) for i in range(49))  # -0.2 .. 1.0: trained cosines spread wide
    return calibrate_thresholds(
        scores, examples, grid=grid, default=default, objective="view", answer_limits=range(1, settings.max_answers + 1)
    )
