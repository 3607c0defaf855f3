"""Concurrent requests' generations run as one batch on the shared engine, each request gets its
own results back, and a failure reaches every request of its batch."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from rag_assets.core.engines.base import Generation, LLMEngine
from rag_assets.serving.batching import BatchingEngine


class EchoEngine(LLMEngine):
    """Answers each chat with its last message, slowly, and records every call's batch."""

    model_id = "echo"

    def __init__(self) -> None:
        self.calls: list[tuple[int, int, object]] = []
        self.running = 0
        self.overlapped = False

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def generate(self, batch, *, adapter=None, max_new_tokens=128, temperature=0.0, regex=None):
        self.running += 1
        self.overlapped |= self.running > 1
        self.calls.append((len(batch), max_new_tokens, regex))
        time.sleep(0.2)
        self.running -= 1
        if any(chat[-1]["content"] == "fail" for chat in batch):
            raise RuntimeError("the model failed")
        return [Generation(chat[-1]["content"].upper(), 1, 1) for chat in batch]


def chat(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def test_waiting_requests_are_batched_and_get_their_own_results() -> None:
    echo = EchoEngine()
    shared = BatchingEngine(echo)
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda i: shared.generate([chat(f"q{i}a"), chat(f"q{i}b")]), range(8)))
    assert [[g.text for g in r] for r in results] == [[f"Q{i}A", f"Q{i}B"] for i in range(8)]
    assert not echo.overlapped  # never two generations at once
    assert len(echo.calls) < 8 and shared.largest_batch > 1  # some requests shared a call
    assert sum(size for size, _, _ in echo.calls) == 16


def test_different_settings_are_never_mixed_and_regexes_stay_per_chat() -> None:
    echo = EchoEngine()
    shared = BatchingEngine(echo)
    with ThreadPoolExecutor(6) as pool:
        futures = [
            pool.submit(shared.generate, [chat(f"x{i}")], max_new_tokens=8 if i % 2 else 16, regex=f"r{i}")
            for i in range(6)
        ]
        texts = [f.result()[0].text for f in futures]
    assert texts == [f"X{i}" for i in range(6)]
    for size, budget, regex in echo.calls:
        assert len(regex) == size and all(int(r[1:]) % 2 == (budget == 8) for r in regex)


def test_a_failure_reaches_every_request_of_its_batch() -> None:
    shared = BatchingEngine(EchoEngine())
    started = threading.Event()

    def hold() -> None:
        with shared.exclusive():
            started.set()
            time.sleep(0.3)  # both requests below wait and then run as one batch

    holder = threading.Thread(target=hold)
    holder.start()
    started.wait()
    with ThreadPoolExecutor(2) as pool:
        failing = pool.submit(shared.generate, [chat("fail")])
        time.sleep(0.05)
        other = pool.submit(shared.generate, [chat("fine")])
        with pytest.raises(RuntimeError, match="the model failed"):
            failing.result()
        with pytest.raises(RuntimeError, match="the model failed"):
            other.result()
    holder.join()
    assert shared.generate([chat("again")])[0].text == "AGAIN"  # the engine is free again
