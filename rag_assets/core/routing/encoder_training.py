"""The `encoder` router kind: the packaged sentence encoder fine-tuned on the routing actions.

Training pairs come from the same curated routing actions the LLM router learns from. For every
labelled view: the question is the anchor; each gold ANSWER node (in its heading context) and each
gold EXPAND heading (its path and a glimpse of its content) is a positive; the view's other
candidates (visible content and collapsed headings the teacher did not pick) are its hard
negatives. The loss is sentence-transformers' `MultipleNegativesRankingLoss` (in-batch negatives
plus the hard ones), through `core/training/contrastive.py`, the recipe the bi-encoder passage
reranker shares. A bi-encoder rather than a cross-encoder: it starts from a model that already
ranks well (the untrained encoder is the similarity router, so the gain from training is measured
against it), node and heading embeddings are cached across questions and rounds, and it trains in
minutes on two CPU cores.

After training, the section weight (`scoring_router.section_smoothed`) is chosen on the validation
fold from `EncoderSettings.section_weights`, with how the router reads a content node
(`NODE_TEXTS`: after its heading path, or bare, the latter only where it is no worse on both the
routed evidence and the validation ANS-F1, and better on one beyond one question's or view's worth): with held-out questions (`HeldOutEvidence`: the
validation fold's real questions, retrieved and routed as the evaluation does, at the words
retrieve-and-read gave each), by the routed evidence itself, thresholds calibrated for each
weight, jointly with the budget fill's order (`routing.fill_scores`: router score, or its
reciprocal rank fusion with retrieval rank); without them (no index at hand, as in unit tests),
by the gold ANSWER nodes its best-scored nodes keep within a few word budgets (`budget_recall`),
the fill by router score. Ties go to the smaller weight, then to fusion. Then the answer and
expand thresholds are calibrated with that weight (the answer threshold by ANS-F1, the expand
threshold by the F1 of each view's whole decision, refusals included, against the teacher labels;
the train fold stands in when no validation views exist), and with held-out questions the rule
of the router's own choices (`routing.own_choices`: a margin under the question's best node).
The model, its thresholds and its training curve are published atomically as one folder named by
the digest of its files and calibration (`router.json` records kind, thresholds, calibration,
own-choice rule, losses).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rag_assets.core.index.embedding import Embedder
from rag_assets.core.quiet_loading import quiet_model_loading
from rag_assets.core.routing.folders import ROUTER_MARKERS, router_folder_kind
from rag_assets.core.routing.own_choices import OwnChoiceCalibration, choose_own_choices, own_choices_from_record
from rag_assets.core.routing.routed_evidence import node_words
from rag_assets.core.routing.scoring_router import ScoringRouter, content_context, heading_context
from rag_assets.core.routing.subtree import DocumentRouting, SubtreeView
from rag_assets.core.routing.teachers import Calibration, SimilarityScores, SimilarityThresholds, calibrate_thresholds
from rag_assets.core.training.contrastive import ContrastivePair, fine_tune_bi_encoder

if TYPE_CHECKING:
    from rag_assets.core.evaluation.held_out_evidence import HeldOutEvidence

ROUTER_RECORD = ROUTER_MARKERS["encoder"]
ENCODER_PREFIX = "enc-"
# How the router reads a content node: after its heading path (`content_context`), or bare (and
# then a collapsed heading as the similarity teacher reads it, `teachers.heading_text`). The
# path tells a line what it is about on the real sets (nq_wiki's validation ANS-F1 0.348 with it,
# 0.306 bare); where every node of a document shares a short path that outweighs its few words
# (the built-in Python reference: 0.463 with it, 0.631 bare), it drowns what tells nodes apart.
NODE_TEXTS = ("heading_path", "bare")


@dataclass(frozen=True, slots=True)
class RoutingExample:
    """One labelled view: the router's input and the teacher's actions on it."""

    query: str
    state: DocumentRouting
    view: SubtreeView
    answer_ids: frozenset[int]
    expand_ids: frozenset[int]


@dataclass(slots=True)
class EncoderSettings:
    epochs: int = 1
    max_steps: int = 0  # 0 = whole epochs
    batch_size: int = 16
    learning_rate: float = 3e-5
    negatives: int = 1  # hard negatives per pair (from the same view; others drawn from other views)
    warmup_fraction: float = 0.1
    max_seq_length: int = 128
    max_answers: int = 4  # at inference: ANSWER lines per view
    max_expands: int = 2
    # Section weights tried on the validation fold (0 = every node scored on its own).
    section_weights: tuple[float, ...] = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0)
    # ... judged, without held-out questions, by the gold nodes kept within these words per
    # question (about 1, 2 and 4 passages; retrieve-and-read gives 300-470 words on the real sets).
    section_budgets: tuple[int, ...] = (100, 200, 400)
    # How the router reads a content node, tried with each weight (NODE_TEXTS); the first is kept
    # unless another is no worse on both the routed evidence and ANS-F1, and better on one by more
    # than one held-out question or one labelled view can move it (`chosen_trial`).
    node_texts: tuple[str, ...] = ("heading_path", "bare")
    seed: int = 0


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


@dataclass(slots=True)
class EncoderTrainingResult:
    folder: Path
    adapter_id: str
    losses: list[float]
    steps: int
    seconds_per_step: float
    pairs: int
    calibration: Calibration
    calibrated_on: str  # 'validation' | 'train'
    device: str
    section_weight: float = 0.0
    section_weights: list[SectionWeightTrial] = field(default_factory=list)  # every weight (and order) tried
    section_chosen_by: str = ""  # what the weight was chosen by, in words
    fill_order: str = "router"  # the evidence budget fill's order chosen with the weight
    node_text: str = NODE_TEXTS[0]  # how the router reads content nodes, chosen with the weight
    own_choices: OwnChoiceCalibration | None = None  # the own-choice rule's choice (held-out questions only)
    details: dict = field(default_factory=dict)


def _strip_query(text: str, query: str) -> str:
    # Inverse-cloze pseudo-queries are a sentence of the node itself: taken out of the positive,
    # so the encoder learns what the rest of a paragraph says, not string matching.
    return " ".join(text.replace(query, " ").split()) if len(query) > 20 and query in text else text


def candidate_texts(example: RoutingExample) -> dict[int, str]:
    """Every node the router could act on in this view, as the encoder reads it."""
    state = example.state
    out = {n: content_context(state.nodes, n) for n in sorted(example.view.visible_content_ids)}
    out.update({h: heading_context(state, h) for h in sorted(example.view.collapsed_heading_ids)})
    return out


def encoder_pairs(examples: Sequence[RoutingExample], *, negatives: int = 2, seed: int = 0) -> list[ContrastivePair]:
    """(question, positive, hard negatives) for every gold action of every view (see module doc)."""
    rng = random.Random(seed)
    pool: list[str] = []
    staged: list[tuple[str, str, list[str]]] = []
    for example in examples:
        texts = candidate_texts(example)
        gold = (example.answer_ids | example.expand_ids) & texts.keys()
        others = [texts[n] for n in texts if n not in gold]
        pool.extend(others)
        for n in sorted(gold):
            hard = rng.sample(others, min(negatives, len(others)))
            staged.append((example.query, _strip_query(texts[n], example.query), hard))
    pairs = []
    for query, positive, hard in staged:
        while len(hard) < negatives and pool:  # a view with few candidates borrows other views' nodes
            extra = rng.choice(pool)
            if extra != positive:
                hard.append(extra)
            elif len(set(pool)) == 1:
                break
        if len(hard) == negatives:
            pairs.append(ContrastivePair(query, positive, tuple(hard)))
    return pairs


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
    or one view's luck. On nq_wiki bare text twice won that way on 10 held-out questions (7 of 10
    against 6 with a lower ANS-F1; then the same 7 of 10 with ANS-F1 0.286 against 0.278 on 22
    views) and both times lost dev + test passage hit (0.696 and 0.652 against 0.870 read after
    the heading path). On the built-in corpus bare text gains ANS-F1 0.631 against 0.463 on 28
    views, far beyond one view's 0.036, and is kept. Weight 0, order "router", the first node
    text and no trials when no example has a gold ANSWER node."""
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


