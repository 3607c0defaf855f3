"""The knowledge base as tools for agents (Model Context Protocol, the official `mcp` SDK): list
collections, search, ask (with citations), trace an answer, read a document's subtree.

The same tools are served over stdio (`rag mcp`, the token from RAG_SERVICE_TOKEN) and over the
service's HTTP (streamable HTTP at /mcp/, the token in `Authorization: Bearer`), with the same
tokens, scopes and rate limit as the HTTP API (serving/access.py): a tool the token may not use
answers an error naming why, as the API's 401/403 do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import HTTPException
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from rag_assets.core.answering.policy.options import AskOptions
from rag_assets.serving.access import (
    OVER_HTTP,
    OVER_STDIO,
    Caller,
    TokenBook,
    TokenChannel,
    ask_target,
    bearer_token,
    collections_for,
    identify,
    token_label,
)
from rag_assets.serving.cancelling import Cancelled
from rag_assets.serving.errors import detail_of, status_of
from rag_assets.serving.limits import MAX_QUERY_CHARS, Gate, RateLimit, check_length, log_refusal
from rag_assets.serving.query import QueryService, hit_dict
from rag_assets.serving.redaction import public_document, public_trace

MAX_SUBTREE_NODES = 400
INSTRUCTIONS = (
    "A structure-aware knowledge base. list_collections first; search finds passages; ask answers "
    "with numbered citations (doc_id, node_id); read_document shows a cited node with what is under it; "
    "trace audits a stored answer down to its source spans."
)


class McpAccess:
    """Who calls a tool: the request's bearer token over HTTP, else (stdio) the process's token;
    `channel` says, in a refusal, how to send one (a header over HTTP, RAG_SERVICE_TOKEN over stdio)."""

    def __init__(
        self,
        tokens: TokenBook,
        rate_limit: RateLimit | None,
        token: str | None = None,
        channel: TokenChannel = OVER_HTTP,
    ) -> None:
        self.tokens = tokens
        self.rate_limit = rate_limit
        self.token = token
        self.channel = channel

    def token_of(self, ctx: Context | None) -> str | None:
        headers = ctx.headers if ctx is not None else None
        if headers is not None:  # over HTTP: the request's own header, never the process's token
            return bearer_token(headers.get("authorization"))
        return self.token

    def caller(self, ctx: Context | None) -> Caller:
        who = identify(self.tokens, self.token_of(ctx), self.channel)
        if self.rate_limit is not None:
            self.rate_limit.hit(who.key)
        return who

    def answered(self, tool: str, ctx: Context | None, work: Callable[[], Any]) -> Any:
        """`work()`, its refusals and errors as the tool's error message (one line, no server
        path), each logged as the HTTP API logs its refusals (serving/limits.py `log_refusal`)."""
        try:
            return work()
        except Cancelled:
            raise
        except Exception as err:  # every failure is the tool's error, as the API's 4xx/5xx
            refused = isinstance(err, HTTPException)
            status = err.status_code if refused else status_of(err)
            log_refusal(f"MCP tool {tool}", status, token_label(self.tokens, self.token_of(ctx)), _client(ctx))
            raise ToolError(str(err.detail) if refused else detail_of(err)) from None


def _client(ctx: Context | None) -> str:
    """The caller's address over HTTP; `stdio` for the local agent of `rag mcp`."""
    try:
        request = ctx.request_context.request if ctx is not None else None
    except ValueError:  # no request: called outside one
        request = None
    client = getattr(request, "client", None)
    if client is not None:
        return client.host
    return "stdio" if request is None else "unknown"


def subtree(document: dict[str, Any], node_id: int, limit: int = MAX_SUBTREE_NODES) -> dict[str, Any]:
    """Node `node_id` of a document (as `document_dict` gives it) with every node under it, in
    order, at most `limit` nodes (`truncated` says when more were left out)."""
    nodes = document["nodes"]
    start = next((i for i, n in enumerate(nodes) if n["node_id"] == node_id), None)
    if start is None:
        raise KeyError(f"no node {node_id} in document {document['doc_id']!r}")
    depth = nodes[start]["depth"]
    end = next((i for i in range(start + 1, len(nodes)) if nodes[i]["depth"] <= depth), len(nodes))
    shown = nodes[start : min(end, start + limit)]
    keep = ("node_id", "parent_id", "kind", "depth", "text", "heading_path", "pages")
    return {
        "collection": document["collection"],
        "doc_id": document["doc_id"],
        "title": document["title"],
        "source": document["uri"],
        "nodes": [{key: n[key] for key in keep} for n in shown],
        "truncated": end - start > limit,
    }


