"""The optimisation loop every trained model here shares (router LoRA, encoder router, rerankers,
R4 policy), and the device choice."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import TypeVar

import torch

B = TypeVar("B")


def pick_device(requested: str = "auto") -> tuple[str, torch.dtype]:
    """CUDA with bf16 when present (and asked for by "auto"), else CPU with fp32."""
    if requested == "auto":
        requested = "cuda" if torch.cuda.is_available() else "cpu"
    if requested.startswith("cuda"):
        return requested, torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return requested, torch.float32


def optimise(
    epoch: Callable[[], Iterable[B]],
    loss_of: Callable[[B], torch.Tensor],
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    total: int,
    *,
    desc: str,
    progress: bool = True,
    on_step: Callable[[int, int, float], None] | None = None,
) -> tuple[list[float], int, float]:
    """`total` optimizer steps over batches from `epoch()` (called again for every pass), with
    gradient clipping, a progress bar and `on_step(step, total, loss)`; returns the losses, the
    steps taken and the seconds per step. Both router kinds train through it."""
    from tqdm import tqdm

    model.train()
    losses: list[float] = []
    started = time.perf_counter()
    step = 0
    with tqdm(total=total, desc=desc, unit="step", disable=None if progress else True) as bar:
        while step < total:
            batches = 0
            for batch in epoch():
                batches += 1
                if step >= total:
                    break
                loss = loss_of(batch)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
                step += 1
                losses.append(float(loss.detach()))
                bar.update(1)
                bar.set_postfix(loss=f"{losses[-1]:.3f}")
                if on_step:
                    on_step(step, total, losses[-1])
            if not batches:  # an empty pass would otherwise loop forever
                raise ValueError(f"{desc}: the training data gives no batch, so no step can be taken")
    return losses, step, (time.perf_counter() - started) / max(step, 1)
