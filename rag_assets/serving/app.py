"""`rag serve`: the query service (FastAPI + uvicorn) and the audit web page it serves.

Models load once (at start-up with --preload); every request uses the published index pair
(read again on a short read-only catalogue connection whenever the catalogue changed) and says
which pair it used, so a newly published index is served from the next request on. Questions in flight are bounded: one more
is refused with 503 and the reason, never queued without bound. The OpenAPI schema is at
/openapi.json (and browsable at /docs, served from the swagger-ui-bundle package: no CDN).

Who may do what is checked per endpoint by FastAPI dependencies (serving/access.py: API tokens
with a scope per collection); sizes, rates and requests in flight are bounded (serving/limits.py);
an ask whose client goes away is cancelled (serving/ask_runs.py); no response carries a server
path (serving/redaction.py). See docs/service.md, "Security".
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field
from starlette.middleware.trustedhost import TrustedHostMiddleware

from rag_assets.core.answering.policy.options import AskOptions
from rag_assets.core.errors import BackendUnavailable, ConfigError
from rag_assets.core.store.api_tokens import EVERY_COLLECTION
from rag_assets.serving.access import (
    Caller,
    TokenBook,
    allowed_hosts,
    ask_target,
    bearer_token,
    caller,
    collections_for,
    maybe_caller,
    token_label,
)
from rag_assets.serving.ask_runs import AskRun
from rag_assets.serving.cancelling import Cancelled
from rag_assets.serving.errors import described, detail_of, status_of
from rag_assets.serving.limits import (
    DEFAULT_RATE,
    MAX_COLLECTIONS,
    MAX_FILTER_CHARS,
    MAX_QUERY_CHARS,
    BodyLimit,
    Gate,
    Overloaded,
    RateLimit,
    RefusalLog,
    check_count,
    check_length,
)
from rag_assets.serving.query import QueryService, hit_dict
from rag_assets.serving.redaction import public_document, public_trace

STATIC = Path(__file__).parent / "static"
MAX_SEARCHES = 32
ASK_RETRY_AFTER_S = 5
SEARCH_RETRY_AFTER_S = 1
NAME = Field(default=None, max_length=MAX_FILTER_CHARS)


class AskBody(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelt or unknown field is a 422 naming it, not ignored

    question: str = Field(description="The question (not empty).")
    collection: str | None = Field(
        default=None, max_length=MAX_FILTER_CHARS, description="The collection (default: the only one)."
    )
    strategy: str = Field(
        default="rdr2", max_length=MAX_FILTER_CHARS, description="A strategy name of the evaluation report."
    )
    top_k: int | None = Field(default=None, ge=1, le=50)
    expand_iterations: int | None = Field(default=None, ge=0, le=10)
    retrieval_mode: str | None = NAME
    router: str | None = NAME
    style: str | None = NAME
    tree_depth: int | None = Field(default=None, ge=0, le=3)
    tree_branching: int | None = Field(default=None, ge=1, le=4)
    document: str | None = Field(
        default=None,
        max_length=MAX_FILTER_CHARS,
        description="Search and route only this document (doc id, file name or title).",
    )
    by_name: bool | None = Field(
        default=None,
        description="Where no document card names a document, search and route the documents the question names "
        "by their file names (company, year, form: ACME_2022_10K.pdf for 'Acme's FY2022 ...').",
    )
    all_documents: bool | None = Field(
        default=None,
        description="Search every document. By default a question is searched in the documents whose cards "
        "(organisation, period, form) it names, and in all of them where it names none.",
    )
    form: str | None = Field(
        default=None, max_length=MAX_FILTER_CHARS, description="generated | extractive (default: the collection's)."
    )

    def options(self) -> AskOptions:
        return AskOptions(**{k: v for k, v in self.model_dump().items() if k in AskOptions.__dataclass_fields__})


def create_app(
    service: QueryService | None = None,
    *,
    max_asks: int = 8,
    preload: bool = False,
    tokens_required: bool = False,
    hosts: list[str] | None = None,
    rate: str = DEFAULT_RATE,
) -> FastAPI:
    """The service's app. `tokens_required`: every request needs a token even while the catalogue
    has none (a service reachable from other machines); `hosts`: the Host header values answered
    (default: the loopback names); `rate`: requests per token (e.g. '600/minute')."""
    service = service or QueryService()
    asks = Gate(max_asks, "questions", ASK_RETRY_AFTER_S)
    searches = Gate(MAX_SEARCHES, "searches", SEARCH_RETRY_AFTER_S)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if preload:  # the embedder and the reader before the first request, not during it
            await asyncio.to_thread(service.models.embedder)
            await asyncio.to_thread(service.models.engine)
        async with app.state.mcp.session_manager.run():  # the MCP endpoint's sessions
            yield
        service.models.close()

    app = FastAPI(
        title="RDR2 query service",
        description="Search, ask (streamed) and audit answers over the materialized catalogue and index.",
        lifespan=lifespan,
        docs_url=None,  # served below from the package's files, not a CDN
        redoc_url=None,
    )
    app.state.tokens = TokenBook(tokens_required=tokens_required)
    app.state.rate_limit = RateLimit(rate)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    _add_guards(app, hosts or allowed_hosts("127.0.0.1"))
    _register_errors(app)

    # FastAPI's idiom: each route is a small closure over the one service, registered by area
    _register_docs(app)
    _register_pages(app, service)
    _register_search_and_ask(app, service, searches, asks)
    _register_ask_stream(app, service, asks)
    _register_audit(app, service)
    _register_tokens(app, service)
    _mount_mcp(app, service, asks)
    return app


def _add_guards(app: FastAPI, hosts: list[str]) -> None:
    """Outermost first: one log line per refusal, the Host allow-list (DNS rebinding), the body cap."""
    from starlette.datastructures import Headers

    def caller_of(scope: Any) -> str:
        return token_label(app.state.tokens, bearer_token(Headers(scope=scope).get("authorization")))

    app.add_middleware(BodyLimit)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=hosts)
    app.add_middleware(RefusalLog, caller_of=caller_of)


def _register_errors(app: FastAPI) -> None:
    """A known error is its status and one line (no traceback); anything else is a 500."""

    async def known(_: Request, err: Exception) -> JSONResponse:
        headers = {"Retry-After": str(err.retry_after_s)} if isinstance(err, Overloaded) else None
        return JSONResponse({"detail": detail_of(err)}, status_code=status_of(err), headers=headers)

    async def gone(_: Request, __: Exception) -> JSONResponse:
        return JSONResponse({"detail": "the client went away"}, status_code=499)

    for kind in (
        ConfigError,
        ValueError,
        FileNotFoundError,
        KeyError,
        BackendUnavailable,
        TimeoutError,
        ConnectionError,
    ):
        app.add_exception_handler(kind, known)
    app.add_exception_handler(Cancelled, gone)
    app.add_exception_handler(Exception, known)


def _register_docs(app: FastAPI) -> None:
    """/docs: Swagger UI from the swagger-ui-bundle package's files (works offline)."""
    from fastapi.openapi.docs import get_swagger_ui_html
    from swagger_ui_bundle import swagger_ui_path

    app.mount("/docs-assets", StaticFiles(directory=str(swagger_ui_path)), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    def docs() -> Any:
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="RDR2 query service",
            swagger_js_url="/docs-assets/swagger-ui-bundle.js",
            swagger_css_url="/docs-assets/swagger-ui.css",
            swagger_favicon_url="/docs-assets/favicon-32x32.png",
        )