def build_mcp(service: QueryService, access: McpAccess, asks: Gate | None = None) -> MCPServer:
    """The MCP server over `service`, each tool checking its caller through `access`; asks share
    the service's gate (`asks`: refused when full, as the API's 503)."""
    mcp = MCPServer("rag", instructions=INSTRUCTIONS, log_level="WARNING")
    _add_reading_tools(mcp, service, access)
    _add_asking_tools(mcp, service, access, asks)
    return mcp


def _add_reading_tools(mcp: MCPServer, service: QueryService, access: McpAccess) -> None:
    @mcp.tool()
    def list_collections(ctx: Context) -> dict[str, Any]:
        """The collections this token may read, with the scope it has in each."""

        def work() -> dict[str, Any]:
            who = access.caller(ctx)
            readable = who.within(service.collections(), "read")
            return {"collections": [{"collection": c, "scope": _scope(who, c)} for c in readable]}

        return access.answered("list_collections", ctx, work)

    @mcp.tool()
    def search(
        query: str, ctx: Context, collection: str | None = None, k: int = 5, mode: str = "hybrid"
    ) -> dict[str, Any]:
        """Passages for `query` (k at most 50; mode hybrid, dense or bm25) in `collection` (default:
        every collection the token may read)."""

        def work() -> dict[str, Any]:
            who = access.caller(ctx)
            check_length("the query", query, MAX_QUERY_CHARS)
            wanted = collections_for(who, service.collections, [collection] if collection else None, "read")
            hits, pairs = service.search(query, collections=wanted, mode=mode, k=max(1, min(k, 50)))
            return {"hits": [hit_dict(h) for h in hits], "published": [p.to_dict() for p in pairs]}

        return access.answered("search", ctx, work)

    @mcp.tool()
    def read_document(collection: str, doc_id: str, ctx: Context, node_id: int = 0) -> dict[str, Any]:
        """A document's node `node_id` (0: the title, the whole document) with every node under it,
        in order: structure nodes are headings, content nodes paragraphs, list items, table rows."""

        def work() -> dict[str, Any]:
            access.caller(ctx).check([collection], "read")
            return subtree(public_document(service.document(collection, doc_id)), node_id)

        return access.answered("read_document", ctx, work)

    @mcp.tool()
    def trace(answer_id: str, ctx: Context) -> dict[str, Any]:
        """A stored answer audited: its cited nodes, their text then and now, the versions behind it."""

        def work() -> dict[str, Any]:
            who = access.caller(ctx)
            return public_trace(service.trace(answer_id, may_read=lambda c: who.allows(c, "read")))

        return access.answered("trace", ctx, work)


def _add_asking_tools(mcp: MCPServer, service: QueryService, access: McpAccess, asks: Gate | None) -> None:
    @mcp.tool()
    def ask(
        question: str,
        ctx: Context,
        collection: str | None = None,
        strategy: str = "rdr2",
        by_name: bool = False,
        all_documents: bool = False,
    ) -> dict[str, Any]:
        """Answer `question` from `collection` (needs the ask scope); the answer is stored and comes
        with numbered citations (doc_id, node_id, heading path, text) and its answer_id for trace.
        The question is searched in the documents whose cards (organisation, period, form) it names,
        else in all; `by_name`: where no card matches, in those its file names name; `all_documents`:
        in every document."""

        def work() -> dict[str, Any]:
            who = access.caller(ctx)
            target = ask_target(who, service.collections, question, collection)
            slot = asks.enter() if asks is not None else None
            try:
                result = service.ask(
                    question,
                    collection=target,
                    strategy=strategy,
                    options=AskOptions(by_name=by_name or None, all_documents=all_documents or None),
                    source="service",
                    asked_by=who.name,
                )
            finally:
                if slot is not None:
                    slot.leave()
            asked = result.to_dict()
            row = asked["answer"]
            return {
                "answer": row["answer"],
                "answer_id": row["answer_id"],
                "collection": row["collection"],
                "strategy": row["strategy"],
                "citations": asked["citations"],
                "form_note": asked["form_note"],  # the answer's form; why, when nothing was found
                "notes": asked["notes"],
            }

        return access.answered("ask", ctx, work)


def _scope(who: Caller, collection: str) -> str:
    if who.grant is None:
        return "admin"
    return who.grant.scope_in(collection) or ""


def run_stdio(token: str | None) -> None:
    """`rag mcp`: the tools over stdin/stdout for a local agent (the token: RAG_SERVICE_TOKEN)."""
    mcp = build_mcp(QueryService(), McpAccess(TokenBook(tokens_required=False), None, token, OVER_STDIO))
    mcp.run("stdio")
