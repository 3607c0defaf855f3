"""Tracing an answer: `trace_answer` walks an answer to its cited nodes, their documents, the exact
source text at the recorded spans (from `document_texts`) and the versions recorded with it (and,
for contregen / disco, every citation inside the stored structure: `structures.py`); a
document whose current content hash differs from the recorded one (or that is gone) is flagged
`changed`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import duckdb

from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.lineage.structures import resolve_structure, structure_citations, structure_doc_ids
from rag_assets.core.store.document_tables import document_sources
from rag_assets.core.store.lineage import AnswerRecord, load_answer
from rag_assets.core.store.tree_tables import document_texts, load_tree_nodes


@dataclass(frozen=True, slots=True)
class TracedSource:
    """One cited node followed back to its document's text."""

    doc_id: str
    node_id: int
    heading_path: str
    span_start: int
    span_end: int
    recorded_text: str
    current_text: str | None  # the document text at the span now (None: the document is gone)
    title: str | None
    uri: str | None
    recorded_hash: str | None
    current_hash: str | None
    pages: str = ""  # the cited node's pages in a PDF or Word document now ("p. 12"), else ""

    @property
    def changed(self) -> bool:
        return (
            self.current_hash is None
            or self.recorded_hash != self.current_hash
            or self.current_text != self.recorded_text
        )


@dataclass(frozen=True, slots=True)
class AnswerTrace:
    record: AnswerRecord
    sources: tuple[TracedSource, ...]
    versions: dict[str, Any]
    changed_docs: tuple[str, ...]  # retrieved or cited documents whose hash changed (or vanished)
    # contregen / disco: the stored structure, each citation in it resolved to the text now
    structure: dict[str, Any] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return (
            bool(self.changed_docs)
            or any(s.changed for s in self.sources)
            or any(c.get("changed") for c in structure_citations(self.structure))
        )


def _node_pages(nodes: list[TreeNode], node_id: int) -> str:
    return nodes[node_id].pages if 0 <= node_id < len(nodes) else ""


def trace_answer(con: duckdb.DuckDBPyConnection, answer_id: str) -> AnswerTrace:
    """answer -> cited nodes -> document -> exact source text at the recorded span -> versions."""
    record = load_answer(con, answer_id)
    versions = record.versions_dict
    recorded = dict(versions.get("doc_hashes") or {})
    structure = record.structure_dict
    docs = sorted(set(recorded) | set(record.cited_doc_ids) | structure_doc_ids(structure))
    texts = document_texts(con, record.collection, docs)
    meta = document_sources(con, record.collection, docs)
    nodes = load_tree_nodes(con, record.collection, sorted(set(record.cited_doc_ids)))
    sources = []
    for i, doc_id in enumerate(record.cited_doc_ids):
        start, end = record.cited_span_starts[i], record.cited_span_ends[i]
        current_hash, text = texts.get(doc_id, (None, None))
        title, uri = meta.get(doc_id, (None, None))
        sources.append(
            TracedSource(
                doc_id=doc_id,
                node_id=record.cited_node_ids[i],
                heading_path=record.cited_heading_paths[i],
                span_start=start,
                span_end=end,
                recorded_text=record.cited_texts[i],
                current_text=None if text is None else text[start:end],
                title=title,
                uri=uri,
                recorded_hash=recorded.get(doc_id),
                current_hash=current_hash,
                pages=_node_pages(nodes.get(doc_id, []), record.cited_node_ids[i]),
            )
        )
    changed = tuple(d for d, h in sorted(recorded.items()) if texts.get(d, (None,))[0] != h)
    resolved = resolve_structure(structure, lambda doc_id: texts.get(doc_id, (None, None))[1])
    return AnswerTrace(record, tuple(sources), versions, changed, resolved)
