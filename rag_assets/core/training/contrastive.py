"""Contrastive fine-tuning of the packaged sentence encoder: the one recipe for every bi-encoder
we train.

The `encoder` router (a question against a node in its heading context) and the bi-encoder
passage reranker (a question against a passage) learn the same thing from the same shape of
data: a query, one text that serves it, and hard negatives that do not. Both fine-tune the
packaged all-MiniLM-L6-v2 with sentence-transformers' `MultipleNegativesRankingLoss` (in-batch
negatives plus the hard ones) through `router_training.optimise`, so the warm-up/decay schedule,
gradient clipping, progress bar and step callback are the same for both.

Why a bi-encoder and not a cross-encoder wherever we can: the packaged checkpoint is a trained
bi-encoder, so it already ranks well before the first step (the untrained model *is* the
similarity router and the dense first stage), where a cross-encoder built from it starts from an
untrained head and, in the few hundred steps a CPU affords, does not catch up with the first
stage (measured on the real sets; the figures are in `core/index/reranking.py`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class ContrastivePair:
    """A query, one text that serves it (the positive) and texts that do not (hard negatives)."""

    query: str
    positive: str
    negatives: tuple[str, ...]


@dataclass(slots=True)
class ContrastiveRun:
    model: Any  # the fine-tuned sentence_transformers.SentenceTransformer, in eval mode
    losses: list[float]
    steps: int
    seconds_per_step: float


def query_batches(pairs: Sequence[ContrastivePair], size: int, rng: random.Random) -> list[list[ContrastivePair]]:
    """Shuffled batches with no query twice in a batch: another positive of the same query would
    otherwise be scored as its in-batch negative. Leftover batches are kept even when they hold
    one pair: its hard negatives still give the loss something to rank against, and a training
    set with a single query would otherwise give no batch at all."""
    order = list(pairs)
    rng.shuffle(order)
    batches: list[list[ContrastivePair]] = []
    open_batches: list[tuple[list[ContrastivePair], set[str]]] = []
    for pair in order:
        for batch, queries in open_batches:
            if pair.query not in queries and len(batch) < size:
                batch.append(pair)
                queries.add(pair.query)
                break
        else:
            open_batches.append(([pair], {pair.query}))
        full = [b for b in open_batches if len(b[0]) >= size]
        batches += [b for b, _ in full]
        open_batches = [b for b in open_batches if len(b[0]) < size]
    batches += [b for b, _ in open_batches]
    return batches


class ContrastiveSettings(Protocol):
    """What the recipe reads from a caller's settings (`EncoderSettings`, `RerankerSettings`)."""

    negatives: int
    epochs: int
    max_steps: int
    batch_size: int
    learning_rate: float
    warmup_fraction: float
    max_seq_length: int
    seed: int


def fine_tune_bi_encoder(
    base_model: Path,
    pairs: Sequence[ContrastivePair],
    settings: ContrastiveSettings,
    *,
    device: str = "cpu",
    desc: str = "bi-encoder",
    progress: bool = True,
    on_step: Callable[[int, int, float], None] | None = None,
) -> ContrastiveRun:
    """Fine-tune the sentence encoder at `base_model` on `pairs` (each with at least
    `settings.negatives` hard negatives; pairs with fewer are a ValueError, not silently dropped):
    `settings.epochs` passes, capped at `settings.max_steps` optimizer steps when > 0, linear
    warm-up then linear decay."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
    from sentence_transformers.util import batch_to_device

    from rag_assets.core.quiet_loading import quiet_model_loading
    from rag_assets.core.training.optimisation import optimise

    negatives, batch_size, seed = settings.negatives, settings.batch_size, settings.seed
    if not pairs:
        raise ValueError(f"{desc}: no training pairs")
    short = [p for p in pairs if len(p.negatives) < negatives]
    if short:
        raise ValueError(f"{desc}: {len(short)} pairs have fewer than {negatives} hard negatives")
    torch.manual_seed(seed)
    rng = random.Random(seed)
    with quiet_model_loading():  # no per-file "Loading weights" bar in a run's log
        model = SentenceTransformer(str(base_model), device=device, local_files_only=True)
    model.max_seq_length = settings.max_seq_length
    loss_fn = MultipleNegativesRankingLoss(model)
    epoch_batches = max(len(query_batches(pairs, batch_size, random.Random(seed))), 1)
    total = epoch_batches * max(settings.epochs, 1)
    if settings.max_steps:
        total = min(total, settings.max_steps)
    warmup = max(1, math.ceil(total * settings.warmup_fraction))
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (total - s) / max(total - warmup, 1)))
    )

    def loss_of(batch: list[ContrastivePair]):
        columns = [[p.query for p in batch], [p.positive for p in batch]]
        columns += [[p.negatives[k] for p in batch] for k in range(negatives)]
        return loss_fn([batch_to_device(model.preprocess(column), model.device) for column in columns], None)

    losses, steps, seconds = optimise(
        lambda: query_batches(pairs, batch_size, rng),
        loss_of,
        model,
        optimizer,
        scheduler,
        total,
        desc=desc,
        progress=progress,
        on_step=on_step,
    )
    model.eval()
    return ContrastiveRun(model, losses, steps, seconds)
