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
fold (`scoring_settings.choose_scoring_settings`) from `EncoderSettings.section_weights`, with how the router reads a content node
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
from rag_assets.core.routing.encoder_settings import EncoderSettings
from rag_assets.core.routing.folders import ROUTER_MARKERS, router_folder_kind
from rag_assets.core.routing.negative_mining import MINED_POOL, base_encoder_rankings
from rag_assets.core.routing.own_choices import OwnChoiceCalibration, choose_own_choices, own_choices_from_record
from rag_assets.core.routing.samples import RoutingExample
from rag_assets.core.routing.scoring_router import ANCESTOR_LEVELS, ScoringRouter, content_context, heading_context
from rag_assets.core.routing.scoring_settings import (
    NODE_TEXTS,
    SectionWeightTrial,
    calibrate,
    choose_scoring_settings,
)
from rag_assets.core.routing.teachers import Calibration, SimilarityThresholds
from rag_assets.core.training.contrastive import ContrastivePair, fine_tune_bi_encoder

if TYPE_CHECKING:
    from rag_assets.core.evaluation.held_out_evidence import HeldOutEvidence

ROUTER_RECORD = ROUTER_MARKERS["encoder"]
ENCODER_PREFIX = "enc-"


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


def candidate_texts(example: RoutingExample, ancestor_levels: int = ANCESTOR_LEVELS) -> dict[int, str]:
    """Every node the router could act on in this view, as the encoder reads it (content nodes
    under `ancestor_levels` content ancestors)."""
    state = example.state
    visible = sorted(example.view.visible_content_ids)
    out = {n: content_context(state.nodes, n, levels=ancestor_levels) for n in visible}
    out.update({h: heading_context(state, h) for h in sorted(example.view.collapsed_heading_ids)})
    return out


def encoder_pairs(
    examples: Sequence[RoutingExample],
    *,
    negatives: int = 2,
    seed: int = 0,
    rankings: Sequence[Sequence[int]] | None = None,
    pool: int = MINED_POOL,
    ancestor_levels: int = ANCESTOR_LEVELS,
) -> list[ContrastivePair]:
    """(question, positive, hard negatives) for every gold action of every view (see module doc).
    The hard negatives are drawn from the view's other candidates: at random, or with `rankings`
    (one per example, its candidate ids best first: `negative_mining.base_encoder_rankings`) from
    the best `pool` of them. Content nodes are read under `ancestor_levels` content ancestors."""
    if rankings is not None and len(rankings) != len(examples):
        raise ValueError(f"{len(rankings)} rankings for {len(examples)} examples")
    rng = random.Random(seed)
    pool_texts: list[str] = []
    staged: list[tuple[str, str, list[str]]] = []
    for i, example in enumerate(examples):
        texts = candidate_texts(example, ancestor_levels)
        gold = (example.answer_ids | example.expand_ids) & texts.keys()
        others = [texts[n] for n in texts if n not in gold]
        pool_texts.extend(others)
        drawn_from = (
            others if rankings is None else [texts[n] for n in rankings[i] if n in texts and n not in gold][:pool]
        )
        for n in sorted(gold):
            hard = rng.sample(drawn_from, min(negatives, len(drawn_from)))
            staged.append((example.query, _strip_query(texts[n], example.query), hard))
    pairs = []
    for query, positive, hard in staged:
        while len(hard) < negatives and pool_texts:  # a view with few candidates borrows other views' nodes
            extra = rng.choice(pool_texts)
            if extra != positive:
                hard.append(extra)
            elif len(set(pool_texts)) == 1:
                break
        if len(hard) == negatives:
            pairs.append(ContrastivePair(query, positive, tuple(hard)))
    return pairs


def mined_rankings(
    base_model: Path, examples: Sequence[RoutingExample], device: str, ancestor_levels: int = ANCESTOR_LEVELS
) -> list[list[int]]:
    """Each example's candidates ranked by the untrained encoder at `base_model`
    (`negative_mining`: why the hard negatives are drawn from its best)."""
    with quiet_model_loading():
        base = Embedder(base_model, device=device, progress=False)
    return base_encoder_rankings(examples, lambda e: candidate_texts(e, ancestor_levels), base.encode)


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
    levels = settings.ancestor_levels
    rankings = mined_rankings(base_model, train, device, levels) if settings.negative_source == "base_encoder" else None
    pairs = encoder_pairs(
        train, negatives=settings.negatives, seed=settings.seed, rankings=rankings, ancestor_levels=levels
    )
    if not pairs:
        raise ValueError("no encoder training pairs: no train view has a gold ANSWER or EXPAND action")
    run = fine_tune_bi_encoder(
        base_model, pairs, settings, device=device, desc="encoder router", progress=progress, on_step=on_step
    )
    model, losses, step, seconds = run.model, run.losses, run.steps, run.seconds_per_step
    router = ScoringRouter(
        Embedder.wrap(model, "encoder-in-training"), SimilarityThresholds(), kind="encoder", ancestor_levels=levels
    )
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
            "ancestor_levels": router.ancestor_levels,
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
    threshold for folders published before they were chosen), reading nodes under as many content
    ancestors as it was trained with (none for folders published before they were read)."""
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
        # Routers published before the option read none.
        ancestor_levels=int(record.get("ancestor_levels", 0)),
    )
