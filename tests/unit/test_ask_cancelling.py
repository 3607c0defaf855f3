"""An abandoned ask stops in the shared engine: while it waits for the model it leaves the queue,
and a running batch stops between decode steps once every request in it was abandoned (a batch
with one live request runs on)."""

from __future__ import annotations

import threading

from rag_assets.core.engines.base import Generation, LLMEngine
from rag_assets.serving.batching import BatchingEngine
from rag_assets.serving.cancelling import Cancelled, cancellable

SAFETY_STEPS = 300  # a generation that is never stopped ends after this many steps (about 3 s)


class SteppingEngine(LLMEngine):
    """Decodes step by step until `stop_when()` says stop (as transformers' stopping criteria do)."""

    model_id = "stepping"

    def __init__(self) -> None:
        self.stop_when = None
        self.started = threading.Event()
        self.steps = 0

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def generate(self, batch, *, adapter=None, max_new_tokens=128, temperature=0.0, regex=None):
        self.started.set()
        self.steps = 0
        stopper = threading.Event()
        while self.steps < SAFETY_STEPS and not (self.stop_when is not None and self.stop_when()):
            self.steps += 1
            stopper.wait(0.01)
        return [Generation("done", 1, self.steps) for _ in batch]


def ask_in_thread(engine: BatchingEngine, cancel: threading.Event | None, outcome: dict) -> threading.Thread:
    def run() -> None:
        try:
            if cancel is None:
                outcome["result"] = engine.generate([[{"role": "user", "content": "q"}]])
            else:
                with cancellable(cancel):
                    outcome["result"] = engine.generate([[{"role": "user", "content": "q"}]])
        except Cancelled as err:
            outcome["cancelled"] = str(err)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_a_running_generation_stops_when_its_only_client_went_away() -> None:
    inner = SteppingEngine()
    engine = BatchingEngine(inner)
    cancel, outcome = threading.Event(), {}
    thread = ask_in_thread(engine, cancel, outcome)
    assert inner.started.wait(30)
    cancel.set()
    thread.join(60)
    assert outcome == {"cancelled": "the client went away"} and inner.steps < SAFETY_STEPS
    assert inner.stop_when is None  # the hook is removed after the batch


def test_a_waiting_request_leaves_the_queue() -> None:
    inner = SteppingEngine()
    engine = BatchingEngine(inner)
    held = engine.exclusive()
    held.__enter__()  # another caller has the model
    try:
        cancel, outcome = threading.Event(), {}
        thread = ask_in_thread(engine, cancel, outcome)
        cancel.set()
        thread.join(60)
        assert outcome == {"cancelled": "the client went away"} and engine._waiting == []
        assert not inner.started.is_set()  # it never reached the model
    finally:
        held.__exit__(None, None, None)


def test_a_batch_with_a_live_request_runs_on() -> None:
    inner = SteppingEngine()
    engine = BatchingEngine(inner)
    held = engine.exclusive()
    held.__enter__()
    cancel, gone, live = threading.Event(), {}, {}
    threads = [ask_in_thread(engine, cancel, gone), ask_in_thread(engine, None, live)]
    while len(engine._waiting) < 2:  # both queued: they will run as one batch
        threading.Event().wait(0.01)
    held.__exit__(None, None, None)
    assert inner.started.wait(30)
    cancel.set()
    for thread in threads:
        thread.join(120)
    assert live["result"][0].output_tokens == SAFETY_STEPS  # not stopped for the live one
