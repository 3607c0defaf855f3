"""LoRA supervised fine-tuning of the router: loss on the target tokens only.

The prompt is rendered with the model's own chat template exactly as at inference
(`add_generation_prompt=True`), the target (the teacher's actions in the router grammar) follows,
and only the target tokens carry labels. Only `target_modules` are trained (no
`modules_to_save`), so vLLM can serve the adapter as well as peft.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from rag_assets.core.training.model_folders import publish_model_folder
from rag_assets.core.training.optimisation import optimise, pick_device

IGNORE_INDEX = -100


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
