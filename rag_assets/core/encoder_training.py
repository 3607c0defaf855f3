"""The `encoder` router kind: the packaged sentence encoder fine-tuned on the routing actions.

Training pairs come from the same curated routing actions the LLM router learns from. For every
labelled view: the question is the anchor; each gold ANSWER node (in its heading context) and each
gold EXPAND heading (its path and a glimpse of its content) is a positive; the view's other
candidates (visible content and collapsed headings the teacher did not pick) are its hard
negatives. The loss is sentence-transformers' `MultipleNegativesRankingLoss` (in-batch negatives
plus the hard ones), through `core/contrastive.py`, the recipe the bi-encoder passage reranker
shares. A bi-encoder rather than a cross-encoder: it starts from a model that already
ranks well (the untrained encoder is the similarity router, so the gain from training is measured
against it), node and heading embeddings are cached across questions and rounds, and it trains in
minutes on two CPU cores.

After training, the section weight (`scoring_router.section_smoothed`) is chosen on the validation
fold from `EncoderSettings.section_weights` by the mean average precision of the gold ANSWER nodes
in each view's ranking (ranking is what the word-budget fill consumes), then the answer and expand
thresholds are calibrated with that weight (ANS-F1 / micro F1 of the view's decisions against the
teacher labels; the train fold stands in when no validation views exist). The model, its thresholds and its training curve are published atomically as one folder
named by the digest of its files (`router.json` records kind, thresholds, calibration, losses).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rag_assets.core.contrastive import ContrastivePair, fine_tune_bi_encoder
from rag_assets.core.embedding import Embedder
from rag_assets.core.quiet_loading import quiet_model_loading
from rag_assets.core.router_folders import ROUTER_MARKERS, router_folder_kind
from rag_assets.core.scoring_router import ScoringRouter, content_context, heading_context
from rag_assets.core.subtree import DocumentRouting, SubtreeView
from rag_assets.core.teachers import Calibration, SimilarityThresholds, calibrate_thresholds

ROUTER_RECORD = ROUTER_MARKERS["encoder"]
ENCODER_PREFIX = "enc-"


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
    seed: int = 0


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
    section_weight_ap: dict[float, float] = field(default_factory=dict)  # weight -> mean AP of gold ANSWERs
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


def average_precision(scores: dict[int, float], gold: frozenset[int]) -> float | None:
    """AP of the gold nodes in the score ranking (ties broken by node id); None without gold."""
    gold = gold & scores.keys()
    if not gold:
        return None
    ranked = sorted(scores, key=lambda n: (-scores[n], n))
    found, total = 0, 0.0
    for rank, n in enumerate(ranked, start=1):
        if n in gold:
            found += 1
            total += found / rank
    return total / len(gold)


def choose_section_weight(
    router: ScoringRouter, examples: Sequence[RoutingExample], weights: Sequence[float]
) -> tuple[float, dict[float, float]]:
    """The weight whose ranking puts the gold ANSWER nodes highest (mean AP over the views that
    have one; ties: the smaller weight), and the AP of every weight tried. Weight 0 when no view
    has a gold ANSWER."""
    table: dict[float, float] = {}
    for weight in sorted(set(weights) | {0.0}):
        scored = router.with_section_weight(weight).score(_queries(examples))
        aps = [ap for s, e in zip(scored, examples) if (ap := average_precision(s.answer, e.answer_ids)) is not None]
        if not aps:
            return 0.0, {}
        table[weight] = round(sum(aps) / len(aps), 4)
    best = max(table.values())
    return min(w for w, ap in table.items() if ap == best), table


def calibrate(router: ScoringRouter, examples: Sequence[RoutingExample], settings: EncoderSettings) -> Calibration:
    """The answer threshold and ANSWER lines per view (1..max_answers) that maximise the router
    metric ANS-F1 (mean per-view F1) on `examples`; the expand threshold by micro F1."""
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
) -> EncoderTrainingResult:
    """Fine-tune the encoder on `train`, calibrate on `validation`, publish the router folder."""
    from rag_assets.core.router_training import publish_model_folder

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
    section_weight, section_table = choose_section_weight(router, validation or train, settings.section_weights)
    router = router.with_section_weight(section_weight)
    calibration = calibrate(router, validation or train, settings)

    def write(staging: Path) -> dict:
        with quiet_model_loading():  # no "Writing model shards" bar in a run's log
            model.save(str(staging))
        return {
            "kind": "encoder",
            "base_model": str(base_model),
            "settings": asdict(settings),
            "thresholds": asdict(calibration.thresholds),
            "section_weight": section_weight,
            "section_weight_ap": {str(w): ap for w, ap in section_table.items()},
            "calibrated_on": calibrated_on,
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

    folder, adapter_id = publish_model_folder(output_root, write, record=ROUTER_RECORD, prefix=ENCODER_PREFIX)
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
        section_weight_ap=section_table,
    )


def is_encoder_router(folder: Path) -> bool:
    return router_folder_kind(folder) == "encoder"


def router_record(folder: Path) -> dict:
    return json.loads((Path(folder) / ROUTER_RECORD).read_text())


def load_encoder_router(folder: Path, *, device: str = "cpu") -> ScoringRouter:
    """The trained encoder router published in `folder`, with its calibrated thresholds and section
    weight (0 for folders published before the weight was chosen)."""
    folder = Path(folder)
    if not is_encoder_router(folder):
        raise FileNotFoundError(f"{folder} holds no encoder router ({ROUTER_RECORD} with kind 'encoder')")
    record = router_record(folder)
    thresholds = SimilarityThresholds(**record["thresholds"])
    encoder = Embedder(folder, device=device, progress=False)
    encoder.model_id = folder.name
    return ScoringRouter(encoder, thresholds, kind="encoder", section_weight=float(record.get("section_weight", 0.0)))
