"""The `rag` command line: run the graph, look at trees, search, ask, trace and list answers, and
serve all of it over HTTP (`rag serve`). Only the options live here; what the commands do is in
rag_assets/commands (runs, output, errors) and rag_assets/serving (queries, the service).

`rag --help`, `--version`, `trace`, `tree`, `answers` and a BM25 `search` import neither torch
nor a model; with RAG_SERVICE_URL set, `search`, `ask`, `trace` and `answers` ask the warm service.

One error path for every command: a user mistake or an unavailable backend prints ONE line on
stderr (`error: ...`) and exits with a documented code; `rag --debug ...` (or RAG_DEBUG=1) also
prints the traceback. Exit codes:

  0  success
  1  a run or a check failed (one line per cause: failed steps and checks, resources that
     failed to start, a run that never started)
  2  a usage or configuration mistake (bad option, collections file, a run config value out
     of its bounds, missing path, unknown collection, empty question, bad DAGSTER_HOME or data
     dir, empty catalogue)
  3  `rag trace`: a cited source changed since the answer was produced
  4  a backend is unavailable (LLM endpoint or service unreachable, catalogue busy, overloaded)
  70 an internal error (a bug: please report it with the `--debug` traceback)
  130 interrupted (Ctrl-C)
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from rag_assets.commands.errors import (
    EXIT_CODES_HELP,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_SOURCE_CHANGED,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
    OneLineCommand,
    OneLineGroup,
    checked_data_dir,
    classify,
    console,
    errors,
    fail,
    one_error_path,
    say_waiting,
    state,
)
from rag_assets.commands.registry import register_commands
from rag_assets.core.settings import debug_enabled, service_url

if TYPE_CHECKING:
    from rag_assets.core.answering.policy.options import AskOptions

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_UNAVAILABLE", "EXIT_USAGE", "app", "classify"]

AUTO = "auto"  # as rag_assets.core.corpus.sources.AUTO (not imported: keeps `rag --help` light)
ASK_STRATEGIES_HELP = (
    "rdr2 (default) | rag-hybrid | rag-dense | no-retrieval | contregen | disco | disco-no-structure | "
    "rdr2-encoder | rdr2-llm | rdr2-similarity | rdr2-base | rdr2-hit-nodes | rdr2-free | rdr2-no-expand | "
    "rdr2-no-refuse | rdr2-no-structure | rag-hybrid-rerank | rdr2-rerank; the names of the evaluation report"
)


class _Typer(typer.Typer):
    def command(self, *args: Any, **kwargs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        kwargs.setdefault("cls", OneLineCommand)  # option errors: one line, not click's usage panel
        register = super().command(*args, **kwargs)

        def decorator(fn: Callable[..., Any]) -> Callable[..., Any]:
            register(one_error_path(fn))
            return fn

        return decorator


app = _Typer(
    cls=OneLineGroup,
    no_args_is_help=True,
    add_completion=False,
    help="Structure-aware RAG (RDR2) on Dagster.",
    epilog=EXIT_CODES_HELP,
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("rag-assets")
        except PackageNotFoundError:
            number = "unknown (not installed)"
        sys.stdout.write(f"rag {number}\n")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _options(
    debug: bool = typer.Option(False, "--debug", help="On an error, also print the full traceback."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    state["debug"] = debug or debug_enabled()  # per invocation, not sticky


def _service() -> Any:
    """The running service's client when RAG_SERVICE_URL is set, else None (work in process)."""
    from rag_assets.serving.client import ServiceClient

    url = service_url()
    return ServiceClient(url) if url else None


def _local() -> Any:
    from rag_assets.serving.query import QueryService

    checked_data_dir()
    return QueryService(on_wait=say_waiting)


@app.command()
def tree(
    path: Path = typer.Argument(..., help="A document file (Markdown, HTML, text, page JSONL, manual JSON)."),
    format: str = typer.Option(AUTO, "--format", "-f", help="markdown | html | text | jsonl | manual_json | auto"),
    as_json: bool = typer.Option(False, "--json", help="Print the nodes as JSON instead of the outline."),
) -> None:
    """Print a file's Document Structure Tree as the router sees it (`id: text`, indented by depth)."""
    from rag_assets.commands.output import tree_outline

    if not path.exists():
        raise fail(f"{path}: no such file")
    if not tree_outline(path, format, as_json):
        raise typer.Exit(EXIT_FAILED)


