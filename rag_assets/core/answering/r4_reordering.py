"""Evidence reordering (R4: Reinforced Retriever-Reorder-Responder), for any evidence-giving strategy.

Orders:
- `retrieval`: as retrieved (the default of every strategy);
- `reverse`: the best last, nearest the question;
- `edges`: "lost in the middle": the best at the beginning, the second at the end, the third
  second, ... the weakest in the middle;
- `learned`: a position policy in R4's spirit places each item at the *beginning*, *middle* or
  *end* of the prompt (items of one position keep their retrieval order).

The learned policy is a small linear scorer: per item, logits over the three positions from its
features (first-stage score, reciprocal rank, router score, length, agreement with the other
items, overlap with the query; see `item_features`). It is trained on the train fold with
REINFORCE (the score-function policy gradient) with a per-question mean-reward baseline: for each
question several placements are sampled, each is rendered as the reader would see it, and the
reward is the FROZEN reader's mean log-likelihood per token of the gold answer given that
evidence (`ReaderScorer`, the base checkpoint through transformers, nothing trained in it). At
inference each item goes to its most likely position; an untrained (all-zero) policy puts all of
them at the beginning, i.e. keeps the retrieval order.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

REORDERS = ("retrieval", "reverse", "edges", "learned")
POSITIONS = ("beginning", "middle", "end")
FEATURES = ("score", "reciprocal_rank", "router_score", "length", "agreement", "query_overlap", "bias")
POLICY_RECORD = "reorder_policy.json"
POLICY_PREFIX = "r4-"
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True, slots=True)
class EvidenceItem:
    """One unit the reader sees (a passage, or a routed document's evidence)."""

    text: str
    score: float = 0.0  # first-stage retrieval score
    rank: int = 1  # 1 = retrieved first
    router_score: float = 0.0  # rdr2: the router's confidence in the document (0 when none)
    heading_path: tuple[str, ...] = ()  # a passage's heading path, rendered above its text


def edges_order(n: int) -> list[int]:
    """Indices of a best-first list arranged edges-first: 0, 2, 4, ..., 5, 3, 1."""
    return list(range(0, n, 2)) + list(reversed(range(1, n, 2)))


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def item_features(query: str, items: Sequence[EvidenceItem]) -> np.ndarray:
    """(items x FEATURES) features, each roughly in [0, 1]."""
    words = [_words(i.text) for i in items]
    query_words = _words(query)
    top = max((abs(i.score) for i in items), default=0.0) or 1.0
    rows = []
    for k, item in enumerate(items):
        others = [len(words[k] & w) / max(len(words[k] | w), 1) for j, w in enumerate(words) if j != k]
        rows.append(
            [
                item.score / top,
                1.0 / max(item.rank, 1),
                item.router_score,
                math.log1p(len(item.text.split())) / math.log(512),
                float(np.mean(others)) if others else 0.0,
                len(words[k] & query_words) / max(len(query_words), 1),
                1.0,
            ]
        )
    return np.asarray(rows, dtype=np.float32).reshape(len(items), len(FEATURES))


def order_from_positions(positions: Sequence[int]) -> list[int]:
    """Item indices, beginning items first, then middle, then end; retrieval order within each."""
    return sorted(range(len(positions)), key=lambda i: (positions[i], i))


@dataclass(slots=True)
class PositionPolicy:
    """Logits over POSITIONS = features @ weights (FEATURES x POSITIONS)."""

    weights: np.ndarray = field(default_factory=lambda: np.zeros((len(FEATURES), len(POSITIONS)), np.float32))
    policy_id: str = "untrained"

    def positions(self, query: str, items: Sequence[EvidenceItem]) -> list[int]:
        if not items:
            return []
        logits = item_features(query, items) @ self.weights
        return [int(np.argmax(row)) for row in logits]  # ties: the first position, the beginning

    def order(self, query: str, items: Sequence[EvidenceItem]) -> list[int]:
        return order_from_positions(self.positions(query, items))


def reorder(mode: str, query: str, items: Sequence[EvidenceItem], policy: PositionPolicy | None = None) -> list[int]:
    """The order (indices into `items`, which are in retrieval order) the reader sees them in."""
    n = len(items)
    if mode == "retrieval":
        return list(range(n))
    if mode == "reverse":
        return list(reversed(range(n)))
    if mode == "edges":
        return edges_order(n)
    if mode == "learned":
        if policy is None:
            raise ValueError("reorder 'learned' needs a trained position policy (the `reorder_policy` asset)")
        return policy.order(query, items)
    raise ValueError(f"unknown reorder {mode!r}; expected one of {REORDERS}")


# -- the frozen reader's reward ----------------------------------------------------------------


class ReaderScorer:
    """Mean log-likelihood per token of a target answer after a reader chat, under a frozen causal
    LM (the reader's base checkpoint); batched, no gradients."""

    def __init__(self, model_path: Path, *, device: str = "cpu", max_length: int = 1024, batch_size: int = 8) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(model_path)
        self.model = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch.float32).to(device).eval()
        self.device = device
        self.max_length = max_length
        self.batch_size = batch_size
        self.model_id = Path(model_path).name

    def _encode(self, messages: list[dict[str, str]], target: str) -> tuple[list[int], int]:
        prompt = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        prompt_ids = self.tokenizer(prompt, add_special_tokens=False)["input_ids"]
        target_ids = self.tokenizer(" " + target.strip(), add_special_tokens=False)["input_ids"][:64]
        room = self.max_length - len(target_ids)
        return prompt_ids[-room:] + target_ids, len(target_ids)  # an overlong prompt loses its beginning

    def log_likelihoods(self, chats: Sequence[tuple[list[dict[str, str]], str]]) -> list[float]:
        import torch

        out: list[float] = []
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
        for start in range(0, len(chats), self.batch_size):
            encoded = [self._encode(m, t) for m, t in chats[start : start + self.batch_size]]
            width = max(len(ids) for ids, _ in encoded)
            ids = torch.full((len(encoded), width), pad, dtype=torch.long)
            mask = torch.zeros_like(ids)
            for row, (tokens, _) in enumerate(encoded):
                ids[row, : len(tokens)] = torch.tensor(tokens)
                mask[row, : len(tokens)] = 1
            with torch.no_grad():
                logits = self.model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device)).logits
            logprobs = torch.log_softmax(logits[:, :-1].float(), dim=-1)
            for row, (tokens, n_target) in enumerate(encoded):
                end = len(tokens)
                positions = torch.arange(end - n_target - 1, end - 1)
                picked = logprobs[row, positions, torch.tensor(tokens[end - n_target :])]
                out.append(float(picked.mean()))
        return out


