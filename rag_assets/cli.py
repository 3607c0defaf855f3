"""The `rag` command line: run the graph, look at trees, search, ask and trace answers.

One error path for every command: a user mistake or an unavailable backend prints ONE line on
stderr (`error: ...`) and exits with a documented code; `rag --debug ...` (or RAG_DEBUG=1) also
prints the traceback. Exit codes:

  0  success
  1  a run or a check failed (the line names the failed steps and checks)
  2  a usage or configuration mistake (bad option, collections file, missing path, unknown
     collection, empty catalogue)
  3  `rag trace`: a cited source changed since the answer was produced
  4  a backend is unavailable (LLM endpoint unreachable, catalogue busy past the lock timeout)
  70 an internal error (a bug: please report it with the `--debug` traceback)
  130 interrupted (Ctrl-C)
"""

from __future__ import annotations

import functools
import json
import os
import sys
import traceback
import urllib.error
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import typer
from rich.console import Console
from rich.markup import escape

from rag_assets.core.corpus.sources import AUTO, CollectionSpec, Rejection, iter_collection
from rag_assets.core.corpus.tree import render_tree
from rag_assets.core.corpus.tree_building import document_tree
from rag_assets.core.errors import BackendUnavailable, ConfigError
from rag_assets.settings import PROJECT_ROOT

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_SOURCE_CHANGED, EXIT_UNAVAILABLE = 0, 1, 2, 3, 4
EXIT_INTERNAL, EXIT_INTERRUPTED = 70, 130
EXIT_CODES_HELP = (
    "Exit codes: 0 ok; 1 a run or check failed; 2 usage or configuration mistake; 3 (trace) a cited "
    "source changed; 4 backend unavailable (LLM endpoint, busy catalogue); 70 internal error; 130 "
    "interrupted. --debug shows the traceback of an error."
)

console = Console()
errors = Console(stderr=True)
_state = {"debug": bool(os.environ.get("RAG_DEBUG"))}


def classify(err: BaseException) -> tuple[int, str]:
    """(exit code, one-line message) for an error raised by a command."""
    from rag_assets.core.engines.openai_engine import OpenAIEngineError

    if isinstance(err, KeyboardInterrupt):
        return EXIT_INTERRUPTED, "interrupted"
    if isinstance(err, (BackendUnavailable, OpenAIEngineError, urllib.error.URLError, ConnectionError, TimeoutError)):
        return EXIT_UNAVAILABLE, str(err)
    from rag_assets.core.store.connections import is_lock_error, lock_holder

    if is_lock_error(err):
        return EXIT_UNAVAILABLE, f"the catalogue is in use by {lock_holder(err)}; try again when it finishes"
    if isinstance(err, (ConfigError, ValueError, FileNotFoundError, NotADirectoryError, PermissionError)):
        return EXIT_USAGE, str(err)
    if isinstance(err, KeyError):
        return EXIT_USAGE, str(err.args[0]) if err.args else "unknown key"
    import dagster as dg

    if isinstance(err, dg.DagsterInvalidConfigError):
        return EXIT_USAGE, " ".join(str(err).split())
    return EXIT_INTERNAL, f"internal error: {type(err).__name__}: {err} (rerun with --debug for the traceback)"