_CONFIG_OPTION_HELP = (
    "A Dagster run-config YAML (`ops: {answers: {config: ...}}`) applied to every collection's run; "
    "default: $RAG_RUN_CONFIG if set."
)


@app.command()
def run(
    collection: list[str] = typer.Option(None, "--collection", "-c", help="Only these collections (default: all)."),
    config: Path = typer.Option(None, "--config", help=_CONFIG_OPTION_HELP),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also print Dagster's own (DEBUG) events."),
) -> None:
    """Materialize the whole asset graph (with its checks) for every collection, then summarise."""
    from rag_assets.commands.runs import materialize
    from rag_assets.commands.summary import print_document_changes, print_evaluation, print_summary

    names = materialize("main_job", collection, config, verbose=verbose)
    print_summary(console, names)
    print_document_changes(console, names)
    print_evaluation(console, names)


@app.command()
def index(
    collection: list[str] = typer.Option(None, "--collection", "-c", help="Only these collections (default: all)."),
    config: Path = typer.Option(None, "--config", help=_CONFIG_OPTION_HELP),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also print Dagster's own (DEBUG) events."),
) -> None:
    """Index only: sources -> trees -> passages -> passage index (`passage_index_job`), with checks;
    no questions, routing data, training or evaluation. Ctrl-C or SIGTERM stops it within seconds
    (exit 130); the index published before stays the one readers use."""
    from rag_assets.commands.runs import materialize
    from rag_assets.commands.summary import print_document_changes, print_summary

    names = materialize("passage_index_job", collection, config, verbose=verbose)
    print_summary(console, names)
    print_document_changes(console, names)


@app.command()
def recover() -> None:
    """Mark runs whose process is gone (killed, OOM) as failed, so queued runs can start."""
    from rag_assets.commands.runs import recover as recover_runs

    recover_runs()


@app.command()
def search(
    query: str = typer.Argument(..., help="What to look for."),
    collection: list[str] = typer.Option(
        None, "--collection", "-c", help="Only these collections; `all`: the ones the namespace router picks."
    ),
    mode: str = typer.Option("hybrid", "--mode", "-m", help="dense | bm25 | hybrid (bm25 loads no model)"),
    k: int = typer.Option(5, "-k", min=1, max=100, help="How many passages."),
    as_json: bool = typer.Option(False, "--json", help="Print the hits as JSON."),
    reranker: str = typer.Option(
        None,
        "--reranker",
        help="Rerank with `latest` (the newest trained passage_reranker) or a local cross-encoder model folder.",
    ),
    document: str = typer.Option(None, "--document", help="Only this document (doc id, file name or title)."),
) -> None:
    """Search the materialized passage index (run `rag run` first)."""
    from rag_assets.commands.output import note, print_hits, print_json

    if mode not in ("dense", "bm25", "hybrid"):
        raise fail(f"--mode must be dense, bm25 or hybrid, not {mode!r}")
    if not query.strip():
        raise fail("the query is empty: search for something")
    service = _service()
    if service is not None:
        found = service.get(
            "/search", q=query, collection=collection or None, mode=mode, k=k, reranker=reranker, document=document
        )
        hits = found["hits"]
    else:
        from rag_assets.serving.query import hit_dict

        if mode == "bm25" and not reranker:
            from rag_assets.core.index.full_text import load_lance

            load_lance(without_pandas=True)  # this process ends after printing: it needs no DataFrame
        results, pairs = _local().search(
            query, collections=collection or None, mode=mode, k=k, reranker=reranker, document=document
        )
        hits = [hit_dict(h) for h in results]
        found = {"published": [p.to_dict() for p in pairs]}
    if len(found["published"]) == 1:
        note(found["published"][0]["note"])
    if as_json:
        print_json(hits)
    else:
        print_hits(hits)


ASK_COLLECTION_HELP = "The collection (default: the only one); `all`: the collections the namespace router picks."
BY_NAME_HELP = "Where no document card matches, search the documents the question's file names name."


