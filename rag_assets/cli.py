"""The `rag` command line: run the graph, look at trees, search, ask and trace answers."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import typer
from rich.console import Console

from rag_assets.core.sources import AUTO, CollectionSpec, Rejection, iter_collection
from rag_assets.core.structure import document_tree
from rag_assets.core.tree import render_tree
from rag_assets.settings import PROJECT_ROOT

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Structure-aware RAG (RDR2) on Dagster.")
console = Console()
errors = Console(stderr=True)


def _ensure_dagster_home() -> None:
    os.environ.setdefault("DAGSTER_HOME", str(PROJECT_ROOT / "dagster_home"))
    Path(os.environ["DAGSTER_HOME"]).mkdir(parents=True, exist_ok=True)


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


@app.command()
def run(
    collection: list[str] = typer.Option(None, "--collection", "-c", help="Only these collections (default: all)."),
    config: Path = typer.Option(
        None,
        "--config",
        help="A Dagster run-config YAML (`ops: {answers: {config: ...}}`) "
        "applied to every collection's run; default: $RAG_RUN_CONFIG if set.",
    ),
) -> None:
    """Materialize the whole asset graph (with its checks) for every collection, then summarise."""
    _ensure_dagster_home()
    import dagster as dg
    import yaml

    from rag_assets.definitions import defs
    from rag_assets.partitions import register_collections
    from rag_assets.settings import collections_file, load_collections
    from rag_assets.summary import print_evaluation, print_summary

    configured = [spec.name for spec in load_collections()]
    names = collection or configured
    unknown = sorted(set(names) - set(configured))
    if unknown:
        errors.print(f"[red]error:[/red] collection(s) {unknown} are not in {collections_file()}")
        raise typer.Exit(2)
    job = defs.resolve_job_def("main_job")
    config = config or (Path(os.environ["RAG_RUN_CONFIG"]) if os.environ.get("RAG_RUN_CONFIG") else None)
    run_config: dict = {}
    if config is not None:
        try:
            run_config = yaml.safe_load(config.read_text()) or {}
        except (OSError, yaml.YAMLError) as err:
            errors.print(f"[red]error:[/red] run config {config}: {err}")
            raise typer.Exit(2) from None
        if not isinstance(run_config, dict):
            errors.print(f"[red]error:[/red] run config {config}: expected a mapping such as `ops: ...`")
            raise typer.Exit(2)
        try:
            dg.validate_run_config(job, run_config)  # fail before the first collection runs, not midway
        except dg.DagsterInvalidConfigError as err:
            errors.print(f"[red]error:[/red] run config {config} does not fit the job: {err}")
            raise typer.Exit(2) from None
        console.print(f"run config: [cyan]{config}[/cyan]", soft_wrap=True)
    with dg.DagsterInstance.get() as instance:
        register_collections(instance, names)
        for name in names:
            console.print(f"[bold]materializing[/bold] collection [cyan]{name}[/cyan]")
            result = job.execute_in_process(
                partition_key=name, instance=instance, raise_on_error=False, run_config=run_config
            )
            if not result.success:
                errors.print(f"[red]run {result.run_id} for {name} failed[/red]; see `make dev` for its logs")
                raise typer.Exit(1)
            console.print(f"  run {result.run_id} succeeded")
    print_summary(console, names)
    print_evaluation(console, names)


@app.command()
def search(
    query: str = typer.Argument(..., help="What to look for."),
    collection: list[str] = typer.Option(None, "--collection", "-c", help="Only these collections."),
    mode: str = typer.Option("hybrid", "--mode", "-m", help="dense | bm25 | hybrid"),
    k: int = typer.Option(5, "-k", help="How many passages."),
    as_json: bool = typer.Option(False, "--json", help="Print the hits as JSON."),
    reranker: Path = typer.Option(None, "--reranker", help="A local cross-encoder model folder to rerank with."),
) -> None:
    """Search the materialized passage index (run `rag run` first)."""
    from rag_assets.core.retrieval import cross_encoder_reranker
    from rag_assets.core.retrieval import search as run_search
    from resources.embedder import EmbedderResource
    from resources.vectors import VectorStoreResource

    if mode not in ("dense", "bm25", "hybrid"):
        errors.print(f"[red]error:[/red] --mode must be dense, bm25 or hybrid, not {mode!r}")
        raise typer.Exit(2)
    embedder = EmbedderResource(progress=False).get()
    index = VectorStoreResource().index(embedder)
    try:
        rerank = cross_encoder_reranker(reranker) if reranker else None
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


def _latest_adapter(con, collection: str, kind: str = "llm") -> tuple[str, Path] | None:
    """(id, folder) of the collection's newest published router of `kind` (encoder | llm), if any."""
    from rag_assets.core.encoder_training import is_encoder_router

    exists = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'router_adapters'"
    ).fetchone()[0]
    if not exists:
        return None
    rows = con.execute(
        "SELECT adapter_id, path FROM router_adapters WHERE collection = ? ORDER BY created_at DESC", [collection]
    ).fetchall()
    for adapter_id, path in rows:
        folder = Path(path)
        if folder.is_dir() and is_encoder_router(folder) == (kind == "encoder"):
            return adapter_id, folder
    return None