def train_encoder(
    base_model: Path,
    train: Sequence[RoutingExample],
    validation: Sequence[RoutingExample],
    output_root: Path,
    settings: EncoderSettings | None = None,
    *,
    device: str = "cpu",
    on_step: Callable[[int, int, float], None] | None = None,
    progress: bool = True,
    extra_record: dict | None = None,
    held_out: HeldOutEvidence | None = None,
) -> EncoderTrainingResult:
    """Fine-tune the encoder on `train`, choose the section weight (by `held_out`'s routed
    evidence when given) and calibrate on `validation`, publish the router folder."""
    from rag_assets.core.training.model_folders import publish_model_folder

    settings = settings or EncoderSettings()
    pairs = encoder_pairs(train, negatives=settings.negatives, seed=settings.seed)
    if not pairs:
        raise ValueError("no encoder training pairs: no train view has a gold ANSWER or EXPAND action")
    run = fine_tune_bi_encoder(
        base_model, pairs, settings, device=device, desc="encoder router", progress=progress, on_step=on_step
    )
    model, losses, step, seconds = run.model, run.losses, run.steps, run.seconds_per_step
    router = ScoringRouter(Embedder.wrap(model, "encoder-in-training"), SimilarityThresholds(), kind="encoder")
    calibrated_on = "validation" if validation else "train"
    choice = choose_scoring_settings(router, validation or train, settings, held_out)
    section_weight, fill_order, node_text = choice.section_weight, choice.fill_order, choice.node_text
    trials = choice.trials
    chosen_by = (
        f"routed {held_out.metric} of {len(held_out.questions)} held-out questions at retrieve-and-read's words"
        if held_out is not None and trials
        else f"gold ANSWER nodes kept in {'/'.join(map(str, settings.section_budgets))} words"
    )
    router = router.with_section_weight(section_weight, fill_order=fill_order, contextual=node_text == "heading_path")
    calibration = calibrate(router, validation or train, settings)
    own = choose_own_choices(router.with_section_weight(section_weight, calibration.thresholds), held_out)

    def write(staging: Path) -> dict:
        with quiet_model_loading():  # no "Writing model shards" bar in a run's log
            model.save(str(staging))
        return {
            "kind": "encoder",
            "base_model": str(base_model),
            "settings": asdict(settings),
            "thresholds": asdict(calibration.thresholds),
            "section_weight": section_weight,
            "section_weights": [asdict(t) for t in trials],
            "section_chosen_by": chosen_by,
            "fill_order": fill_order,
            "node_text": node_text,
            "calibrated_on": calibrated_on,
            "own_choices": own.record() if own else None,
            "calibration": {
                "labelled": calibration.labelled,
                "answer_f1": calibration.answer_f1,
                "expand_f1": calibration.expand_f1,
                "grid": calibration.details,
            },
            "losses": losses,
            "steps": step,
            "pairs": len(pairs),
            "train_views": len(train),
            "validation_views": len(validation),
            "device": device,
            **(extra_record or {}),
        }

    folder, adapter_id = publish_model_folder(
        output_root,
        write,
        record=ROUTER_RECORD,
        prefix=ENCODER_PREFIX,
        identity={
            "thresholds": asdict(calibration.thresholds),
            "section_weight": section_weight,
            "fill_order": fill_order,
            "node_text": node_text,
            "own_choices": own.record() if own else None,
        },
    )
    return EncoderTrainingResult(
        folder,
        adapter_id,
        losses,
        step,
        seconds,
        len(pairs),
        calibration,
        calibrated_on,
        device,
        section_weight=section_weight,
        section_weights=trials,
        section_chosen_by=chosen_by,
        fill_order=fill_order,
        node_text=node_text,
        own_choices=own,
    )


def is_encoder_router(folder: Path) -> bool:
    return router_folder_kind(folder) == "encoder"


def router_record(folder: Path) -> dict:
    return json.loads((Path(folder) / ROUTER_RECORD).read_text())


def load_encoder_router(folder: Path, *, device: str = "cpu") -> ScoringRouter:
    """The trained encoder router published in `folder`, with its calibrated thresholds, section
    weight, budget fill order, node text and own-choice rule (0, "router", "heading_path" and the
    threshold for folders published before they were chosen)."""
    folder = Path(folder)
    if not is_encoder_router(folder):
        raise FileNotFoundError(f"{folder} holds no encoder router ({ROUTER_RECORD} with kind 'encoder')")
    record = router_record(folder)
    thresholds = SimilarityThresholds(**record["thresholds"])
    encoder = Embedder(folder, device=device, progress=False)
    encoder.model_id = folder.name
    return ScoringRouter(
        encoder,
        thresholds,
        kind="encoder",
        section_weight=float(record.get("section_weight", 0.0)),
        fill_order=record.get("fill_order", "router"),
        contextual=record.get("node_text", NODE_TEXTS[0]) == "heading_path",
        own_choices=own_choices_from_record(record),
    )