@app.command()
def ask(
    question: str = typer.Argument(..., help="The question."),
    strategy: str = typer.Option("rdr2", "--strategy", "-s", help=ASK_STRATEGIES_HELP),
    k: int = typer.Option(
        None,
        "-k",
        min=1,
        help="Override: rdr2 documents routed (evaluated: 2); rag passages read (5); contregen passages per sub-query.",
    ),
    iters: int = typer.Option(None, "--iters", min=0, help="Override: rdr2 expand rounds (evaluated: 1)."),
    collection: str = typer.Option(None, "--collection", "-c", help=ASK_COLLECTION_HELP),
    mode: str = typer.Option(None, "--mode", "-m", help="Override the retrieval: dense | bm25 | hybrid."),
    router_kind: str = typer.Option(
        None, "--router", help="Override rdr2's router: encoder (evaluated) | llm | similarity | hit-nodes"
    ),
    style: str = typer.Option(
        None, "--style", help="Answer style: short | list | long (default: as evaluated for the collection)."
    ),
    depth: int = typer.Option(None, "--depth", min=0, max=3, help="contregen: sub-query tree depth."),
    branching: int = typer.Option(None, "--branching", min=1, max=4, help="contregen: sub-queries per node."),
    form: str = typer.Option(None, "--form", help="generated | extractive (default: the collection's better one)."),
    as_json: bool = typer.Option(False, "--json", help="Print the stored answer row as JSON."),
    document: str = typer.Option(None, "--document", help="Search and route only this document (id, file or title)."),
    by_name: bool = typer.Option(False, "--by-name", help=BY_NAME_HELP),
    all_documents: bool = typer.Option(False, "--all-documents", help="Search every document, whatever its card."),
) -> None:
    """Answer a question from the materialized index with the evaluated configuration of a
    strategy (the options override it) and store it with its lineage in the `answers` table;
    `rag trace ANSWER_ID` audits it later. The catalogue is open only for short reads and the
    final write, so runs are not locked out while the models think."""
    from rag_assets.commands.ask_checks import check_ask
    from rag_assets.commands.output import print_answer, print_json
    from rag_assets.core.answering.policy.options import AskOptions

    if not question.strip():
        raise fail("the question is empty: ask something")
    options = AskOptions(
        top_k=k,
        expand_iterations=iters,
        retrieval_mode=mode,
        router=router_kind,
        style=style,
        tree_depth=depth,
        tree_branching=branching,
        document=document,
        by_name=by_name or None,
        all_documents=all_documents or None,
        form=form,
    )
    check_ask(strategy, options, collection)  # before any model loads

    streamed: list[str] = []

    def stream(text: str) -> None:
        if not as_json:
            streamed.append(text)
            console.print(text, end="", markup=False, highlight=False, style="bold", soft_wrap=True)

    result = _answer(question, collection, strategy, options, stream)
    print_json(result["answer"]) if as_json else print_answer(result, streamed="".join(streamed))


def _answer(
    question: str, collection: str | None, strategy: str, options: AskOptions, stream: Callable[[str], None]
) -> dict[str, Any]:
    """The stored answer, asked of the running service (RAG_SERVICE_URL) or answered here, its
    text streamed and its notes printed as they come."""
    from rag_assets.commands.output import note

    service = _service()
    if service is not None:
        from dataclasses import asdict

        from rag_assets.serving.client import ask_streaming

        body = {"question": question, "collection": collection, "strategy": strategy, **asdict(options)}
        result = ask_streaming(service, body, stream)
        for line in result["notes"]:
            note(line)
        return result
    return (
        _local()
        .ask(question, collection=collection, strategy=strategy, options=options, on_text=stream, on_note=note)
        .to_dict()
    )


@app.command()
def trace(
    answer_id: str = typer.Argument(..., help="An answer id printed by `rag ask` or listed by `rag answers`."),
    as_json: bool = typer.Option(False, "--json", help="Print the trace as JSON."),
) -> None:
    """Audit an answer: cited nodes -> documents -> the text as it was cited beside the text now ->
    versions, each source's state in words (unchanged, changed and re-indexed, changed on disk
    and not re-indexed, deleted). Exit code 3 when a source changed since the answer was produced."""
    from rag_assets.commands.output import print_json, print_trace
    from rag_assets.serving.audit import source_changed

    service = _service()
    result = service.get(f"/trace/{answer_id}") if service is not None else _local().trace(answer_id)
    print_json(result) if as_json else print_trace(result)
    changed = source_changed(result)
    if changed:
        states = {s["doc_id"]: s.get("state", "changed") for s in result["sources"]}
        listed = ", ".join(f"{doc} ({states.get(doc, 'changed')})" for doc in changed)
        errors.print(
            f"[bold red]SOURCE CHANGED since this answer was produced: {listed}; re-ask to refresh it[/bold red]",
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_SOURCE_CHANGED)


