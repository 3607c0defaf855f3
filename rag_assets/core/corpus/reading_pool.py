"""Reading many files on several processes, results in the files' order.

Reading a PDF (PDFium's character boxes, pdfplumber's ruled tables) is CPU work in one thread;
10,206 pages of filings take minutes on one core. Files are read on spawned worker processes
(no fork of a process that runs Dagster's threads), a bounded number in flight so that finished
documents do not pile up ahead of the one the caller waits for. A worker that dies (a crash in a
native reader) does not lose the file: it and every file after it are read here, in this process,
as they would be without workers.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

MAX_AUTO_WORKERS = 8


def worker_count(requested: int) -> int:
    """`requested` processes, or one per CPU core (at most `MAX_AUTO_WORKERS`) for 0."""
    return requested if requested > 0 else min(os.cpu_count() or 1, MAX_AUTO_WORKERS)


def in_order(tasks: Sequence[T], work: Callable[[T], R], workers: int) -> Iterator[R]:
    """`work(task)` for every task, yielded in task order; on `workers` spawned processes when
    there are more than one of each (`work` and the tasks must pickle), else here."""
    if workers <= 1 or len(tasks) <= 1:
        yield from (work(task) for task in tasks)
        return
    with ProcessPoolExecutor(min(workers, len(tasks)), mp_context=multiprocessing.get_context("spawn")) as pool:
        pending: deque[tuple[T, Future]] = deque()
        queued = iter(tasks)
        for task in queued:
            pending.append((task, pool.submit(work, task)))
            if len(pending) >= 2 * workers:
                break
        while pending:
            task, future = pending.popleft()
            try:
                result = future.result()
            except Exception:  # the worker died (BrokenProcessPool) or could not pickle: read it here
                yield work(task)
                yield from (work(rest) for rest, _ in pending)
                yield from (work(rest) for rest in queued)
                return
            yield result
            following = next(queued, None)
            if following is not None:
                pending.append((following, pool.submit(work, following)))