def _answer_collection(con, collection: str | None) -> str:
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
DEFAULT_ROUTER_KIND = "encoder"  # as rag_assets.core.strategies (not imported: keeps `rag --help` fast)


@app.command()
def ask(
    question: str = typer.Argument(..., help="The question."),
    strategy: str = typer.Option("rdr2", "--strategy", "-s", help="rdr2 | rag | none"),
    k: int = typer.Option(5, "-k", help="rdr2: documents routed; rag: passages read."),
    iters: int = typer.Option(2, "--iters", help="rdr2: expand iterations after the first routing round."),
    collection: str = typer.Option(None, "--collection", "-c", help="The collection (default: the only one)."),
    mode: str = typer.Option("hybrid", "--mode", "-m", help="Retrieval: dense | bm25 | hybrid"),
    router_kind: str = typer.Option(
        DEFAULT_ROUTER_KIND, "--router", help="rdr2 router kind: encoder | llm | similarity | hit-nodes"
    ),
    adapter: str = typer.Option(
        "latest", "--adapter", help="Trained router (encoder or LLM kind): latest | none | a folder."
    ),
    style: str = typer.Option("short", "--style", help="Answer style: short | list | long"),
    as_json: bool = typer.Option(False, "--json", help="Print the stored answer row as JSON."),
) -> None:
    """Answer a question from the materialized index (Retrieve, Document-Route, Read) and store it
    with its lineage in the `answers` table; `rag trace ANSWER_ID` audits it later."""
    from rag_assets.core.catalogue import ensure_schema
    from rag_assets.core.encoder_training import load_encoder_router
    from rag_assets.core.lineage import CatalogueTrees, answer_versions, build_record, index_version, store_answers
    from rag_assets.core.retrieval import search as run_search
    from rag_assets.core.scoring_router import HitNodesRouter, ScoringRouter
    from rag_assets.core.strategies import KINDS, StrategySpec, run_strategy
    from rag_assets.core.teachers import SimilarityThresholds
    from resources.catalogue import default_catalogue
    from resources.embedder import EmbedderResource
    from resources.llm import LLMResource
    from resources.vectors import VectorStoreResource

    if strategy not in KINDS:
        errors.print(f"[red]error:[/red] --strategy must be one of {', '.join(KINDS)}, not {strategy!r}")
        raise typer.Exit(2)
    if router_kind not in ASK_ROUTERS:
        errors.print(f"[red]error:[/red] --router must be one of {', '.join(ASK_ROUTERS)}, not {router_kind!r}")
        raise typer.Exit(2)
    if mode not in ("dense", "bm25", "hybrid"):
        errors.print(f"[red]error:[/red] --mode must be dense, bm25 or hybrid, not {mode!r}")
        raise typer.Exit(2)
    with default_catalogue().get_connection() as con:
        ensure_schema(con)
        try:
            name = _answer_collection(con, collection)
        except ValueError as err:
            errors.print(f"[red]error:[/red] {err}")
            raise typer.Exit(2) from None
        adapters: dict[str, Path] = {}
        adapter_name: str | None = None
        encoder_folder: Path | None = None
        trained = router_kind in ("encoder", "llm")
        if strategy == "rdr2" and trained and adapter != "none":
            found = (
                _latest_adapter(con, name, router_kind) if adapter == "latest" else (Path(adapter).name, Path(adapter))
            )
            marker = "router.json" if router_kind == "encoder" else "adapter_config.json"
            if found is None:
                fallback = "the untrained encoder (similarity)" if router_kind == "encoder" else "the base model"
                errors.print(
                    f"[yellow]note:[/yellow] no trained {router_kind} router for {name!r}; routing with {fallback}"
                )
            elif not (found[1] / marker).is_file():
                errors.print(f"[red]error:[/red] {found[1]} is not a trained {router_kind} router folder (no {marker})")
                raise typer.Exit(2)
            elif router_kind == "encoder":
                adapter_name, encoder_folder = found
            else:
                adapter_name, adapters = found[0], {found[0]: found[1]}
        if router_kind == "encoder" and encoder_folder is None:
            router_kind = "similarity"
        label = {"none": "no-retrieval", "rag": f"rag-{mode}"}.get(
            strategy,
            {"encoder": "rdr2-encoder", "similarity": "rdr2-similarity", "hit-nodes": "rdr2-hit-nodes"}.get(
                router_kind, "rdr2-llm" if adapter_name else "rdr2-base"
            ),
        )
        try:
            spec = StrategySpec(
                name=label,
                kind=strategy,
                retrieval_mode=mode,
                top_k=k,
                passages_per_query=max(10, 2 * k),
                expand_iterations=iters,
                adapter=adapter_name if router_kind == "llm" else None,
                answer_style=style,
                router=router_kind if strategy == "rdr2" else "llm",
            )
        except ValueError as err:
            errors.print(f"[red]error:[/red] {err}")
            raise typer.Exit(2) from None
        embedder = EmbedderResource(progress=False).get()
        index = VectorStoreResource().index(embedder)
        engine = LLMResource.from_env().engine(adapters=adapters)
        routers = {"hit-nodes": HitNodesRouter()}
        if encoder_folder is not None:
            routers["encoder"] = load_encoder_router(encoder_folder, device=embedder.device)
        routers["similarity"] = ScoringRouter(embedder, SimilarityThresholds(), kind="similarity", contextual=False)

        def retrieve(query: str, how: str, top: int):
            return run_search(index, embedder, query, mode=how, k=top, collections=[name])

        try:
            outcome = run_strategy(
                [question], spec, retrieve=retrieve, trees=CatalogueTrees(con, name), engine=engine, routers=routers
            )[0]
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
        except (FileNotFoundError, ValueError) as err:
            errors.print(f"[red]error:[/red] {err}")
            raise typer.Exit(1) from None
        record = build_record(outcome, spec, collection=name, source="cli", versions=versions)
        store_answers(con, [record])
    if as_json:
        sys.stdout.write(json.dumps(record.to_dict(), ensure_ascii=False, indent=1) + "\n")
        return
    console.print(f"[bold]{record.answer or '(no answer)'}[/bold]")
    if outcome.citations:
        console.print("[dim]citations:[/dim]")
        for i, cite in enumerate(outcome.citations, start=1):
            words = " ".join(cite.text.split()[:12])
            console.print(
                f"  [{i}] [green]{' > '.join(cite.heading_path)}[/green]: {words}"
                f"{' …' if len(cite.text.split()) > 12 else ''} [dim]({cite.doc_id} node {cite.node_id})[/dim]",
                highlight=False,
            )
    elif strategy == "rdr2":
        console.print(
            "[yellow]the router selected nothing (every document refused): answered without evidence[/yellow]"
        )
    console.print(f"[dim]{label}: {outcome.seconds:.1f}s, {outcome.engine_calls} engine call(s)[/dim]")
    console.print(f"answer id: [cyan]{record.answer_id}[/cyan]  (audit: rag trace {record.answer_id})", highlight=False)


