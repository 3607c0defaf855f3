"""What the service admits: body and text sizes (413 naming the limit), requests in flight per
kind (503 with Retry-After), requests per caller and minute (429 with Retry-After), and one log
line per refused request (never a traceback for a client's mistake)."""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable

from fastapi import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from rag_assets.core.errors import BackendUnavailable

MAX_BODY_BYTES = 64 * 1024
MAX_QUESTION_CHARS = 2_000
MAX_QUERY_CHARS = 1_000
MAX_FILTER_CHARS = 200
MAX_COLLECTIONS = 16
DEFAULT_RATE = "600/minute"

log = logging.getLogger("rag_assets.serving")


class Overloaded(BackendUnavailable):
    """More requests in flight than the service admits (503, with when to retry)."""

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


def check_length(what: str, value: str | None, limit: int) -> None:
    """413 when `value` is longer than `limit` characters."""
    if value is not None and len(value) > limit:
        raise HTTPException(413, f"{what} is {len(value)} characters long; the limit is {limit}")


def check_count(what: str, values: list[str] | None, limit: int) -> None:
    if values is not None and len(values) > limit:
        raise HTTPException(413, f"{len(values)} {what} given; the limit is {limit}")


class Gate:
    """At most `limit` requests of a kind in flight; one more is refused at once (503)."""

    def __init__(self, limit: int, what: str, retry_after_s: int) -> None:
        self.limit = limit
        self.what = what
        self.retry_after_s = retry_after_s
        self._semaphore = threading.BoundedSemaphore(limit)

    def enter(self) -> Slot:
        if not self._semaphore.acquire(blocking=False):
            raise Overloaded(
                f"overloaded: {self.limit} {self.what} already in flight; retry in {self.retry_after_s} s",
                self.retry_after_s,
            )
        return Slot(self._semaphore)


class Slot:
    """One admitted request's place: given back once, by whichever comes first (the work ending,
    the client leaving)."""

    def __init__(self, semaphore: threading.BoundedSemaphore) -> None:
        self._semaphore = semaphore
        self._lock = threading.Lock()
        self._held = True

    def leave(self) -> None:
        with self._lock:
            if self._held:
                self._held = False
                self._semaphore.release()

    @property
    def held(self) -> bool:
        return self._held


class RateLimit:
    """`rate` (e.g. '600/minute', the `limits` package's notation) per caller, a moving window."""

    def __init__(self, rate: str = DEFAULT_RATE) -> None:
        from limits import parse
        from limits.storage import MemoryStorage
        from limits.strategies import MovingWindowRateLimiter

        try:
            self.item = parse(rate)
        except ValueError:
            raise ValueError(f"rate limit {rate!r}: write it as N/second, N/minute or N/hour") from None
        self.rate = rate
        self._limiter = MovingWindowRateLimiter(MemoryStorage())

    def hit(self, caller: str) -> None:
        """Count one request of `caller`; 429 with Retry-After past the rate."""
        if self._limiter.hit(self.item, caller):
            return
        reset = self._limiter.get_window_stats(self.item, caller).reset_time
        retry = max(1, math.ceil(reset - time.time()))
        raise HTTPException(
            429,
            f"too many requests: the limit is {self.rate} per token; retry in {retry} s",
            {"Retry-After": str(retry)},
        )


class BodyLimit:
    """ASGI middleware: a request body over `limit` bytes is refused with 413, by its
    Content-Length before it is read, or (sent in chunks) as soon as it passes the limit."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_large = HTTPException(413, f"the request body is over {self.limit} bytes; the limit is {self.limit}")
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.limit:
            await _send_json(send, 413, too_large.detail)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise too_large
            return message

        await self.app(scope, counted, send)


def printable(text: str) -> str:
    """`text` with its control characters escaped: a path sent with %0A stays on one log line."""
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def log_refusal(what: str, status: int, caller: str, client: str | None) -> None:
    """One log line per refused or failed request: what was asked (`GET /search`, `MCP tool ask`),
    the status, who asked (a token's name, never its secret, or `no token`) and from where."""
    log.warning("%s -> %d (%s, client %s)", printable(what), status, caller, printable(client or "unknown"))


class RefusalLog:
    """ASGI middleware: one log line per refused or failed request (`log_refusal`); `caller_of`
    names the request's caller from its scope."""

    def __init__(self, app: ASGIApp, caller_of: Callable[[Scope], str]) -> None:
        self.app = app
        self.caller_of = caller_of

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def logged(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] >= 400:
                client = scope.get("client")
                what = f"{scope['method']} {scope['path']}"
                log_refusal(what, message["status"], self.caller_of(scope), client[0] if client else None)
            await send(message)

        await self.app(scope, receive, logged)


async def _send_json(send: Send, status: int, detail: str) -> None:
    import json

    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