def _mount_mcp(app: FastAPI, service: QueryService, asks: Gate) -> None:
    """The MCP tools over streamable HTTP at /mcp/, with the API's tokens, rate limit and ask gate
    (the Host allow-list and body cap of the app apply too)."""
    from mcp.server.transport_security import TransportSecuritySettings

    from rag_assets.serving.mcp_server import McpAccess, build_mcp

    mcp = build_mcp(service, McpAccess(app.state.tokens, app.state.rate_limit), asks)
    checked_by_the_app = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    app.state.mcp = mcp
    app.mount(
        "/mcp",
        mcp.streamable_http_app(
            streamable_http_path="/", stateless_http=True, json_response=True, transport_security=checked_by_the_app
        ),
    )


def _gated(gate: Gate, work: Callable[[], Any]) -> Any:
    """`work()` inside the gate (refused at once, 503, when the gate is full)."""
    slot = gate.enter()
    try:
        return work()
    finally:
        slot.leave()


def scoped(service: QueryService, who: Caller, wanted: list[str] | None, scope: str) -> list[str] | None:
    """The collections a request of `who` touches (serving/access.py `collections_for`)."""
    return collections_for(who, service.collections, wanted, scope)


def _register_pages(app: FastAPI, service: QueryService) -> None:
    """The audit page, the health check and the askable strategies."""

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/health")
    def health(who: Caller | None = Depends(maybe_caller)) -> dict[str, Any]:
        """Anyone may ask whether the service is up; it names only the caller's collections."""
        import torch

        visible = who.within(service.collections(), "read") if who is not None else []
        # the threads a model call uses (`rag serve --threads`): what an operator tunes
        return {
            "status": "ok",
            "collections": visible,
            "token": who.name if who else None,
            "model_threads": torch.get_num_threads(),
        }

    @app.get("/strategies")
    def strategies(_: Caller = Depends(caller)) -> dict[str, Any]:
        from rag_assets.core.answering.policy.catalogue import ASKABLE

        return {"strategies": list(ASKABLE), "default": "rdr2"}