def _one_error_path(command: Callable[..., Any]) -> Callable[..., Any]:
    """Every command's errors become one line and an exit code (the traceback only with --debug)."""

    @functools.wraps(command)
    def run_command(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except (typer.Exit, click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except (Exception, KeyboardInterrupt) as err:
            code, message = classify(err)
            if _state["debug"]:
                errors.print(escape("".join(traceback.format_exception(err))), highlight=False)
            first = " ".join(message.split()) or type(err).__name__
            errors.print(f"[red]error:[/red] {escape(first)}", highlight=False, soft_wrap=True)
            raise typer.Exit(code) from None

    return run_command


class _Typer(typer.Typer):
    def command(self, *args: Any, **kwargs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        register = super().command(*args, **kwargs)

        def decorator(fn: Callable[..., Any]) -> Callable[..., Any]:
            register(_one_error_path(fn))
            return fn

        return decorator


app = _Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Structure-aware RAG (RDR2) on Dagster.",
    epilog=EXIT_CODES_HELP,
)


@app.callback()
def _options(
    debug: bool = typer.Option(False, "--debug", help="On an error, also print the full traceback."),
) -> None:
    _state["debug"] = debug or bool(os.environ.get("RAG_DEBUG"))  # per invocation, not sticky


def _ensure_dagster_home() -> None:
    os.environ.setdefault("DAGSTER_HOME", str(PROJECT_ROOT / "dagster_home"))
    Path(os.environ["DAGSTER_HOME"]).mkdir(parents=True, exist_ok=True)


def _say_waiting(message: str) -> None:
    errors.print(f"[yellow]waiting:[/yellow] {escape(message)}", highlight=False, soft_wrap=True)


def _quiet_model_loading() -> None:
    """No weight-loading progress bars on stderr: it is the channel for errors and waits."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()


def _catalogue_path() -> Path:
    from rag_assets.settings import data_dir

    return data_dir() / "catalogue.duckdb"


def _read_catalogue():
    """A short read-only catalogue connection (waits, visibly and bounded, for a writer)."""
    from rag_assets.core.store.connections import catalogue_connection

    return catalogue_connection(_catalogue_path(), read_only=True, on_wait=_say_waiting)


def _write_catalogue():
    """A read-write catalogue connection, held only for one write."""
    from rag_assets.core.store.connections import catalogue_connection

    path = _catalogue_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    return catalogue_connection(path, read_only=False, on_wait=_say_waiting)


@app.command()
def tree(
    path: Path = typer.Argument(..., help="A document file (Markdown, HTML, text, page JSONL, manual JSON)."),
    format: str = typer.Option(AUTO, "--format", "-f", help="markdown | html | text | jsonl | manual_json | auto"),
    as_json: bool = typer.Option(False, "--json", help="Print the nodes as JSON instead of the outline."),
) -> None:
    """Print a file's Document Structure Tree as the router sees it (`id: text`, indented by depth)."""
    if not path.exists():
        errors.print(f"[red]error:[/red] {path}: no such file")
        raise typer.Exit(2)
    spec = CollectionSpec(name="cli", path=str(path), format=format)
    failed = False
    out: list[dict] = []
    for item in iter_collection(spec):
        if isinstance(item, Rejection):
            errors.print(f"[red]rejected[/red] {item.uri}: {item.reason}")
            failed = True
            continue
        try:
            dst = document_tree(item)
        except ValueError as err:
            errors.print(f"[red]rejected[/red] {item.uri}: cannot parse as {item.format}: {err}")
            failed = True
            continue
        if as_json:
            out.append(
                {
                    "doc_id": item.doc_id,
                    "title": dst.title,
                    "format": item.format,
                    "nodes": [
                        {
                            "node_id": n.node_id,
                            "parent_id": n.parent_id,
                            "kind": n.kind,
                            "depth": n.depth,
                            "text": n.text,
                        }
                        for n in dst.nodes
                    ],
                }
            )
        else:
            sys.stdout.write(render_tree(dst.nodes) + "\n")
    if as_json:
        sys.stdout.write(json.dumps(out[0] if len(out) == 1 else out, ensure_ascii=False, indent=1) + "\n")
    if failed:
        raise typer.Exit(1)


def _run_config(config: Path | None, job) -> dict:
    """The run config YAML (`--config`, else $RAG_RUN_CONFIG), checked against the job."""
    import dagster as dg
    import yaml

    config = config or (Path(os.environ["RAG_RUN_CONFIG"]) if os.environ.get("RAG_RUN_CONFIG") else None)
    if config is None:
        return {}
    try:
        run_config = yaml.safe_load(config.read_text()) or {}
    except (OSError, yaml.YAMLError) as err:
        raise ConfigError(f"run config {config}: {' '.join(str(err).split())}") from None
    if not isinstance(run_config, dict):
        raise ConfigError(f"run config {config}: expected a mapping such as `ops: ...`")
    try:
        dg.validate_run_config(job, run_config)  # fail before the first collection runs, not midway
    except dg.DagsterInvalidConfigError as err:
        raise ConfigError(f"run config {config} does not fit the job: {' '.join(str(err).split())}") from None
    console.print(f"run config: [cyan]{config}[/cyan]", soft_wrap=True)
    return run_config


def _failure_lines(result) -> list[str]:
    """One line per failed step and per failed check of a finished run."""
    lines: list[str] = []
    for event in result.all_events:
        if event.is_step_failure:
            error = event.step_failure_data.error
            message = (error.message if error else "").strip().splitlines()
            lines.append(f"step {event.step_key} failed: {message[0] if message else 'no message'}")
        elif event.is_asset_check_evaluation:
            evaluation = event.asset_check_evaluation_data
            if not evaluation.passed:
                lines.append(f"check {evaluation.asset_key.to_user_string()}.{evaluation.check_name} failed")
    return lines


def _materialize(
    job_name: str, collection: list[str] | None, config: Path | None, *, verbose: bool = False
) -> list[str]:
    """Run `job_name` for each collection (all by default) in this process, after failing runs
    whose process is gone; returns the collections run. A failed run exits with code 1. One
    progress line per asset and long step; Dagster's own events only with `verbose` (the run's
    event log keeps them all)."""
    _ensure_dagster_home()
    import dagster as dg

    from rag_assets.definitions import defs
    from rag_assets.partitions import register_collections
    from rag_assets.progress import console_log_level, run_progress
    from rag_assets.run_health import process_tags, recover_dead_runs
    from rag_assets.settings import collections_file, load_collections

    configured = [spec.name for spec in load_collections()]  # validated: one line per mistake
    names = collection or configured
    unknown = [name for name in names if name not in configured]
    if unknown:
        raise ConfigError(
            f"collection(s) {', '.join(unknown)} are not in {collections_file()} (it has {', '.join(configured)})"
        )
    job = defs.resolve_job_def(job_name)
    run_config = console_log_level(_run_config(config, job), verbose)
    if not verbose:
        _quiet_model_loading()
    with dg.DagsterInstance.get() as instance:
        _report_recovered(recover_dead_runs(instance))
        register_collections(instance, names)
        failed: list[str] = []
        for name in names:  # one collection's failure does not stop the others
            console.print(f"[bold]materializing[/bold] collection [cyan]{name}[/cyan] ({job_name})")
            with run_progress(instance, _say_progress) as progress_tags:
                result = job.execute_in_process(
                    partition_key=name,
                    instance=instance,
                    raise_on_error=False,
                    run_config=run_config,
                    # the process tags let a later command tell this run died if it is killed
                    tags={**process_tags(), **progress_tags},
                )
            if result.success:
                console.print(f"  run {result.run_id} succeeded (its full log: `make dev`, Runs)", highlight=False)
                continue
            failed.append(name)
            for line in _failure_lines(result):
                errors.print(f"  {escape(line)}", highlight=False, soft_wrap=True)
            errors.print(f"  run {result.run_id} for {name} [red]failed[/red]; see `make dev` for its logs")
    if failed:
        errors.print(f"[red]error:[/red] {len(failed)} of {len(names)} collection run(s) failed: {', '.join(failed)}")
        raise typer.Exit(EXIT_FAILED)
    return names


def _say_progress(line: str) -> None:
    console.print(line, markup=False, highlight=False, soft_wrap=True)


def _report_recovered(recovered) -> None:
    for run in recovered:
        console.print(
            f"[yellow]recovered:[/yellow] run {run.run_id} ({run.job_name}"
            f"{', ' + run.partition if run.partition else ''}) was still marked in progress, but "
            f"{run.reason}: marked it failed",
            highlight=False,
            soft_wrap=True,
        )


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
    from rag_assets.summary import print_evaluation, print_summary

    names = _materialize("main_job", collection, config, verbose=verbose)
    print_summary(console, names)
    print_evaluation(console, names)


@app.command()
def index(
    collection: list[str] = typer.Option(None, "--collection", "-c", help="Only these collections (default: all)."),
    config: Path = typer.Option(None, "--config", help=_CONFIG_OPTION_HELP),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also print Dagster's own (DEBUG) events."),
) -> None:
    """Index only: sources -> trees -> passages -> passage index (the `reindex` job), with checks;
    no routing data, training or evaluation."""
    from rag_assets.summary import print_summary

    names = _materialize("reindex", collection, config, verbose=verbose)
    print_summary(console, names)


@app.command()
def recover() -> None:
    """Mark runs whose process is gone (killed, OOM) as failed, so queued runs can start."""
    _ensure_dagster_home()
    import dagster as dg

    from rag_assets.run_health import IN_PROGRESS, recover_dead_runs

    with dg.DagsterInstance.get() as instance:
        recovered = recover_dead_runs(instance)
        _report_recovered(recovered)
        left = len(instance.get_run_ids(filters=dg.RunsFilter(statuses=list(IN_PROGRESS))))
    console.print(f"{len(recovered)} dead run(s) marked failed; {left} run(s) still in progress")


@app.command()
def search(
    query: str = typer.Argument(..., help="What to look for."),
    collection: list[str] = typer.Option(
        None, "--collection", "-c", help="Only these collections; `all`: the ones the namespace router picks."
    ),
    mode: str = typer.Option("hybrid", "--mode", "-m", help="dense | bm25 | hybrid"),
    k: int = typer.Option(5, "-k", min=1, help="How many passages."),
    as_json: bool = typer.Option(False, "--json", help="Print the hits as JSON."),
    reranker: str = typer.Option(
        None,
        "--reranker",
        help="Rerank with `latest` (the newest trained passage_reranker) or a local cross-encoder model folder.",
    ),
) -> None:
    """Search the materialized passage index (run `rag run` first)."""
    from rag_assets.core.index.retrieval import search as run_search
    from resources.project import project_resources

    if mode not in ("dense", "bm25", "hybrid"):
        errors.print(f"[red]error:[/red] --mode must be dense, bm25 or hybrid, not {mode!r}")
        raise typer.Exit(2)
    _quiet_model_loading()
    resources = project_resources(progress=False)
    embedder = resources["embedder"].get()
    index = resources["vectors"].index(embedder)
    try:
        if collection == ["all"]:
            collection = _routed_collections(query, embedder)
        rerank = _reranker(reranker, embedder.device) if reranker else None
        hits = run_search(index, embedder, query, mode=mode, k=k, collections=collection or None, reranker=rerank)
    except (FileNotFoundError, ValueError) as err:
        errors.print(f"[red]error:[/red] {err}")
        raise typer.Exit(1) from None
    if as_json:
        sys.stdout.write(
            json.dumps(
                [
                    {
                        "rank": h.rank,
                        "score": h.score,
                        "passage_id": h.passage_id,
                        "doc_id": h.doc_id,
                        "collection": h.collection,
                        "node_ids": list(h.node_ids),
                        "heading_path": list(h.heading_path),
                        "text": h.text,
                    }
                    for h in hits
                ],
                ensure_ascii=False,
                indent=1,
            )
            + "\n"
        )
        return
    for hit in hits:
        console.print(
            f"[bold]{hit.rank}.[/bold] [dim]{hit.score:.4f}[/dim] [cyan]{hit.doc_id}[/cyan] "
            f"nodes {list(hit.node_ids)}\n   [green]{' > '.join(hit.heading_path)}[/green]\n   {hit.text[:300]}"
        )


def _routed_collections(query: str, embedder) -> list[str]:
    """The collections the newest published namespace router picks for `query`."""
    from rag_assets.core.index.namespace_routing import QueryNamespaces, latest_namespace_router, load_namespace_router
    from rag_assets.settings import data_dir

    folder = latest_namespace_router(data_dir() / "namespaces")
    if folder is None:
        raise ConfigError("--collection all is routed by the namespace router: materialize `namespace_router` first")
    routed = QueryNamespaces(load_namespace_router(folder), embedder).route([query])[0]
    errors.print(f"[dim]namespace router {folder.name}: searching {', '.join(routed)}[/dim]", highlight=False)
    return routed


def _reranker(which: str, device: str):
    """`latest`: the newest trained passage reranker; else a folder (a passage reranker, or any
    local sentence-transformers cross-encoder)."""
    from rag_assets.core.index.reranking import is_passage_reranker, latest_reranker, load_passage_reranker
    from rag_assets.core.index.retrieval import cross_encoder_reranker
    from rag_assets.settings import data_dir

    folder = latest_reranker(data_dir() / "rerankers") if which == "latest" else Path(which)
    if folder is None:
        raise ConfigError("--reranker latest: no passage reranker trained yet (materialize `passage_reranker`)")
    return (
        load_passage_reranker(folder, device=device) if is_passage_reranker(folder) else cross_encoder_reranker(folder)
    )


def _latest_adapter(con, collection: str, kind: str = "llm") -> tuple[str, Path] | None:
    """(id, folder) of the collection's newest published router of `kind` (encoder | llm), if any."""
    from rag_assets.core.store.router_registry import latest_router

    exists = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'router_adapters'"
    ).fetchone()[0]
    record = latest_router(con, collection, kind) if exists else None
    return (record.adapter_id, Path(record.path)) if record else None


def _answer_collection(con, collection: str | None) -> str:
    has_trees = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'document_nodes'"
    ).fetchone()[0]
    if not has_trees:
        raise ConfigError("the catalogue holds no document trees yet: run `rag run` (or `rag index`) first")
    names = [r[0] for r in con.execute("SELECT DISTINCT collection FROM document_nodes ORDER BY 1").fetchall()]
    if collection:
        if collection not in names:
            raise ValueError(f"collection {collection!r} has no trees in the catalogue (known: {names}); run `rag run`")
        return collection
    if len(names) != 1:
        raise ValueError(
            f"say which collection with --collection (the catalogue holds {names or 'none'}; "
            "run `rag run` first if empty)"
        )
    return names[0]


