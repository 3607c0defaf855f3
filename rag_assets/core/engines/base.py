"""The engine interface: a whole batch of chats in, one generation per chat out."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

ChatMessages = list[dict[str, str]]
# One regex for the whole batch, or one per chat (the router's grammar depends on its view).
Regex = str | Sequence[str] | None


def regex_per_chat(regex: Regex, count: int) -> list[str | None]:
    """`regex` as one entry per chat; a list of the wrong length is a caller's bug."""
    if regex is None or isinstance(regex, str):
        return [regex] * count
    regexes = list(regex)
    if len(regexes) != count:
        raise ValueError(f"{len(regexes)} regexes for {count} chats: give one per chat or a single one")
    return regexes


@dataclass(frozen=True, slots=True)
class Generation:
    text: str
    prompt_tokens: int
    output_tokens: int


class LLMEngine(ABC):
    """Every routing round and every reader step is ONE `generate` call over all its chats."""

    model_id: str
    # Seconds of generations served again without running them (see engines/cache.py); cost
    # metrics add them back so every strategy is charged what it would cost alone.
    replayed_seconds: float = 0.0

    @abstractmethod
    def generate(
        self,
        batch: list[ChatMessages],
        *,
        adapter: str | None = None,
        max_new_tokens: int = 128,
        temperature: float = 0.0,
        regex: Regex = None,
    ) -> list[Generation]:
        """`adapter` names a LoRA adapter registered with the engine (None = the base model);
        `regex` (one, or one per chat) constrains decoding where the engine supports it."""

    @abstractmethod
    def count_tokens(self, text: str) -> int: ...

    def score_continuations(
        self, chats: list[ChatMessages], continuations: list[list[str]], *, adapter: str | None = None
    ) -> list[list[float]]:
        """Mean log-probability per token of each continuation as the start of the assistant's
        reply to its chat (one list per chat); engines that cannot read logits say so."""
        raise NotImplementedError(
            f"the {type(self).__name__} backend cannot score continuations (likelihood ranking needs "
            "the transformers backend: RAG_LLM_BACKEND=transformers)"
        )

    def close(self) -> None:  # engines holding servers or GPU memory release them here
        return None


class BatchClock:
    """Seconds per question of a batched strategy: the batch's wall time plus the seconds of any
    generation a caching engine replayed (charged as if run, so every strategy costs what it would
    alone), divided by its questions. Started on creation; each engine counted once."""

    def __init__(self, *engines: LLMEngine | None) -> None:
        self._engines = list({id(e): e for e in engines if e is not None}.values())
        self._replayed = self._replayed_now()
        self._started = time.perf_counter()

    def _replayed_now(self) -> float:
        return sum(e.replayed_seconds for e in self._engines)

    def seconds_per_question(self, questions: int) -> float:
        elapsed = time.perf_counter() - self._started + self._replayed_now() - self._replayed
        return elapsed / max(questions, 1)