@app.command()
def trace(
    answer_id: str = typer.Argument(..., help="An answer id printed by `rag ask` (or from the answers table)."),
    as_json: bool = typer.Option(False, "--json", help="Print the trace as JSON."),
) -> None:
    """Audit an answer: cited nodes -> documents -> the exact source text at the recorded spans ->
    versions. Exit code 3 when a source changed since the answer was produced."""
    from rag_assets.core.lineage import trace_answer
    from resources.catalogue import default_catalogue

    with default_catalogue().get_connection() as con:
        try:
            result = trace_answer(con, answer_id)
        except KeyError as err:
            errors.print(f"[red]error:[/red] {err.args[0]}")
            raise typer.Exit(2) from None
    record = result.record
    if as_json:
        sys.stdout.write(
            json.dumps(
                {
                    "answer": record.to_dict(),
                    "changed": result.changed,
                    "changed_docs": list(result.changed_docs),
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
                        }
                        for s in result.sources
                    ],
                    "versions": result.versions,
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
            console.print(
                f"  [{i}] {source.doc_id} ({source.uri or 'document gone'}) node {source.node_id} "
                f"chars {source.span_start}-{source.span_end} {state}\n      "
                f"[green]{source.heading_path}[/green]\n      {source.current_text if source.current_text is not None else source.recorded_text}",
                highlight=False,
            )
        index = result.versions.get("index") or {}
        console.print(
            f"  versions: index {index.get('table')} v{index.get('version')} tag {index.get('tag')}; "
            f"adapter {result.versions.get('adapter_id') or 'none (base model)'}; "
            f"router {result.versions.get('router_model')}; reader {result.versions.get('reader_model')}; "
            f"embedder {result.versions.get('embedder')}",
            highlight=False,
        )
    if result.changed:
        docs = sorted(set(result.changed_docs) | {s.doc_id for s in result.sources if s.changed})
        errors.print(
            f"[bold red]SOURCE CHANGED since this answer was produced: {', '.join(docs)} "
            "(content hash or text at the cited span differs); re-ask to refresh it[/bold red]"
        )
        raise typer.Exit(3)


def main() -> None:  # pragma: no cover - console entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    app()