# -- REINFORCE ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReorderExample:
    query: str
    items: tuple[EvidenceItem, ...]  # in retrieval order
    answer: str  # the gold answer whose likelihood is the reward


@dataclass(slots=True)
class ReorderSettings:
    epochs: int = 3
    samples: int = 4  # placements sampled per question per step
    batch_size: int = 4  # questions per step
    learning_rate: float = 0.1
    seed: int = 0


@dataclass(slots=True)
class ReorderTrainingResult:
    folder: Path
    policy_id: str
    policy: PositionPolicy
    rewards: list[float]  # mean sampled reward per step (the training curve)
    steps: int
    examples: int
    reward_by_order: dict[str, float]  # mean reward of retrieval / edges / learned on the train examples


Render = Callable[[str, Sequence[EvidenceItem]], list[dict[str, str]]]  # (query, ordered items) -> reader chat


def train_position_policy(
    examples: Sequence[ReorderExample],
    reward: Callable[[Sequence[tuple[list[dict[str, str]], str]]], list[float]],
    render: Render,
    output_root: Path,
    settings: ReorderSettings | None = None,
    *,
    on_step: Callable[[int, int, float], None] | None = None,
    extra_record: dict | None = None,
) -> ReorderTrainingResult:
    """REINFORCE on the position policy; publishes it as `output_root/r4-<digest>`."""
    import torch

    from rag_assets.core.training.model_folders import publish_model_folder

    settings = settings or ReorderSettings()
    usable = [e for e in examples if len(e.items) >= 2 and e.answer.strip()]
    if not usable:
        raise ValueError("no reorder training examples: none has two evidence items and a gold answer")
    rng = random.Random(settings.seed)
    generator = torch.Generator().manual_seed(settings.seed)
    weights = torch.zeros((len(FEATURES), len(POSITIONS)), requires_grad=True)
    optimizer = torch.optim.Adam([weights], lr=settings.learning_rate)
    features = [torch.from_numpy(item_features(e.query, e.items)) for e in usable]
    rewards_curve: list[float] = []
    steps_per_epoch = math.ceil(len(usable) / settings.batch_size)
    total = steps_per_epoch * max(settings.epochs, 1)
    step = 0
    for _ in range(max(settings.epochs, 1)):
        order = list(range(len(usable)))
        rng.shuffle(order)
        for start in range(0, len(order), settings.batch_size):
            batch = order[start : start + settings.batch_size]
            chats, log_probs = [], []
            for e in batch:
                dist = torch.distributions.Categorical(logits=features[e] @ weights)
                for _ in range(settings.samples):
                    placed = torch.multinomial(dist.probs.detach(), 1, generator=generator).squeeze(-1)
                    log_probs.append(dist.log_prob(placed).sum())
                    items = [usable[e].items[i] for i in order_from_positions(placed.tolist())]
                    chats.append((render(usable[e].query, items), usable[e].answer))
            values = torch.tensor(reward(chats), dtype=torch.float32).view(len(batch), settings.samples)
            advantage = values - values.mean(dim=1, keepdim=True)  # per-question baseline
            loss = -(torch.stack(log_probs).view(len(batch), settings.samples) * advantage).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            rewards_curve.append(float(values.mean()))
            if on_step:
                on_step(step, total, rewards_curve[-1])
    policy = PositionPolicy(weights.detach().numpy().astype(np.float32).copy())
    by_order: dict[str, float] = {}
    for mode in ("retrieval", "edges", "learned"):
        chats = [
            (render(e.query, [e.items[i] for i in reorder(mode, e.query, e.items, policy)]), e.answer) for e in usable
        ]
        by_order[mode] = float(np.mean(reward(chats)))

    def write(staging: Path) -> dict:
        np.save(staging / "weights.npy", policy.weights)
        return {
            "kind": "reorder-policy",
            "algorithm": "REINFORCE (score-function policy gradient), per-question mean-reward baseline",
            "reward": "frozen reader's mean log-likelihood per token of the gold answer",
            "features": list(FEATURES),
            "positions": list(POSITIONS),
            "settings": asdict(settings),
            "rewards": rewards_curve,
            "reward_by_order": by_order,
            "steps": step,
            "examples": len(usable),
            **(extra_record or {}),
        }

    folder, policy_id = publish_model_folder(output_root, write, record=POLICY_RECORD, prefix=POLICY_PREFIX)
    policy.policy_id = policy_id
    return ReorderTrainingResult(folder, policy_id, policy, rewards_curve, step, len(usable), by_order)


def load_position_policy(folder: Path) -> PositionPolicy:
    folder = Path(folder)
    record = folder / POLICY_RECORD
    if not record.is_file() or json.loads(record.read_text()).get("kind") != "reorder-policy":
        raise FileNotFoundError(f"{folder} holds no reorder policy ({POLICY_RECORD} with kind 'reorder-policy')")
    data = json.loads(record.read_text())
    weights = np.load(folder / "weights.npy")
    if weights.shape != (len(FEATURES), len(POSITIONS)) or data.get("features") != list(FEATURES):
        raise ValueError(f"{folder}: the policy was trained on other features ({data.get('features')})")
    return PositionPolicy(weights, data.get("adapter_id", folder.name))
