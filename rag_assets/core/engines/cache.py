"""Memoized greedy generation, for runs that repeat the same prompts.

The evaluation runs RDR2 at several grid points (expand iterations 0..N, top-k 1..5) over the
same questions. With greedy decoding a prompt's output is fixed, and the grid points share most
prompts: round 1 at every expand iteration count is the same round, top-k 1 routes the first
document of top-k 3. `CachingEngine` sends each distinct (adapter, chat, regex, output budget)
to the engine once and replays it after that.

Costs stay honest: a replayed generation keeps the token counts it had, and the seconds it took
(its share of its batch, by prompt tokens) are added to `replayed_seconds`, which
`run_strategy` adds back, so a strategy's seconds per question are what it costs run alone.
Sampling (temperature > 0) is never cached.
"""

from __future__ import annotations

import json
import time

from rag_assets.core.engines.base import ChatMessages, Generation, LLMEngine, Regex, regex_per_chat


class CachingEngine(LLMEngine):
    def __init__(self, inner: LLMEngine) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self._memo: dict[str, tuple[Generation, float]] = {}
        self.replayed_seconds = 0.0
        self.hits = 0
        self.misses = 0

    def score_continuations(
        self, chats: list[ChatMessages], continuations: list[list[str]], *, adapter: str | None = None
    ) -> list[list[float]]:
        return self.inner.score_continuations(chats, continuations, adapter=adapter)

    def generate(
        self,
        batch: list[ChatMessages],
        *,
        adapter: str | None = None,
        max_new_tokens: int = 128,
        temperature: float = 0.0,
        regex: Regex = None,
    ) -> list[Generation]:
        if temperature > 0:
            return self.inner.generate(
                batch, adapter=adapter, max_new_tokens=max_new_tokens, temperature=temperature, regex=regex
            )
        regexes = regex_per_chat(regex, len(batch))
        keys = [json.dumps([adapter, chat, r, max_new_tokens], ensure_ascii=False) for chat, r in zip(batch, regexes)]
        todo = {k: i for i, k in reversed(list(enumerate(keys))) if k not in self._memo}  # first index per key
        if todo:
            indices = sorted(todo.values())
            wanted = [regexes[i] for i in indices]
            started = time.perf_counter()
            generations = self.inner.generate(
                [batch[i] for i in indices],
                adapter=adapter,
                max_new_tokens=max_new_tokens,
                regex=wanted if any(r is not None for r in wanted) else None,
            )
            elapsed = time.perf_counter() - started
            total = sum(g.prompt_tokens + g.output_tokens for g in generations) or 1
            for i, generation in zip(indices, generations):
                self._memo[keys[i]] = (
                    generation,
                    elapsed * (generation.prompt_tokens + generation.output_tokens) / total,
                )
        fresh = set(todo)
        for key in keys:
            if key in fresh:
                fresh.discard(key)  # the first occurrence was computed now; repeats are replays
                self.misses += 1
            else:
                self.hits += 1
                self.replayed_seconds += self._memo[key][1]
        return [self._memo[k][0] for k in keys]

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def close(self) -> None:
        self.inner.close()