ASK_ROUTERS = ("encoder", "llm", "similarity", "hit-nodes")
DEFAULT_ROUTER_KIND = "encoder"  # as rag_assets.core.answering.strategies (not imported: keeps `rag --help` fast)


@app.command()
def ask(
    question: str = typer.Argument(..., help="The question."),
    strategy: str = typer.Option(
        "rdr2", "--strategy", "-s", help="rdr2 | rag | none | contregen | disco | disco-no-structure"
    ),
    k: int = typer.Option(
        5, "-k", min=1, help="rdr2: documents routed; rag, disco: passages read; contregen: passages per sub-query."
    ),
    iters: int = typer.Option(2, "--iters", min=0, help="rdr2: expand iterations after the first routing round."),
    collection: str = typer.Option(
        None,
        "--collection",
        "-c",
        help="The collection (default: the only one); `all`: the collections the namespace router picks.",
    ),
    mode: str = typer.Option("hybrid", "--mode", "-m", help="Retrieval: dense | bm25 | hybrid"),
    router_kind: str = typer.Option(
        DEFAULT_ROUTER_KIND, "--router", help="rdr2 router kind: encoder | llm | similarity | hit-nodes"
    ),
    adapter: str = typer.Option(
        "latest", "--adapter", help="Trained router (encoder or LLM kind): latest | none | a folder."
    ),
    style: str = typer.Option("short", "--style", help="Answer style: short | list | long"),
    depth: int = typer.Option(2, "--depth", min=0, max=3, help="contregen: sub-query tree depth."),
    branching: int = typer.Option(2, "--branching", min=1, max=4, help="contregen: sub-queries per node."),
    as_json: bool = typer.Option(False, "--json", help="Print the stored answer row as JSON."),
) -> None:
    """Answer a question from the materialized index (Retrieve, Document-Route, Read) and store it
    with its lineage in the `answers` table; `rag trace ANSWER_ID` audits it later. The catalogue
    is only open for the reads before and after the model work and for the final write, so
    `rag search`, `rag trace` and runs are not locked out while the models think."""
    from collections import ChainMap

    from rag_assets.core.answering.strategies import KINDS, StrategySpec, run_strategy
    from rag_assets.core.index.retrieval import search as run_search
    from rag_assets.core.lineage import CatalogueTrees, answer_versions, build_record, index_version, store_answers
    from rag_assets.core.routing.encoder_training import load_encoder_router
    from rag_assets.core.routing.folders import ROUTER_MARKERS, router_folder_kind
    from rag_assets.core.routing.scoring_router import HitNodesRouter, ScoringRouter
    from rag_assets.core.routing.teachers import SimilarityThresholds
    from rag_assets.core.store.connections import ShortReads
    from rag_assets.core.store.publication import index_pairing
    from rag_assets.core.text import first_words
    from resources.project import project_resources

    choices = (*(k for k in KINDS if k != "dota"), "disco-no-structure")  # dota runs in `answers`
    if strategy not in choices:
        raise ConfigError(f"--strategy must be one of {', '.join(choices)}, not {strategy!r}")
    kind = "disco" if strategy == "disco-no-structure" else strategy
    if router_kind not in ASK_ROUTERS:
        raise ConfigError(f"--router must be one of {', '.join(ASK_ROUTERS)}, not {router_kind!r}")
    if mode not in ("dense", "bm25", "hybrid"):
        raise ConfigError(f"--mode must be dense, bm25 or hybrid, not {mode!r}")
    routed: list[str] | None = None
    if collection == "all":  # the answer is stored under the best routed collection
        _quiet_model_loading()
        routed = _routed_collections(question, project_resources(progress=False)["embedder"].get())
        collection = routed[0]
    with _read_catalogue() as con:
        name = _answer_collection(con, collection)
        pairing = index_pairing(con, name)
        adapters: dict[str, Path] = {}
        adapter_name: str | None = None
        encoder_folder: Path | None = None
        trained = router_kind in ("encoder", "llm")
        if strategy == "rdr2" and trained and adapter != "none":
            found = (
                _latest_adapter(con, name, router_kind) if adapter == "latest" else (Path(adapter).name, Path(adapter))
            )
            marker = ROUTER_MARKERS[router_kind]
            if found is None:
                fallback = "the untrained encoder (similarity)" if router_kind == "encoder" else "the base model"
                errors.print(
                    f"[yellow]note:[/yellow] no trained {router_kind} router for {name!r}; routing with {fallback}"
                )
            elif router_folder_kind(found[1]) != router_kind:
                raise ConfigError(f"{found[1]} is not a trained {router_kind} router folder (no {marker})")
            elif router_kind == "encoder":
                adapter_name, encoder_folder = found
            else:
                adapter_name, adapters = found[0], {found[0]: found[1]}
    if router_kind == "encoder" and encoder_folder is None:
        router_kind = "similarity"
    label = {"none": "no-retrieval", "rag": f"rag-{mode}", "contregen": strategy, "disco": strategy}.get(
        strategy,
        {"encoder": "rdr2-encoder", "similarity": "rdr2-similarity", "hit-nodes": "rdr2-hit-nodes"}.get(
            router_kind, "rdr2-llm" if adapter_name else "rdr2-base"
        ),
    )
    spec = StrategySpec(
        name=label,
        kind=kind,
        retrieval_mode=mode,
        top_k=k,
        passages_per_query=max(20, 2 * k),
        expand_iterations=iters,
        adapter=adapter_name if router_kind == "llm" else None,
        answer_style=style,
        router=router_kind if strategy == "rdr2" else "llm",
        tree_depth=depth,
        tree_branching=branching,
        discourse=strategy != "disco-no-structure",
    )
    resources = project_resources(progress=False)  # the same resources as the code location's
    llm = resources["llm"]
    if strategy != "none" or llm.backend != "openai":  # models load in this process
        _quiet_model_loading()
    engine = llm.engine(adapters=adapters)  # first: a misconfigured backend fails fast
    embedder = index = None
    routers: dict = {}
    if strategy != "none":  # `none` reads no evidence: no embedder, no index
        embedder = resources["embedder"].get()
        # the LanceDB version published with the catalogue's passages, never a half-written one
        version = pairing.publication.version if pairing.publication else None
        index = resources["vectors"].index(embedder).pin(version)
        colour = "dim" if pairing.consistent else "yellow"
        errors.print(f"[{colour}]{escape(pairing.describe())}[/{colour}]", highlight=False, soft_wrap=True)
        routers["hit-nodes"] = HitNodesRouter()
        if encoder_folder is not None:
            routers["encoder"] = load_encoder_router(encoder_folder, device=embedder.device)
        routers["similarity"] = ScoringRouter(embedder, SimilarityThresholds(), kind="similarity", contextual=False)

    def retrieve(query: str, how: str, top: int):
        return run_search(index, embedder, query, mode=how, k=top, collections=routed or [name])

    # trees are read as the routing needs them, each read on its own short connection
    reads = ShortReads(_catalogue_path(), on_wait=_say_waiting)
    trees = ChainMap(*(CatalogueTrees(reads, c) for c in routed or [name]))
    outcome = run_strategy([question], spec, retrieve=retrieve, trees=trees, engine=engine, routers=routers)[0]
    with _read_catalogue() as con:
        versions = answer_versions(
            con,
            name,
            outcome,
            index=index_version(index, name) if strategy != "none" else None,
            adapter_id=adapter_name,
            router_model=(adapter_name if router_kind == "encoder" else engine.model_id)
            if strategy == "rdr2"
            else None,
            reader_model=engine.model_id,
            embedder=embedder.model_id if strategy != "none" else None,
        )
    if versions.get("index"):
        versions["index"]["consistent_with_catalogue"] = pairing.consistent
    record = build_record(outcome, spec, collection=name, source="cli", versions=versions)
    with _write_catalogue() as con:
        store_answers(con, [record])
    if as_json:
        sys.stdout.write(json.dumps(record.to_dict(), ensure_ascii=False, indent=1) + "\n")
        return
    console.print(f"[bold]{record.answer or '(no answer)'}[/bold]")
    if outcome.citations:
        console.print("[dim]citations:[/dim]")
        for i, cite in enumerate(outcome.citations, start=1):
            words = first_words(cite.text, 12, mark_cut=True)
            console.print(
                f"  [{i}] [green]{' > '.join(cite.heading_path)}[/green]: {words}"
                f" [dim]({cite.doc_id} node {cite.node_id})[/dim]",
                highlight=False,
            )
    elif strategy == "rdr2":
        console.print(
            "[yellow]the router selected nothing (every document refused): answered without evidence[/yellow]"
        )
    if outcome.structure:
        from rag_assets.core.lineage.structures import structure_lines

        console.print("\n".join(structure_lines(outcome.structure)), style="dim", highlight=False, markup=False)
    console.print(f"[dim]{label}: {outcome.seconds:.1f}s, {outcome.engine_calls} engine call(s)[/dim]")
    console.print(f"answer id: [cyan]{record.answer_id}[/cyan]  (audit: rag trace {record.answer_id})", highlight=False)


