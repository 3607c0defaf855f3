"""The batching queue of answer events: batches of at most `max_batch`, written by a background
thread without the caller waiting, a failed write kept for the next try, nothing lost at close."""

from __future__ import annotations

import threading

import pytest

from rag_assets.core.lineage.answer_events import AnswerEventQueue


class Sink:
    def __init__(self, fail: int = 0) -> None:
        self.batches: list[list[int]] = []
        self.fail = fail
        self.written = threading.Event()

    def __call__(self, batch) -> None:
        if self.fail:
            self.fail -= 1
            raise OSError("event log unavailable")
        self.batches.append(list(batch))
        self.written.set()


def test_a_full_batch_is_written_by_the_background_thread() -> None:
    sink = Sink()
    queue = AnswerEventQueue(sink, max_batch=4, max_wait_s=60)
    queue.put(range(4))
    assert sink.written.wait(10)  # woken by the full batch, long before max_wait_s
    assert sink.batches == [[0, 1, 2, 3]]
    queue.close()


def test_flush_writes_in_batches_and_close_leaves_nothing_behind() -> None:
    sink = Sink()
    queue = AnswerEventQueue(sink, max_batch=64, max_wait_s=60)
    queue.put(range(150))
    queue.close()
    assert [x for batch in sink.batches for x in batch] == list(range(150))
    assert max(len(b) for b in sink.batches) == 64 and len(sink.batches) == 3
    assert not queue.pending


def test_a_failed_write_keeps_its_batch_for_the_next_try() -> None:
    sink = Sink(fail=1)
    queue = AnswerEventQueue(sink, max_batch=10, max_wait_s=60)
    queue.put([1, 2, 3])
    assert queue.flush() == 0 and list(queue.pending) == [1, 2, 3]
    assert queue.flush() == 3 and sink.batches == [[1, 2, 3]]


def test_beyond_max_pending_the_oldest_are_dropped_and_counted() -> None:
    sink = Sink(fail=100)
    queue = AnswerEventQueue(sink, max_batch=2, max_wait_s=60, max_pending=4)
    queue.put(range(6))
    queue.close()  # the last try fails too: the four newest stay queued, in order
    assert list(queue.pending) == [2, 3, 4, 5] and queue.dropped == 2 and sink.batches == []


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        AnswerEventQueue(Sink(), max_batch=0)
