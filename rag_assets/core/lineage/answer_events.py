"""Batching the events that record stored answers elsewhere (the Dagster event log: see
`rag_assets/events/served_answers.py`), so that answering never waits on that write and a busy
service writes its answers in a few batches instead of one write per answer.

`AnswerEventQueue` holds answers handed to it (`put`, which never blocks on the sink) and passes
them to its sink in batches from one background thread: as soon as `max_batch` answers wait, else
every `max_wait_s` seconds. `flush()` writes what waits now (a short-lived
command calls it before it exits); `close()` stops the thread after a last flush. A sink that
fails keeps its batch queued for the next try; beyond `max_pending` answers waiting, the oldest
are dropped and counted (`dropped`), never the answer itself, which is already in the catalogue.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Generic, TypeVar

Item = TypeVar("Item")
log = logging.getLogger(__name__)


class AnswerEventQueue(Generic[Item]):
    """Items queued by any thread, written by `sink` in batches of at most `max_batch`."""

    def __init__(
        self,
        sink: Callable[[Sequence[Item]], object],
        *,
        max_batch: int = 64,
        max_wait_s: float = 2.0,
        max_pending: int = 10_000,
    ) -> None:
        if max_batch < 1 or max_wait_s <= 0 or max_pending < max_batch:
            raise ValueError("max_batch >= 1, max_wait_s > 0 and max_pending >= max_batch are required")
        self.sink = sink
        self.max_batch, self.max_wait_s, self.max_pending = max_batch, max_wait_s, max_pending
        self.pending: deque[Item] = deque()
        self.dropped = 0
        self.batches_written = 0
        self._lock = threading.Lock()  # guards `pending`
        self._writing = threading.Lock()  # one sink call at a time
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def put(self, items: Iterable[Item]) -> None:
        """Queue `items`; the background thread (started on the first put) writes them soon."""
        with self._lock:
            self.pending.extend(items)
            overflow = len(self.pending) - self.max_pending
            for _ in range(max(overflow, 0)):
                self.pending.popleft()
            self.dropped += max(overflow, 0)
            full = len(self.pending) >= self.max_batch
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(target=self._run, name="answer-events", daemon=True)
                self._thread.start()
        if overflow > 0:
            log.warning(f"answer events: {overflow} oldest unwritten event(s) dropped ({self.max_pending} pending)")
        if full:
            self._wake.set()

    def flush(self) -> int:
        """Write every queued item now, batch by batch; returns how many were written (a failed
        batch stays queued and ends the flush)."""
        written = 0
        with self._writing:
            while True:
                with self._lock:
                    batch = [self.pending.popleft() for _ in range(min(self.max_batch, len(self.pending)))]
                if not batch:
                    return written
                try:
                    self.sink(batch)
                except Exception as err:  # the sink's store is down: keep the batch for the next try
                    log.warning(f"answer events: {len(batch)} event(s) not written yet ({err})")
                    with self._lock:
                        self.pending.extendleft(reversed(batch))
                    return written
                written += len(batch)
                self.batches_written += 1

    def close(self) -> int:
        """Stop the background thread and write what is left; returns how many were written."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
        return self.flush()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self.max_wait_s)  # woken early by a full batch or by close()
            self._wake.clear()
            if not self._stop.is_set():
                self.flush()