@app.command()
def answers(
    collection: str = typer.Option(None, "--collection", "-c", help="Only this collection."),
    source: str = typer.Option(None, "--source", help="Only answers from: cli | service | evaluation."),
    strategy: str = typer.Option(None, "--strategy", "-s", help="Only this strategy (e.g. rdr2, rag-hybrid)."),
    contains: str = typer.Option(None, "--contains", help="Only questions containing these words."),
    limit: int = typer.Option(20, "--limit", "-n", min=1, max=1000, help="How many (newest first)."),
    as_json: bool = typer.Option(False, "--json", help="Print the list as JSON."),
) -> None:
    """List stored answers, newest first, with the ids `rag trace` audits."""
    from rag_assets.commands.output import print_answers, print_json

    filters = {"collection": collection, "source": source, "strategy": strategy, "contains": contains, "limit": limit}
    service = _service()
    listing = service.get("/answers", **filters) if service is not None else _local().answers(**filters)
    if as_json:
        print_json(listing["answers"])
    else:
        print_answers(listing)


register_commands(app)  # results, documents, backup, restore (rag_assets/commands/registry.py)


@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (0.0.0.0 exposes it)."),
    port: int = typer.Option(8765, "--port", "-p", min=1, max=65535, help="Port."),
    max_asks: int = typer.Option(
        8, "--max-asks", min=1, help="Questions in flight at most; more are refused with 503 (not queued)."
    ),
    preload: bool = typer.Option(True, "--preload/--no-preload", help="Load the models before serving."),
    allow_host: list[str] = typer.Option(
        [], "--allow-host", help="Also answer requests for this Host name (repeatable; loopback names always)."
    ),
    rate_limit: str = typer.Option("600/minute", "--rate-limit", help="Requests per API token (N/second|minute|hour)."),
    threads: int = typer.Option(
        1, "--threads", min=1, help="Threads per model call (more: faster only on idle cores)."
    ),
) -> None:
    """Serve search, ask (streamed), trace, answers and the audit web page over HTTP, with the
    models loaded once. Point the CLI at it with RAG_SERVICE_URL=http://HOST:PORT. Any address but
    loopback needs API tokens (`rag token create`)."""
    from rag_assets.events.reconcile import answers_reported
    from rag_assets.serving.startup import run_service

    checked_data_dir()
    with answers_reported():  # every stored answer a Dagster event, whatever became of its queue
        run_service(
            host=host, port=port, max_asks=max_asks, preload=preload, hosts=allow_host, rate=rate_limit, threads=threads
        )


@app.command("mcp")
def mcp_stdio() -> None:
    """Serve the knowledge base to an agent as MCP tools over stdin/stdout (search, ask, trace,
    list_collections, read_document); with tokens in the catalogue it needs RAG_SERVICE_TOKEN."""
    from rag_assets.commands.mcp_stdio import serve_stdio

    serve_stdio()


token_app = _Typer(no_args_is_help=True, help="API tokens of `rag serve`: one scope per collection, stored hashed.")
app.add_typer(token_app, name="token")


@token_app.command("create")
def token_create(
    name: str = typer.Argument(help="Who holds it (letters, digits, _ . @ -)."),
    collection: list[str] = typer.Option(..., "--collection", "-c", help="A collection it may use ('*': every one)."),
    scope: str = typer.Option("read", "--scope", help="read (search, documents) | ask | admin."),
) -> None:
    """Create a token and print it once (only its hash is kept)."""
    from rag_assets.commands.tokens import create

    create(name, collection, scope)


@token_app.command("revoke")
def token_revoke(name: str = typer.Argument(help="The token's name.")) -> None:
    """Revoke a token: the service refuses it from its next request on."""
    from rag_assets.commands.tokens import revoke

    revoke(name)


@token_app.command("list")
def token_list(all_: bool = typer.Option(False, "--all", help="Also the revoked ones.")) -> None:
    """The tokens with their scopes (never the tokens themselves)."""
    from rag_assets.commands.tokens import show_list

    show_list(all_)


def main() -> None:  # pragma: no cover - console entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    app()
