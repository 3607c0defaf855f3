"""Stage bookkeeping shared by ConTReGen and Disco-RAG: ONE engine call per stage for all
questions' chats, each chat's tokens charged to its question, a log of (stage, chats) calls."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rag_assets.core.engines.base import ChatMessages, Generation, LLMEngine, Regex


@dataclass(slots=True)
class StageRunner:
    engine: LLMEngine
    questions: int
    prompt_tokens: list[int] = field(default_factory=list)  # per question, every stage before the reader
    output_tokens: list[int] = field(default_factory=list)
    calls: list[int] = field(default_factory=list)  # engine calls each question took part in
    stages: list[list[str]] = field(default_factory=list)  # the stages each question took part in
    log: list[tuple[str, int]] = field(default_factory=list)  # (stage, chats) per engine call

    def __post_init__(self) -> None:
        self.prompt_tokens = [0] * self.questions
        self.output_tokens = [0] * self.questions
        self.calls = [0] * self.questions
        self.stages = [[] for _ in range(self.questions)]

    def run(
        self,
        stage: str,
        chats: Sequence[tuple[int, ChatMessages]],
        *,
        max_new_tokens: int,
        regex: Regex = None,
        engine: LLMEngine | None = None,
        charge_tokens: bool = True,
    ) -> list[Generation]:
        """One `generate` call for every (question index, chat) of this stage; none when empty."""
        if not chats:
            return []
        if stage in (name for name, _ in self.log):
            raise RuntimeError(f"stage {stage!r} would call the engine twice")  # the batching contract
        generations = (engine or self.engine).generate(
            [chat for _, chat in chats], max_new_tokens=max_new_tokens, regex=regex
        )
        if len(generations) != len(chats):
            raise RuntimeError(f"stage {stage!r}: {len(chats)} chats in, {len(generations)} generations out")
        if charge_tokens:
            for (q, _), generation in zip(chats, generations):
                self.prompt_tokens[q] += generation.prompt_tokens
                self.output_tokens[q] += generation.output_tokens
        for q in sorted({q for q, _ in chats}):
            self.calls[q] += 1
            self.stages[q].append(stage)
        self.log.append((stage, len(chats)))
        return generations


def clip_words(text: str, words: int) -> str:
    """The first `words` words (the input limit of one passage inside a stage prompt)."""
    parts = text.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")