def _register_search_and_ask(app: FastAPI, service: QueryService, searches: Gate, asks: Gate) -> None:
    """Search the index and ask a question (answered whole), each bounded by its gate."""

    @app.get("/search")
    def search(
        q: str = Query(description="What to look for."),
        collection: list[str] | None = Query(default=None),
        mode: str = Query(default="hybrid", max_length=MAX_FILTER_CHARS),
        k: int = Query(default=5, ge=1, le=100),
        reranker: str | None = Query(default=None, max_length=MAX_FILTER_CHARS),
        document: str | None = Query(default=None, max_length=MAX_FILTER_CHARS),
        who: Caller = Depends(caller),
    ) -> dict[str, Any]:
        """Needs `read` in the collections searched (none named: the token's own)."""
        from rag_assets.serving.catalogue_reads import published_reranker

        check_length("the query", q, MAX_QUERY_CHARS)
        check_count("collections", collection, MAX_COLLECTIONS)
        wanted = scoped(service, who, collection or None, "read")
        if reranker is not None:
            reranker = published_reranker(reranker, wanted if wanted and wanted != ["all"] else service.collections())
        hits, pairs = _gated(
            searches,
            lambda: service.search(q, collections=wanted, mode=mode, k=k, reranker=reranker, document=document),
        )
        return {"hits": [hit_dict(h) for h in hits], "published": [p.to_dict() for p in pairs]}

    @app.post("/ask")
    async def ask(body: AskBody, request: Request, who: Caller = Depends(caller)) -> dict[str, Any]:
        """Needs `ask` in the collection; the answer is stored with the token's name."""
        collection = ask_collection(service, who, body)
        run = AskRun(asks.enter(), described)
        result = await run.whole(request, lambda: _ask(service, body, collection, who))
        return result.to_dict()


def ask_collection(service: QueryService, who: Caller, body: AskBody) -> str | None:
    """The collection an ask of `who` goes to (serving/access.py `ask_target`)."""
    return ask_target(who, service.collections, body.question, body.collection)