@app.command()
def trace(
    answer_id: str = typer.Argument(..., help="An answer id printed by `rag ask` (or from the answers table)."),
    as_json: bool = typer.Option(False, "--json", help="Print the trace as JSON."),
) -> None:
    """Audit an answer: cited nodes -> documents -> the exact source text at the recorded spans ->
    versions. The source file on disk is compared too (an edit not yet re-indexed shows).
    Exit code 3 when a source changed since the answer was produced."""
    from rag_assets.core.corpus.source_check import CHANGED, GONE, source_state
    from rag_assets.core.lineage import trace_answer

    with _read_catalogue() as con:
        result = trace_answer(con, answer_id)
    record = result.record
    recorded = dict(record.versions_dict.get("doc_hashes") or {})
    on_disk = {s.doc_id: source_state(s.uri, recorded.get(s.doc_id)) for s in result.sources}
    disk_changed = sorted(d for d, state in on_disk.items() if state in (CHANGED, GONE))
    if as_json:
        sys.stdout.write(
            json.dumps(
                {
                    "answer": record.to_dict(),
                    "changed": result.changed,
                    "changed_docs": list(result.changed_docs),
                    "changed_on_disk": disk_changed,
                    "sources": [
                        {
                            "doc_id": s.doc_id,
                            "node_id": s.node_id,
                            "heading_path": s.heading_path,
                            "span": [s.span_start, s.span_end],
                            "title": s.title,
                            "uri": s.uri,
                            "recorded_text": s.recorded_text,
                            "current_text": s.current_text,
                            "recorded_hash": s.recorded_hash,
                            "current_hash": s.current_hash,
                            "changed": s.changed,
                            "on_disk": on_disk.get(s.doc_id),
                        }
                        for s in result.sources
                    ],
                    "versions": result.versions,
                    "structure": result.structure,
                },
                ensure_ascii=False,
                indent=1,
            )
            + "\n"
        )
    else:
        console.print(
            f"[bold]answer {record.answer_id}[/bold] ({record.strategy}, {record.source}, "
            f"{record.created_at:%Y-%m-%d %H:%M:%S} UTC, collection {record.collection})",
            highlight=False,
        )
        console.print(f"  question: {record.question}\n  answer:   {record.answer}", highlight=False)
        if not result.sources:
            console.print("  [dim]no cited nodes (the reader saw no evidence)[/dim]")
        for i, source in enumerate(result.sources, start=1):
            state = "[red]CHANGED[/red]" if source.changed else "[green]unchanged[/green]"
            disk = on_disk.get(source.doc_id)
            if disk in (CHANGED, GONE):
                state += f", [red]{'CHANGED' if disk == CHANGED else 'GONE'} on disk[/red] (not re-indexed yet)"
            console.print(
                f"  [{i}] {source.doc_id} ({source.uri or 'document gone'}) node {source.node_id} "
                f"chars {source.span_start}-{source.span_end} {state}\n      "
                f"[green]{source.heading_path}[/green]\n      {source.current_text if source.current_text is not None else source.recorded_text}",
                highlight=False,
            )
        if result.structure:
            from rag_assets.core.lineage.structures import structure_lines

            console.print(
                "\n".join("  " + line for line in structure_lines(result.structure)), highlight=False, markup=False
            )
        index = result.versions.get("index") or {}
        console.print(
            f"  versions: index {index.get('table')} v{index.get('version')} tag {index.get('tag')}; "
            f"adapter {result.versions.get('adapter_id') or 'none (base model)'}; "
            f"router {result.versions.get('router_model')}; reader {result.versions.get('reader_model')}; "
            f"embedder {result.versions.get('embedder')}",
            highlight=False,
        )
    if result.changed or disk_changed:
        docs = sorted(set(result.changed_docs) | {s.doc_id for s in result.sources if s.changed} | set(disk_changed))
        errors.print(
            f"[bold red]SOURCE CHANGED since this answer was produced: {', '.join(docs)} "
            "(content hash or text at the cited span differs); re-ask to refresh it[/bold red]"
        )
        raise typer.Exit(EXIT_SOURCE_CHANGED)


def main() -> None:  # pragma: no cover - console entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    app()
