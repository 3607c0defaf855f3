"""One engine shared by concurrent requests, their generations batched together.

Every `generate` call of a request (a routing round, the reader step) waits while the model is
busy; when it frees, ONE call runs every waiting request's chats that share the generation
settings (adapter, token budget, temperature), and each request gets its own results back. So 8
questions asked at once are read in one batch instead of one after the other, and the model
never runs from two threads at once (torch modules are not thread-safe). `exclusive()` gives the
model to one caller alone (the streamed reader step).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from rag_assets.core.engines.base import ChatMessages, Generation, LLMEngine, Regex, regex_per_chat
from rag_assets.serving import cancelling

WAIT_CHECK_S = 0.1  # how often a waiting request looks whether its client went away


@dataclass
class _Request:
    chats: list[ChatMessages]
    regexes: list[str | None]
    key: tuple[Any, ...]
    settings: dict[str, Any]
    result: list[Generation] | None = None
    error: BaseException | None = None
    done: bool = False
    batched_with: int = field(default=0)
    cancel: threading.Event | None = None

    @property
    def abandoned(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()


class BatchingEngine(LLMEngine):
    def __init__(self, engine: LLMEngine) -> None:
        self.engine = engine
        self.model_id = engine.model_id
        self._ready = threading.Condition()
        self._waiting: list[_Request] = []
        self._busy = False
        self.largest_batch = 0  # requests run in one call at most (what the benchmark reports)

    def __getattr__(self, name: str) -> Any:  # model, tokenizer, device, adapters ...
        return getattr(self.engine, name)

    def count_tokens(self, text: str) -> int:
        return self.engine.count_tokens(text)

    @contextmanager
    def exclusive(self) -> Iterator[LLMEngine]:
        """The model for one caller alone, once the running batch is done."""
        with self._ready:
            while self._busy:
                self._ready.wait()
            self._busy = True
        try:
            yield self.engine
        finally:
            with self._ready:
                self._busy = False
                self._ready.notify_all()

    def generate(
        self,
        batch: list[ChatMessages],
        *,
        adapter: str | None = None,
        max_new_tokens: int = 128,
        temperature: float = 0.0,
        regex: Regex = None,
    ) -> list[Generation]:
        if not batch:
            return []
        cancelling.check()
        settings = {"adapter": adapter, "max_new_tokens": max_new_tokens, "temperature": temperature}
        request = _Request(list(batch), regex_per_chat(regex, len(batch)), tuple(settings.values()), settings)
        request.cancel = cancelling.current()
        with self._ready:
            self._waiting.append(request)
            while not request.done:
                if request.abandoned and request in self._waiting:
                    self._waiting.remove(request)
                    raise cancelling.Cancelled("the client went away")
                if self._busy:
                    self._ready.wait(WAIT_CHECK_S)
                    continue
                taken = [r for r in self._waiting if r.key == self._waiting[0].key]
                self._waiting = [r for r in self._waiting if r.key != taken[0].key]
                self._busy = True
                self._ready.release()
                try:
                    self._run(taken)
                finally:
                    self._ready.acquire()
                    self._busy = False
                    self._ready.notify_all()
        if request.error is not None:
            raise request.error
        assert request.result is not None
        return request.result

    def _run(self, taken: list[_Request]) -> None:
        chats = [chat for r in taken for chat in r.chats]
        regexes = [x for r in taken for x in r.regexes]
        self.largest_batch = max(self.largest_batch, len(taken))
        stoppable = hasattr(self.engine, "stop_when")
        if stoppable:  # the batch stops between decode steps once every client went away
            self.engine.stop_when = lambda: all(r.abandoned for r in taken)
        try:
            out = self.engine.generate(
                chats, regex=regexes if any(x is not None for x in regexes) else None, **taken[0].settings
            )
            if all(r.abandoned for r in taken):
                raise cancelling.Cancelled("the client went away")
        except BaseException as err:  # every request of the batch gets the error
            for r in taken:
                r.error, r.done = err, True
            return
        finally:
            if stoppable:
                self.engine.stop_when = None
        start = 0
        for r in taken:
            r.result, r.done = out[start : start + len(r.chats)], True
            start += len(r.chats)

    def score_continuations(self, chats: list[ChatMessages], continuations: list[list[str]], **kwargs: Any):
        with self.exclusive() as engine:
            return engine.score_continuations(chats, continuations, **kwargs)

    def close(self) -> None:
        self.engine.close()
