"""One admitted ask, run on its own thread and watched from the event loop: when its client goes
away the ask is cancelled (serving/cancelling.py) and its slot is given back at once, also in
the middle of generating; a streamed ask answers bad input with the same status as a whole one,
because its response starts only with the first piece of the answer."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse, StreamingResponse

from rag_assets.serving.cancelling import Cancelled, cancellable, check
from rag_assets.serving.limits import Slot

DISCONNECT_CHECK_S = 0.2  # how often a waiting ask looks whether its client is still there
Event = tuple[str, Any]
Describe = Callable[[BaseException], tuple[int, str]]  # an error -> (status, detail)


class AskRun:
    def __init__(self, slot: Slot, describe: Describe) -> None:
        self.slot = slot
        self.describe = describe
        self.cancel = threading.Event()

    def abandon(self) -> None:
        """The client went away: the work stops at its next check, the slot is free now."""
        self.cancel.set()
        self.slot.leave()

    def _start(self, work: Callable[[], Any]) -> asyncio.Future:
        """`work()` on its own thread (cancellable), its result in the returned future."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()

        def settle(result: Any, error: BaseException | None) -> None:
            if future.done():
                return
            if self.cancel.is_set():  # abandoned: nobody awaits it (an unread exception would be logged)
                future.cancel()
            else:
                future.set_exception(error) if error is not None else future.set_result(result)

        def run() -> None:
            with cancellable(self.cancel):
                try:
                    result, error = work(), None
                except BaseException as err:  # handed to the request, which answers it
                    result, error = None, err
                finally:
                    self.slot.leave()
            loop.call_soon_threadsafe(settle, result, error)

        threading.Thread(target=run, name="ask", daemon=True).start()
        return future

    async def _watch(self, request: Request, future: asyncio.Future) -> Any:
        """`future`'s result; abandons the ask (and raises Cancelled) if the client goes away first."""
        while True:
            done, _ = await asyncio.wait({future}, timeout=DISCONNECT_CHECK_S)
            if done:
                return future.result()
            if await request.is_disconnected():
                self.abandon()
                raise Cancelled("the client went away")

    async def whole(self, request: Request, work: Callable[[], Any]) -> Any:
        """The ask answered whole (POST /ask)."""
        return await self._watch(request, self._start(work))

    async def streamed(self, request: Request, work: Callable[[Callable, Callable], Any]) -> Any:
        """The ask as server-sent events (POST /ask/stream): `work(on_text, on_note)` returns the
        result (with `to_dict()`). An error before the first piece of the answer is the
        response's status, as POST /ask answers it; later ones are the stream's `error` event."""
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        def put(event: str, data: Any) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, (event, data))

        def on_text(text: str) -> None:
            check()  # raised inside the generation: it stops at this token
            put("token", {"text": text})

        def job() -> None:
            try:
                put("answer", work(on_text, lambda text: put("note", {"text": text})).to_dict())
            except Cancelled:
                pass
            except Exception as err:  # answered as the status or the stream's error event
                status, detail = self.describe(err)
                put("error", {"status": status, "detail": detail})
            finally:
                loop.call_soon_threadsafe(queue.put_nowait, None)

        self._start(job)
        held = await self._opening(request, queue)
        if held and held[-1] is not None and held[-1][0] == "error":
            error = held[-1][1]
            return JSONResponse({"detail": error["detail"]}, status_code=error["status"])
        return StreamingResponse(
            self._events(held, queue), media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
        )

    async def _opening(self, request: Request, queue: asyncio.Queue) -> list[Event | None]:
        """The events up to the first that is not a note (notes are held back until then)."""
        held: list[Event | None] = []
        while not held or (held[-1] is not None and held[-1][0] == "note"):
            getter = asyncio.ensure_future(queue.get())
            try:
                held.append(await self._watch(request, getter))
            finally:
                getter.cancel()
        return held

    async def _events(self, held: list[Event | None], queue: asyncio.Queue) -> AsyncIterator[str]:
        finished = False
        try:
            for item in held:
                if item is None:
                    finished = True
                    return
                yield _sse(item)
            while (item := await queue.get()) is not None:
                yield _sse(item)
            finished = True
        finally:
            if not finished:  # the client went away mid-stream (the response was cancelled)
                self.abandon()


def _sse(item: Event) -> str:
    event, data = item
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"
