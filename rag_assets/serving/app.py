"""`rag serve`: the query service (FastAPI + uvicorn) and the audit web page it serves.

Models load once (at start-up with --preload); every request uses the published index pair
(read again on a short read-only catalogue connection whenever the catalogue changed) and says
which pair it used, so a newly published index is served from the next request on. Questions in flight are bounded: one more
is refused with 503 and the reason, never queued without bound. The OpenAPI schema is at
/openapi.json (and browsable at /docs).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Query, Request
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field

from rag_assets.core.errors import BackendUnavailable, ConfigError
from rag_assets.serving.ask_options import AskOptions
from rag_assets.serving.query import QueryService, hit_dict

STATIC = Path(__file__).parent / "static"
MAX_SEARCHES = 32


class AskBody(BaseModel):
    question: str = Field(description="The question (not empty).")
    collection: str | None = Field(default=None, description="The collection (default: the only one).")
    strategy: str = Field(default="rdr2", description="A strategy name of the evaluation report.")
    top_k: int | None = Field(default=None, ge=1, le=50)
    expand_iterations: int | None = Field(default=None, ge=0, le=10)
    retrieval_mode: str | None = None
    router: str | None = None
    style: str | None = None
    tree_depth: int | None = Field(default=None, ge=0, le=3)
    tree_branching: int | None = Field(default=None, ge=1, le=4)
    form: str | None = None  # generated | extractive (None: the collection's default)

    def options(self) -> AskOptions:
        return AskOptions(**{k: v for k, v in self.model_dump().items() if k in AskOptions.__dataclass_fields__})


class Overloaded(BackendUnavailable):
    """More requests in flight than the service admits."""


class Gate:
    """At most `limit` requests of a kind in flight; one more is refused at once (503)."""

    def __init__(self, limit: int, what: str) -> None:
        self.limit = limit
        self.what = what
        self._semaphore = threading.BoundedSemaphore(limit)

    def enter(self) -> None:
        if not self._semaphore.acquire(blocking=False):
            raise Overloaded(f"overloaded: {self.limit} {self.what} already in flight; retry shortly")

    def leave(self) -> None:
        self._semaphore.release()


def status_of(err: BaseException) -> int:
    if isinstance(err, (BackendUnavailable, TimeoutError, ConnectionError)):
        return 503
    if isinstance(err, KeyError):
        return 404
    if isinstance(err, (ConfigError, ValueError, FileNotFoundError)):
        return 400
    from rag_assets.core.store.connections import is_lock_conflict

    return 503 if is_lock_conflict(err) else 500


def detail_of(err: BaseException) -> str:
    if isinstance(err, KeyError) and err.args:
        return str(err.args[0])
    return " ".join(str(err).split()) or type(err).__name__


def create_app(service: QueryService | None = None, *, max_asks: int = 8, preload: bool = False) -> FastAPI:
    service = service or QueryService()
    asks = Gate(max_asks, "questions")
    searches = Gate(MAX_SEARCHES, "searches")

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if preload:  # the embedder and the reader before the first request, not during it
            await asyncio.to_thread(service.models.embedder)
            await asyncio.to_thread(service.models.engine)
        yield
        service.models.close()

    app = FastAPI(
        title="RDR2 query service",
        description="Search, ask (streamed) and audit answers over the materialized catalogue and index.",
        lifespan=lifespan,
    )
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.exception_handler(Exception)
    async def _errors(_: Request, err: Exception) -> JSONResponse:
        return JSONResponse({"detail": detail_of(err)}, status_code=status_of(err))

    # FastAPI's idiom: each route is a small closure over the one service, registered by area
    _register_pages(app, service)
    _register_search_and_ask(app, service, searches, asks)
    _register_ask_stream(app, service, asks)
    _register_audit(app, service)
    return app


def _gated(gate: Gate, work: Callable[[], Any]) -> Any:
    """`work()` inside the gate (refused at once, 503, when the gate is full)."""
    gate.enter()
    try:
        return work()
    finally:
        gate.leave()


def _register_pages(app: FastAPI, service: QueryService) -> None:
    """The audit page, the health check and the askable strategies."""

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {"status": "ok", "collections": service.collections()}

    @app.get("/strategies")
    def strategies() -> dict[str, Any]:
        from rag_assets.defs.evaluation.strategy_config import ASKABLE

        return {"strategies": list(ASKABLE), "default": "rdr2"}


def _register_search_and_ask(app: FastAPI, service: QueryService, searches: Gate, asks: Gate) -> None:
    """Search the index and ask a question (answered whole), each bounded by its gate."""

    @app.get("/search")
    def search(
        q: str = Query(description="What to look for."),
        collection: list[str] | None = Query(default=None),
        mode: str = "hybrid",
        k: int = Query(default=5, ge=1, le=100),
        reranker: str | None = None,
    ) -> dict[str, Any]:
        hits, pairs = _gated(
            searches,
            lambda: service.search(q, collections=collection or None, mode=mode, k=k, reranker=reranker),
        )
        return {"hits": [hit_dict(h) for h in hits], "published": [p.to_dict() for p in pairs]}

    @app.post("/ask")
    def ask(body: AskBody) -> dict[str, Any]:
        result = _gated(
            asks,
            lambda: service.ask(
                body.question,
                collection=body.collection,
                strategy=body.strategy,
                options=body.options(),
                source="service",
            ),
        )
        return result.to_dict()


def _register_ask_stream(app: FastAPI, service: QueryService, asks: Gate) -> None:
    """Ask a question, the answer streamed as server-sent events."""

    @app.post("/ask/stream")
    async def ask_stream(body: AskBody) -> StreamingResponse:
        """Server-sent events: `note` lines, `token` pieces of the reader's text as generated,
        then `answer` (the stored answer, as POST /ask returns it) or `error`."""
        asks.enter()  # refused before the stream starts: a 503, not an error event
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any] | None] = asyncio.Queue()

        def put(event: str, data: Any) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, (event, data))

        def work() -> None:
            try:
                result = service.ask(
                    body.question,
                    collection=body.collection,
                    strategy=body.strategy,
                    options=body.options(),
                    source="service",
                    on_text=lambda text: put("token", {"text": text}),
                    on_note=lambda text: put("note", {"text": text}),
                )
                put("answer", result.to_dict())
            except Exception as err:  # every failure becomes the stream's error event
                put("error", {"status": status_of(err), "detail": detail_of(err)})
            finally:
                asks.leave()
                loop.call_soon_threadsafe(queue.put_nowait, None)

        threading.Thread(target=work, name="ask", daemon=True).start()

        async def events() -> AsyncIterator[str]:
            while (item := await queue.get()) is not None:
                event, data = item
                yield f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"

        return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})


def _register_audit(app: FastAPI, service: QueryService) -> None:
    """An answer's trace, the stored answers, a document, and the collections with their published index."""

    @app.get("/trace/{answer_id}")
    def trace(answer_id: str) -> dict[str, Any]:
        return service.trace(answer_id)

    @app.get("/answers")
    def answers(
        collection: str | None = None,
        source: str | None = None,
        strategy: str | None = None,
        contains: str | None = None,
        limit: int = Query(default=20, ge=1, le=1000),
    ) -> dict[str, Any]:
        return service.answers(collection=collection, source=source, strategy=strategy, contains=contains, limit=limit)

    @app.get("/documents/{collection}/{doc_id:path}")
    def document(collection: str, doc_id: str) -> dict[str, Any]:
        return service.document(collection, doc_id)

    @app.get("/collections")
    def collections() -> dict[str, Any]:
        from rag_assets.core.store.publication import pin_index
        from rag_assets.serving.published import read_catalogue

        names = service.collections()
        with read_catalogue() as con:
            return {"collections": [pin_index(con, name).to_dict() for name in names]}


def run_service(*, host: str, port: int, max_asks: int, preload: bool) -> None:
    import uvicorn

    from rag_assets.commands.errors import console

    console.print(
        f"serving on [cyan]http://{host}:{port}/[/cyan] (API: /docs; CLI: RAG_SERVICE_URL=http://{host}:{port})",
        highlight=False,
    )
    uvicorn.run(create_app(max_asks=max_asks, preload=preload), host=host, port=port, log_level="warning")
