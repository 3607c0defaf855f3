"""The engine interface: a whole batch of chats in, one generation per chat out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

ChatMessages = list[dict[str, str]]


@dataclass(frozen=True, slots=True)
class Generation:
    text: str
    prompt_tokens: int
    output_tokens: int


class LLMEngine(ABC):
    """Every routing round and every reader step is ONE `generate` call over all its chats."""

    model_id: str

    @abstractmethod
    def generate(self, batch: list[ChatMessages], *, adapter: str | None = None, max_new_tokens: int = 128,
                 temperature: float = 0.0, regex: str | None = None) -> list[Generation]:
        """`adapter` names a LoRA adapter registered with the engine (None = the base model);
        `regex` constrains decoding where the engine supports it."""

    @abstractmethod
    def count_tokens(self, text: str) -> int: ...

    def close(self) -> None:  # engines holding servers or GPU memory release them here
        return None