def _ask(service: QueryService, body: AskBody, collection: str | None, who: Caller, **streams: Any) -> Any:
    return service.ask(
        body.question,
        collection=collection,
        strategy=body.strategy,
        options=body.options(),
        source="service",
        asked_by=who.name,
        **streams,
    )


def _register_ask_stream(app: FastAPI, service: QueryService, asks: Gate) -> None:
    """Ask a question, the answer streamed as server-sent events."""

    @app.post("/ask/stream")
    async def ask_stream(body: AskBody, request: Request, who: Caller = Depends(caller)) -> Any:
        """Server-sent events: `note` lines, `token` pieces of the reader's text as generated,
        then `answer` (the stored answer, as POST /ask returns it) or `error`. Bad input is
        answered as POST /ask answers it (a 4xx status, no stream)."""
        collection = ask_collection(service, who, body)
        run = AskRun(asks.enter(), described)
        return await run.streamed(
            request,
            lambda on_text, on_note: _ask(service, body, collection, who, on_text=on_text, on_note=on_note),
        )


def _register_audit(app: FastAPI, service: QueryService) -> None:
    """An answer's trace, the stored answers, a document, and the collections with their published index."""

    @app.get("/trace/{answer_id}")
    def trace(answer_id: str, who: Caller = Depends(caller)) -> dict[str, Any]:
        """Needs `read` in the answer's collection (else: as if there were no such answer)."""
        return public_trace(service.trace(answer_id, may_read=lambda c: who.allows(c, "read")))

    @app.get("/answers")
    def answers(
        collection: str | None = Query(default=None, max_length=MAX_FILTER_CHARS),
        source: str | None = Query(default=None, max_length=MAX_FILTER_CHARS),
        strategy: str | None = Query(default=None, max_length=MAX_FILTER_CHARS),
        contains: str | None = Query(default=None, max_length=MAX_FILTER_CHARS),
        limit: int = Query(default=20, ge=1, le=1000),
        who: Caller = Depends(caller),
    ) -> dict[str, Any]:
        """The answers of the collections the token may read (`contains`: literal words)."""
        within = scoped(service, who, [collection] if collection else None, "read")
        return service.answers(
            collection=collection,
            source=source,
            strategy=strategy,
            contains=contains,
            limit=limit,
            within=tuple(within) if within is not None else None,
        )

    @app.get("/documents/{collection}/{doc_id:path}")
    def document(collection: str, doc_id: str, who: Caller = Depends(caller)) -> dict[str, Any]:
        who.check([collection], "read")
        return public_document(service.document(collection, doc_id))

    @app.get("/collections")
    def collections(who: Caller = Depends(caller)) -> dict[str, Any]:
        from rag_assets.core.store.publication import pin_index
        from rag_assets.serving.catalogue_reads import read_catalogue

        names = who.within(service.collections(), "read")
        with read_catalogue() as con:
            return {"collections": [pin_index(con, name).to_dict() for name in names]}


def _register_tokens(app: FastAPI, service: QueryService) -> None:
    """The tokens an admin may see."""

    @app.get("/tokens")
    def tokens(who: Caller = Depends(caller)) -> dict[str, Any]:
        """Needs `admin`: the tokens that reach the collections the caller administers (names and
        scopes, never the secrets)."""
        from rag_assets.core.store.api_tokens import list_tokens
        from rag_assets.serving.catalogue_reads import read_catalogue

        mine = set(who.within([*service.collections(), EVERY_COLLECTION], "admin"))
        if not mine:
            raise HTTPException(403, f"token {who.name!r} is not admin in any collection")
        with read_catalogue() as con:
            found = [t for t in list_tokens(con) if t.revoked_at is None]
        everywhere = EVERY_COLLECTION in mine
        return {
            "tokens": [
                {"name": t.name, "scopes": t.scopes, "created_at": t.created_at.isoformat(timespec="seconds")}
                for t in found
                if everywhere or mine & set(t.scopes)
            ]
        }
