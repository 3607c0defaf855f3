"""LoRA supervised fine-tuning of the router: loss on the target tokens only.

The prompt is rendered with the model's own chat template exactly as at inference
(`add_generation_prompt=True`), the target (the teacher's actions in the router grammar) follows,
and only the target tokens carry labels. Only `target_modules` are trained (no
`modules_to_save`), so vLLM can serve the adapter as well as peft.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TypeVar

import torch

IGNORE_INDEX = -100
B = TypeVar("B")


@dataclass(frozen=True, slots=True)
class TrainingExample:
    messages: list[dict[str, str]]  # the router's chat prompt (system + user)
    target: str  # the teacher's actions, in the router output grammar


@dataclass(slots=True)
class LoraSettings:
    rank: int = 8
    alpha: int = 16
    dropout: float = 0.05
    target_modules: list[str] = field(default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"])
    learning_rate: float = 2e-4
    epochs: int = 1
    max_steps: int = 0  # 0 = no cap beyond epochs
    batch_size: int = 4
    max_length: int = 1024
    seed: int = 0


@dataclass(slots=True)
class TrainingResult:
    adapter_dir: Path
    adapter_id: str
    losses: list[float]
    steps: int
    seconds_per_step: float
    device: str
    dtype: str
    trained_examples: int


def pick_device(requested: str = "auto") -> tuple[str, torch.dtype]:
    """CUDA with bf16 when present (and asked for by "auto"), else CPU with fp32."""
    if requested == "auto":
        requested = "cuda" if torch.cuda.is_available() else "cpu"
    if requested.startswith("cuda"):
        return requested, torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return requested, torch.float32


def encode_example(tokenizer, example: TrainingExample, max_length: int) -> tuple[list[int], list[int]]:
    """Token ids and labels: prompt tokens are ignored by the loss; an overlong prompt loses its
    *beginning* (the question and outline come first, but the target must survive whole)."""
    prompt = tokenizer.apply_chat_template(example.messages, add_generation_prompt=True, tokenize=False)
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    target_ids = tokenizer(example.target.strip() + (tokenizer.eos_token or ""), add_special_tokens=False)["input_ids"]
    target_ids = target_ids[: max_length // 2]
    room = max_length - len(target_ids)
    prompt_ids = prompt_ids[-room:] if room > 0 else []
    return prompt_ids + target_ids, [IGNORE_INDEX] * len(prompt_ids) + target_ids


def _collate(batch: Sequence[tuple[list[int], list[int]]], pad_id: int) -> dict[str, torch.Tensor]:
    width = max(len(ids) for ids, _ in batch)
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    labels = torch.full((len(batch), width), IGNORE_INDEX, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for row, (tokens, target) in enumerate(batch):
        ids[row, : len(tokens)] = torch.tensor(tokens)
        labels[row, : len(target)] = torch.tensor(target)
        mask[row, : len(tokens)] = 1
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


def directory_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(file.relative_to(folder).as_posix().encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


def publish_model_folder(
    output_root: Path,
    write: Callable[[Path], dict],
    *,
    record: str,
    prefix: str = "",
    identity: Mapping[str, object] | None = None,
) -> tuple[Path, str]:
    """Write a trained model into a staging folder (`write` returns its training record), name it
    by the digest of its files and of `identity` (`prefix` + 16 hex: same data and settings, same
    id) and publish it atomically as `output_root/<id>`; an identical folder already published is
    kept. `identity`: the record's fields that change what the model does besides its weights
    (calibrated thresholds, a fusion or section weight): the same weights calibrated differently
    are another model, and must not be answered with the folder of the first calibration."""
    output_root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".adapter-", dir=output_root))
    try:
        details = write(staging)
        model_id = prefix + directory_digest(staging)
        if identity:
            model_id = (
                prefix
                + hashlib.sha256((model_id + json.dumps(identity, sort_keys=True, default=str)).encode()).hexdigest()[
                    :16
                ]
            )
        (staging / record).write_text(json.dumps({"adapter_id": model_id, **details}, indent=1))
        final = output_root / model_id
        if final.exists():
            shutil.rmtree(staging)
        else:
            os.replace(staging, final)  # atomic on one filesystem: readers never see half a model
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return final, model_id


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


def train_lora(
    base_model: Path,
    examples: Sequence[TrainingExample],
    output_root: Path,
    settings: LoraSettings | None = None,
    *,
    device: str = "auto",
    on_step: Callable[[int, int, float], None] | None = None,
    progress: bool = True,
) -> TrainingResult:
    """Train a LoRA adapter and publish it atomically as `output_root/<adapter_id>`.

    The adapter id is a digest of the adapter files, so the same data and settings give the same
    id and an answer can cite exactly which adapter routed it.
    """
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    settings = settings or LoraSettings()
    if not examples:
        raise ValueError("no training examples: the routing_actions asset produced none")
    torch.manual_seed(settings.seed)
    rng = random.Random(settings.seed)
    device, dtype = pick_device(device)
    tokenizer = AutoTokenizer.from_pretrained(base_model)
    model = AutoModelForCausalLM.from_pretrained(base_model, dtype=dtype).to(device)
    model = get_peft_model(
        model,
        LoraConfig(
            r=settings.rank,
            lora_alpha=settings.alpha,
            lora_dropout=settings.dropout,
            target_modules=list(settings.target_modules),
            task_type="CAUSAL_LM",
        ),
    )
    encoded = [encode_example(tokenizer, e, settings.max_length) for e in examples]
    steps_per_epoch = math.ceil(len(encoded) / settings.batch_size)
    total = steps_per_epoch * settings.epochs
    if settings.max_steps:
        total = min(total, settings.max_steps)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=settings.learning_rate)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: max(0.0, 1 - s / max(total, 1)))
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    model.train()

    def epoch() -> Iterator[dict[str, torch.Tensor]]:
        order = list(range(len(encoded)))
        rng.shuffle(order)
        for start in range(0, len(order), settings.batch_size):
            chosen = [encoded[i] for i in order[start : start + settings.batch_size]]
            yield {k: v.to(device) for k, v in _collate(chosen, pad_id).items()}

    def loss_of(batch: dict[str, torch.Tensor]) -> torch.Tensor:
        with torch.autocast(device_type="cuda", dtype=dtype, enabled=device.startswith("cuda")):
            return model(**batch).loss

    losses, step, seconds = optimise(
        epoch, loss_of, model, optimizer, scheduler, total, desc="lora", progress=progress, on_step=on_step
    )

    def write(staging: Path) -> dict:
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        return {
            "base_model": str(base_model),
            "settings": asdict(settings),
            "losses": losses,
            "steps": step,
            "examples": len(encoded),
            "device": device,
            "dtype": str(dtype),
        }

    final, adapter_id = publish_model_folder(output_root, write, record="training.json")
    return TrainingResult(
        final, adapter_id, losses, step, seconds, device, str(dtype).replace("torch.", ""), len(encoded)
    )
