"""The audit of an answer as JSON (`rag trace --json`, the service's /trace, the web page) and a
document's tree with its text (the page shows cited nodes highlighted at their spans)."""

from __future__ import annotations

from typing import Any

from rag_assets.core.corpus.source_check import CHANGED, GONE, source_state


def trace_dict(con: Any, answer_id: str) -> dict[str, Any]:
    """Cited nodes -> documents -> the text as cited beside the text now -> versions; the source
    file on disk is compared with the catalogue (an edit not yet re-indexed shows), and each
    source's `state` says in words how the catalogue and the disk stand against the answer."""
    from rag_assets.core.lineage.trace import source_state as state_in_words
    from rag_assets.core.lineage.trace import trace_answer

    result = trace_answer(con, answer_id)
    record = result.record
    # the file against what the catalogue holds now (not against the answer: a re-index since
    # made them agree again)
    on_disk = {s.doc_id: source_state(s.uri, s.current_hash) for s in result.sources}
    disk_changed = sorted(d for d, state in on_disk.items() if state in (CHANGED, GONE))
    return {
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
                "pages": s.pages,
                "title": s.title,
                "uri": s.uri,
                "recorded_text": s.recorded_text,
                "current_text": s.current_text,
                "current_node_id": s.current_node_id,
                "current_span": list(s.current_span) if s.current_span else None,
                "state": state_in_words(
                    s.recorded_hash,
                    s.current_hash,
                    on_disk.get(s.doc_id, "unknown"),
                    text_differs=s.current_text != s.recorded_text,
                ),
                "recorded_hash": s.recorded_hash,
                "current_hash": s.current_hash,
                "changed": s.changed,
                "on_disk": on_disk.get(s.doc_id),
            }
            for s in result.sources
        ],
        "versions": result.versions,
        "structure": result.structure,
    }


def source_changed(trace: dict[str, Any]) -> list[str]:
    """The documents whose cited text or source file changed since the answer (empty: none)."""
    cited = {s["doc_id"] for s in trace["sources"] if s["changed"]}
    return sorted(set(trace["changed_docs"]) | cited | set(trace["changed_on_disk"]))


def document_dict(con: Any, collection: str, doc_id: str) -> dict[str, Any]:
    """One document's tree (nodes in order with their spans) and its normalised text."""
    from rag_assets.core.store.document_tables import document_sources
    from rag_assets.core.store.tree_tables import load_trees

    found = load_trees(con, collection, [doc_id])
    if doc_id not in found:
        raise KeyError(f"no document {doc_id!r} in collection {collection!r}")
    nodes, text = found[doc_id]
    title, uri = document_sources(con, collection, [doc_id]).get(doc_id, (None, None))
    return {
        "collection": collection,
        "doc_id": doc_id,
        "title": title,
        "uri": uri,
        "text": text,
        "nodes": [
            {
                "node_id": n.node_id,
                "parent_id": n.parent_id,
                "kind": n.kind,
                "depth": n.depth,
                "text": n.text,
                "heading_path": list(n.heading_path),
                "span": [n.span_start, n.span_end],
                "pages": n.pages,
            }
            for n in nodes
        ],
    }
