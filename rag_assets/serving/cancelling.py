"""An ask abandoned by its client stops: the request's cancel event is set when the client goes
away, and the ask's thread checks it before every engine call, while it waits for the shared
model, between decode steps (the batch stops once all its requests are abandoned) and at every
streamed piece of text."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_CURRENT: ContextVar[threading.Event | None] = ContextVar("ask_cancel", default=None)


class Cancelled(Exception):
    """The client went away: the ask stops and nothing is stored."""


@contextmanager
def cancellable(event: threading.Event) -> Iterator[None]:
    """Within the block (on this thread), the work stops once `event` is set."""
    token = _CURRENT.set(event)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current() -> threading.Event | None:
    """The cancel event of the ask running on this thread (None: not cancellable)."""
    return _CURRENT.get()


def check() -> None:
    """Raise `Cancelled` if this thread's ask was abandoned."""
    event = _CURRENT.get()
    if event is not None and event.is_set():
        raise Cancelled("the client went away")
