"""Fine-tuning the reranker (either model), calibrating its fusion weight on held-out questions,
and publishing the folder."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rag_assets.core.index.reranking.folders import RERANKER_PREFIX, RERANKER_RECORD
from rag_assets.core.index.reranking.labels import RerankGroup
from rag_assets.core.index.reranking.lancedb_reranker import PassageReranker, fuse
from rag_assets.core.index.reranking.scorers import BiEncoderScorer, CrossEncoderScorer, load_cross_encoder
from rag_assets.core.quiet_loading import quiet_model_loading
from rag_assets.core.training.contrastive import fine_tune_bi_encoder

# fusion weights tried on held-out questions; -1 = the cross-encoder's order alone
FUSION_GRID = (0.0, 0.5, 1.0, 2.0, 4.0, -1.0)
RERANKER_MODELS = ("bi-encoder", "cross-encoder")
SYNTHETIC_SCOPES = ("labelled-documents", "all")


@dataclass(slots=True)
class RerankerSettings:
    model: str = "bi-encoder"  # "bi-encoder" | "cross-encoder" (see the module doc)
    max_steps: int = 24  # optimizer steps (about 1-3 s each on 2 CPU cores)
    batch_size: int = 8  # groups per step (the bi-encoder's in-batch negatives grow with it)
    negatives: int = 3  # hard negatives per group
    learning_rate: float = 3e-5
    head_lr_multiplier: float = 50.0  # cross-encoder: the fresh classification head learns this much faster
    score_scale: float = 20.0  # cross-encoder: listwise softmax temperature 1/score_scale (see train_reranker)
    warmup_fraction: float = 0.1
    max_length: int = 160  # query + passage tokens
    candidates: int = 20  # first-stage hits a negative is drawn from
    depth: int = 30  # first-stage candidates the model re-scores at query time
    validation_fraction: float = 0.25  # of the labelled train questions, held out to calibrate the fusion
    max_validation: int = 24  # held-out questions scored at most
    # held-out questions wanted at least: a set with few labelled train questions (emanual holds
    # out 5) tops the slice up with held-out synthetic ones, so one question does not pick the weight
    min_validation: int = 20
    # synthetic questions from "labelled-documents" (the documents the labelled train questions ask
    # about, where users' questions concentrate; every document when there is no labelled question)
    # or from "all" documents (see train_collection_reranker)
    synthetic_scope: str = "labelled-documents"
    seed: int = 0

    # what the bi-encoder recipe (core/training/contrastive.py) reads: max_steps decides, small
    # collections take several passes
    epochs = 10**6

    @property
    def max_seq_length(self) -> int:
        return self.max_length


@dataclass(slots=True)
class RerankerTrainingResult:
    folder: Path
    reranker_id: str
    losses: list[float]
    steps: int
    seconds_per_step: float
    groups: int
    weight: float
    calibration: dict[str, float]  # fusion weight -> held-out recall@5
    calibrated_on: int  # held-out questions
    device: str
    details: dict = field(default_factory=dict)


def calibrate_fusion(
    reranker: PassageReranker,
    held: Sequence[tuple[str, Sequence[float], Sequence[str], Sequence[bool]]],
    k: int = 5,
) -> tuple[float, dict[str, float]]:
    """The fusion weight with the best held-out recall@k of a gold passage. Ties (frequent on a few
    held-out questions) go to the weight that ranks the gold higher (mean reciprocal rank within
    the candidates): a gold at rank 1 keeps its place where one at rank 5 falls off; then to the
    smaller weight, the one closest to the first stage. `held`: per question, (query, first-stage
    scores of its candidates in first-stage order, their texts, which are gold)."""
    scored = [(fs[: reranker.depth], reranker.scores(q, texts[: reranker.depth]), gold) for q, fs, texts, gold in held]
    table: dict[str, float] = {}
    reciprocal: dict[float, float] = {}
    for weight in FUSION_GRID:
        found, mrr = 0, 0.0
        for first, cross, gold in scored:
            fused = fuse(first, cross, weight)
            order = sorted(range(len(fused)), key=lambda i: -fused[i])
            found += any(gold[i] for i in order[:k])
            mrr += next((1 / rank for rank, i in enumerate(order, 1) if gold[i]), 0.0)
        table[str(weight)] = found / max(len(scored), 1)
        reciprocal[weight] = mrr / max(len(scored), 1)
    best = max(
        FUSION_GRID,
        key=lambda w: (table[str(w)], round(reciprocal[w], 9), -abs(w) if w >= 0 else -math.inf),
    )
    return best, table


def fine_tune_cross_encoder(
    base_model: Path,
    groups: Sequence[RerankGroup],
    settings: RerankerSettings,
    *,
    device: str,
    on_step: Callable[[int, int, float], None] | None,
    progress: bool,
):
    """The cross-encoder recipe: a one-logit head on the packaged MiniLM, listwise softmax over
    each group (gold first) -> (model, losses, steps, seconds per step)."""
    import torch

    from rag_assets.core.training.optimisation import optimise

    torch.manual_seed(settings.seed)
    rng = random.Random(settings.seed)
    model = load_cross_encoder(base_model, device=device, max_length=settings.max_length, num_labels=1)
    total = max(settings.max_steps, 1)
    warmup = max(1, math.ceil(total * settings.warmup_fraction))
    # Why the loss used to stay at ln(1 + negatives): the score is `classifier(tanh(pooler(CLS)))`,
    # and the packaged checkpoint's BERT pooler was never trained (sentence-transformers pools by
    # mean; its bias is all zeros, its weights std 0.009), so the head reads features of ~0.07 per
    # dimension and the fresh head turned them into logits within +-0.03. Adam moves such logits by
    # about 0.01 a step, so in the few steps a CPU affords the gaps never reached the ~1 a listwise
    # loss needs, even while the gold passage already ranked first on most training groups. Hence:
    # the loss reads the logits times `score_scale` (a softmax temperature, as contrastive losses
    # use on cosines; only the order of the scores is used at query time), and the head starts at
    # zero so that the scale does not amplify random initial scores (step 1 is exactly ln(1 + n)).
    # The fresh head also learns `head_lr_multiplier` times faster than the encoder.
    head = [p for n, p in model.named_parameters() if "classifier" in n]
    body = [p for n, p in model.named_parameters() if "classifier" not in n]
    if not head:
        raise RuntimeError(f"{base_model}: the cross-encoder has no 'classifier' head parameters to train")
    with torch.no_grad():
        for param in head:
            param.zero_()
    optimizer = torch.optim.AdamW(
        [
            {"params": body, "lr": settings.learning_rate},
            {"params": head, "lr": settings.learning_rate * settings.head_lr_multiplier},
        ]
    )
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (total - s) / max(total - warmup, 1)))
    )
    width = settings.negatives + 1

    def epoch() -> list[list[RerankGroup]]:
        order = list(groups)
        rng.shuffle(order)
        return [order[i : i + settings.batch_size] for i in range(0, len(order), settings.batch_size)]

    def loss_of(batch: list[RerankGroup]):
        from sentence_transformers.util import batch_to_device

        pairs = [(g.query, text) for g in batch for text in (g.positive, *g.negatives[: settings.negatives])]
        features = batch_to_device(model.preprocess(pairs), model.device)
        logits = model(features)["scores"].view(len(batch), width).float() * settings.score_scale
        # listwise: the gold passage (column 0) against its group's negatives
        return torch.nn.functional.cross_entropy(
            logits, torch.zeros(len(batch), dtype=torch.long, device=logits.device)
        )

    losses, step, seconds = optimise(
        epoch, loss_of, model, optimizer, scheduler, total, desc="passage reranker", progress=progress, on_step=on_step
    )
    model.eval()
    return model, losses, step, seconds


def train_reranker(
    base_model: Path,
    groups: Sequence[RerankGroup],
    held: Sequence[tuple[str, Sequence[float], Sequence[str], Sequence[bool]]],
    output_root: Path,
    settings: RerankerSettings | None = None,
    *,
    device: str = "cpu",
    on_step: Callable[[int, int, float], None] | None = None,
    progress: bool = True,
    extra_record: Mapping[str, object] | None = None,
) -> RerankerTrainingResult:
    """Fine-tune the reranker (`settings.model`) on `groups`, calibrate the fusion on `held`,
    publish the folder."""
    from rag_assets.core.training.model_folders import publish_model_folder

    settings = settings or RerankerSettings()
    if settings.model not in RERANKER_MODELS:
        raise ValueError(f"reranker model {settings.model!r} is not one of {', '.join(RERANKER_MODELS)}")
    if settings.max_steps < 1:
        raise ValueError(f"reranker max_steps must be at least 1, got {settings.max_steps}")
    usable = [g for g in groups if len(g.negatives) >= settings.negatives > 0]
    if not usable:
        raise ValueError(
            f"no reranker training groups: no question has a gold passage and {settings.negatives} negatives"
        )
    if settings.model == "cross-encoder":
        model, losses, step, seconds = fine_tune_cross_encoder(
            base_model, usable, settings, device=device, on_step=on_step, progress=progress
        )
        scorer = CrossEncoderScorer(model)
    else:
        run = fine_tune_bi_encoder(
            base_model, usable, settings, device=device, desc="passage reranker", progress=progress, on_step=on_step
        )
        model, losses, step, seconds = run.model, run.losses, run.steps, run.seconds_per_step
        scorer = BiEncoderScorer(model)
    reranker = PassageReranker(scorer, depth=settings.depth)
    weight, calibration = calibrate_fusion(reranker, held) if held else (-1.0, {})

    def write(staging: Path) -> dict:
        with quiet_model_loading():  # no "Writing model shards" bar in a run's log
            model.save(str(staging))
        return {
            "kind": "passage-reranker",
            "model": settings.model,
            "base_model": str(base_model),
            "settings": asdict(settings),
            "weight": weight,
            "depth": settings.depth,
            "calibration": calibration,
            "calibrated_on": len(held),
            "losses": losses,
            "steps": step,
            "groups": len(usable),
            "device": device,
            **dict(extra_record or {}),
        }

    folder, reranker_id = publish_model_folder(
        output_root,
        write,
        record=RERANKER_RECORD,
        prefix=RERANKER_PREFIX,
        identity={"weight": weight, "depth": settings.depth},
    )
    return RerankerTrainingResult(
        folder, reranker_id, losses, step, seconds, len(usable), weight, calibration, len(held), device
    )
