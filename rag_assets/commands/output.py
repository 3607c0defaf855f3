"""How `rag search|ask|trace|answers|tree` print their results (human text or JSON); the same
dictionaries come from the in-process `QueryService` and from the service's JSON."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.markup import escape

from rag_assets.commands.errors import console, errors

# what happened to the reader's text (answers.echo; core/answering/echo.py), as `rag ask` says it
ECHO_NOTES = {
    "stripped": "the reader echoed its prompt: the echoed text was cut off",
    "refused": "the reader echoed its prompt: nothing else was written, so no answer",
    "looped": "the reader repeated itself: the repeats were cut off",
    "garbled": "the reader wrote only list numbering or a repeated phrase, so no answer",
}


def pages_note(item: dict) -> str:
    """' (p. 12)' for a citation or traced source in a PDF or Word document, else ''."""
    return f" ({escape(item['pages'])})" if item.get("pages") else ""


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=1, default=str) + "\n")


def note(text: str) -> None:
    errors.print(f"[dim]{escape(text)}[/dim]", highlight=False, soft_wrap=True)


def print_hits(hits: list[dict[str, Any]]) -> None:
    if not hits:  # e.g. a BM25 query none of whose words is in the index
        console.print("no passage matched", highlight=False)
    for hit in hits:
        console.print(
            f"[bold]{hit['rank']}.[/bold] [dim]{hit['score']:.4f}[/dim] [cyan]{escape(hit['doc_id'])}[/cyan] "
            f"nodes {hit['node_ids']}\n   [green]{escape(' > '.join(hit['heading_path']))}[/green]\n"
            f"   {escape(hit['text'][:300])}",
            highlight=False,
        )


def print_answer(result: dict[str, Any], *, streamed: str = "") -> None:
    """The answer (unless exactly its text was already streamed), its numbered citations, its id."""

    row = result["answer"]
    if streamed and streamed == row["answer"]:
        console.print()
    else:
        if streamed:  # the stream is not the stored answer: the stored one is what counts
            console.print("\n[dim]the answer as stored:[/dim]", highlight=False)
        console.print(f"[bold]{escape(row['answer'] or '(no answer)')}[/bold]", highlight=False, soft_wrap=True)
    if row.get("echo"):
        console.print(f"[yellow]{escape(ECHO_NOTES.get(row['echo'], row['echo']))}[/yellow]")
    if result.get("form_note"):
        console.print(f"[dim]{escape(result['form_note'])}[/dim]", highlight=False)
    if result["citations"]:
        print_citations(result["citations"])
    elif row["strategy_kind"] == "rdr2":
        console.print(
            "[yellow]the router selected nothing (every document refused): answered without evidence[/yellow]"
        )
    structure = json.loads(row["structure"]) if row.get("structure") else None
    if structure:
        from rag_assets.core.lineage.structures import structure_lines

        console.print("\n".join(structure_lines(structure)), style="dim", highlight=False, markup=False)
    console.print(
        f"[dim]{escape(row['strategy'])}: {row['seconds']:.1f}s, {row['engine_calls']} engine call(s)[/dim]",
        highlight=False,
    )
    console.print(f"answer id: [cyan]{row['answer_id']}[/cyan]  (audit: rag trace {row['answer_id']})", highlight=False)


def print_citations(citations: list[dict[str, Any]]) -> None:
    """The nodes the answer rests on (`citations:`), then the rest the reader was given."""
    from rag_assets.core.text import first_words

    supporting = [c for c in citations if c.get("supports", True)]
    also = [c for c in citations if not c.get("supports", True)]
    for title, cites in (("citations", supporting), ("evidence also given", also)):
        if cites:
            console.print(f"[dim]{title}:[/dim]")
        for cite in cites:
            console.print(
                f"  [{cite['n']}] [green]{escape(' > '.join(cite['heading_path']))}[/green]{pages_note(cite)}: "
                f"{escape(first_words(cite['text'], 12, mark_cut=True))} "
                f"[dim]({escape(cite['doc_id'])} node {cite['node_id']})[/dim]",
                highlight=False,
            )


def print_trace(trace: dict[str, Any]) -> None:
    row = trace["answer"]
    console.print(
        f"[bold]answer {row['answer_id']}[/bold] ({escape(row['strategy'])}, {row['source']}, "
        f"{row['created_at'][:19].replace('T', ' ')} UTC, collection {escape(row['collection'])})",
        highlight=False,
    )
    console.print(f"  question: {escape(row['question'])}\n  answer:   {escape(row['answer'])}", highlight=False)
    if not trace["sources"]:
        console.print("  [dim]no cited nodes (the reader saw no evidence)[/dim]")
    for i, source in enumerate(trace["sources"], start=1):
        print_traced_source(i, source)
    if trace["structure"]:
        from rag_assets.core.lineage.structures import structure_lines

        lines = structure_lines(trace["structure"])
        console.print("\n".join("  " + line for line in lines), highlight=False, markup=False)
    versions = trace["versions"]
    index = versions.get("index") or {}
    console.print(
        f"  versions: index {index.get('table')} v{index.get('version')} tag {index.get('tag')}; "
        f"adapter {versions.get('adapter_id') or 'none (base model)'}; "
        f"router {versions.get('router_model')}; reader {versions.get('reader_model')}; "
        f"embedder {versions.get('embedder')}",
        highlight=False,
    )


def print_traced_source(number: int, source: dict[str, Any]) -> None:
    """One cited source: where, its state in words, the text as cited and (when it differs) now."""
    state = source.get("state") or ("changed" if source["changed"] else "unchanged")
    colour = "green" if state == "unchanged" else "red"
    console.print(
        f"  [{number}] {escape(source['doc_id'])} ({escape(source['uri'] or 'document gone')}) node "
        f"{source['node_id']} chars {source['span'][0]}-{source['span'][1]}: [{colour}]{escape(state)}[/{colour}]\n"
        f"      [green]{escape(source['heading_path'])}[/green]{pages_note(source)}\n"
        f"      cited: {escape(source['recorded_text'])}",
        highlight=False,
        soft_wrap=True,
    )
    now = source.get("current_text")
    if now == source["recorded_text"]:
        return
    if now is None:
        console.print(
            "      now:   [red](no node of the document reads like it now)[/red]", highlight=False, soft_wrap=True
        )
        return
    where = source.get("current_node_id")
    span = source.get("current_span") or ["?", "?"]
    console.print(
        f"      now:   {escape(now)} [dim](node {where}, chars {span[0]}-{span[1]})[/dim]",
        highlight=False,
        soft_wrap=True,
    )


def print_answers(listing: dict[str, Any]) -> None:
    rows = listing["answers"]
    if not rows:
        console.print("[dim]no stored answers match[/dim]")
    for row in rows:
        console.print(
            f"[cyan]{row['answer_id']}[/cyan] {row['created_at'].replace('T', ' ')} {row['source']:<10} "
            f"{escape(row['collection'])} {escape(row['strategy'])} [{row['citations']} cited]\n"
            f"    {escape(row['question'][:100])}\n    [dim]-> {escape(row['answer'][:100])}[/dim]",
            highlight=False,
        )


def tree_outline(path: Any, format: str, as_json: bool) -> bool:
    """Print a file's trees; False when a document was rejected."""
    from rag_assets.core.corpus.sources import CollectionSpec, Rejection, iter_collection
    from rag_assets.core.corpus.tree import render_tree
    from rag_assets.core.corpus.tree_building import document_tree

    ok = True
    out: list[dict] = []
    for item in iter_collection(CollectionSpec(name="cli", path=str(path), format=format)):
        if isinstance(item, Rejection):
            errors.print(f"[red]rejected[/red] {escape(item.uri)}: {escape(item.reason)}")
            ok = False
            continue
        try:
            dst = document_tree(item)
        except ValueError as err:
            errors.print(f"[red]rejected[/red] {escape(item.uri)}: cannot parse as {item.format}: {escape(str(err))}")
            ok = False
            continue
        if as_json:
            nodes = [
                {
                    "node_id": n.node_id,
                    "parent_id": n.parent_id,
                    "kind": n.kind,
                    "depth": n.depth,
                    "text": n.text,
                    # only paged formats (PDF, Word) have pages; other nodes stay as they were
                    **({"pages": n.pages} if n.pages else {}),
                }
                for n in dst.nodes
            ]
            out.append({"doc_id": item.doc_id, "title": dst.title, "format": item.format, "nodes": nodes})
        else:
            sys.stdout.write(render_tree(dst.nodes) + "\n")
    if as_json:
        print_json(out[0] if len(out) == 1 else out)
    return ok
