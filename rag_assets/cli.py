"""The `rag` command line: run the graph, look at trees (later: search, ask, trace)."""

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
            out.append({"doc_id": item.doc_id, "title": dst.title, "format": item.format, "nodes": [
                {"node_id": n.node_id, "parent_id": n.parent_id, "kind": n.kind, "depth": n.depth, "text": n.text}
                for n in dst.nodes]})
        else:
            sys.stdout.write(render_tree(dst.nodes) + "\n")
    if as_json:
        sys.stdout.write(json.dumps(out[0] if len(out) == 1 else out, ensure_ascii=False, indent=1) + "\n")
    if failed:
        raise typer.Exit(1)


@app.command()
def run(
    collection: list[str] = typer.Option(None, "--collection", "-c", help="Only these collections (default: all)."),
) -> None:
    """Materialize the whole asset graph (with its checks) for every collection, then summarise."""
    _ensure_dagster_home()
    import dagster as dg

    from rag_assets.definitions import defs
    from rag_assets.partitions import register_collections
    from rag_assets.settings import collections_file, load_collections
    from rag_assets.summary import print_summary

    configured = [spec.name for spec in load_collections()]
    names = collection or configured
    unknown = sorted(set(names) - set(configured))
    if unknown:
        errors.print(f"[red]error:[/red] collection(s) {unknown} are not in {collections_file()}")
        raise typer.Exit(2)
    job = defs.resolve_job_def("main_job")
    with dg.DagsterInstance.get() as instance:
        register_collections(instance, names)
        for name in names:
            console.print(f"[bold]materializing[/bold] collection [cyan]{name}[/cyan]")
            result = job.execute_in_process(partition_key=name, instance=instance, raise_on_error=False)
            if not result.success:
                errors.print(f"[red]run {result.run_id} for {name} failed[/red]; see `make dev` for its logs")
                raise typer.Exit(1)
            console.print(f"  run {result.run_id} succeeded")
    print_summary(console, names)


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
    from rag_assets.resources.embedder import EmbedderResource
    from rag_assets.resources.vectors import VectorStoreResource

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
        raise typer.Exit(1)
    if as_json:
        sys.stdout.write(json.dumps([{
            "rank": h.rank, "score": h.score, "passage_id": h.passage_id, "doc_id": h.doc_id,
            "collection": h.collection, "node_ids": list(h.node_ids),
            "heading_path": list(h.heading_path), "text": h.text} for h in hits], ensure_ascii=False, indent=1) + "\n")
        return
    for hit in hits:
        console.print(f"[bold]{hit.rank}.[/bold] [dim]{hit.score:.4f}[/dim] [cyan]{hit.doc_id}[/cyan] "
                      f"nodes {list(hit.node_ids)}\n   [green]{' > '.join(hit.heading_path)}[/green]\n   {hit.text[:300]}")


def main() -> None:  # pragma: no cover - console entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    app()
