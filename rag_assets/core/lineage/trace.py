"""Tracing an answer: `trace_answer` walks an answer to its cited nodes, their documents, the text
as it was cited (recorded with the answer) beside the text now, and the versions recorded with it
(and, for contregen / disco, every citation inside the stored structure: `structures.py`); a
document whose current content hash differs from the recorded one (or that is gone) is flagged
`changed`.

The text now: for an unchanged document, the document text at the recorded span; for a document
re-indexed since, the span's offsets point elsewhere, so it is the text of the node of the current
tree that reads most like the cited text (`current_node_id`), or None when none resembles it.
`source_state` puts the catalogue and the file on disk into one of a few words."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb

from rag_assets.core.corpus.source_check import CHANGED, GONE
from rag_assets.core.corpus.tree import CONTENT, TreeNode
from rag_assets.core.lineage.structures import resolve_structure, structure_citations, structure_doc_ids
from rag_assets.core.store.document_tables import document_sources
from rag_assets.core.store.lineage import AnswerRecord, load_answer
from rag_assets.core.store.tree_tables import document_texts, load_tree_nodes

UNCHANGED_STATE = "unchanged"
REINDEXED = "changed and re-indexed"
NOT_REINDEXED = "changed on disk, not re-indexed"
DELETED = "deleted"
DELETED_NOT_REINDEXED = "deleted on disk, not re-indexed"
MIN_RESEMBLANCE = 0.5  # a current node reading less like the cited text than this is not "it"


def source_state(recorded_hash: str | None, catalogue_hash: str | None, disk: str, *, text_differs: bool) -> str:
    """The state of a cited document in words: `disk` compares the file with the *catalogue's*
    hash (unchanged | changed | gone | unknown), the hashes compare the catalogue with the answer."""
    if catalogue_hash is None:
        return DELETED
    if disk == GONE:
        return DELETED_NOT_REINDEXED
    if disk == CHANGED:
        return NOT_REINDEXED
    if (recorded_hash is not None and recorded_hash != catalogue_hash) or text_differs:
        return REINDEXED
    return UNCHANGED_STATE


def closest_node(nodes: Sequence[TreeNode], cited: str) -> tuple[TreeNode | None, float]:
    """The content node whose text reads most like `cited` (difflib's ratio), and that ratio."""
    best, best_ratio = None, 0.0
    for node in nodes:
        if node.kind != CONTENT:
            continue
        matcher = difflib.SequenceMatcher(None, node.text, cited, autojunk=False)
        if matcher.real_quick_ratio() <= best_ratio or matcher.quick_ratio() <= best_ratio:
            continue
        ratio = matcher.ratio()
        if ratio > best_ratio:
            best, best_ratio = node, ratio
    return best, best_ratio


@dataclass(frozen=True, slots=True)
class TracedSource:
    """One cited node followed back to its document's text."""

    doc_id: str
    node_id: int
    heading_path: str
    span_start: int
    span_end: int
    recorded_text: str  # the text as it was cited
    # the text now: at the span (document unchanged), else the closest node's (None: gone, or no
    # node resembles it)
    current_text: str | None
    title: str | None
    uri: str | None
    recorded_hash: str | None
    current_hash: str | None
    pages: str = ""  # the cited node's pages in a PDF or Word document now ("p. 12"), else ""
    current_node_id: int | None = None  # the node `current_text` is read from
    current_span: tuple[int, int] | None = None

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


def _traced(
    record: AnswerRecord,
    i: int,
    current: tuple[str | None, str | None],
    source: tuple[str | None, str | None],
    nodes: Sequence[TreeNode],
) -> TracedSource:
    """Citation `i` of `record` followed to its document now (hash and text, title and uri, tree)."""
    doc_id, node_id = record.cited_doc_ids[i], record.cited_node_ids[i]
    start, end = record.cited_span_starts[i], record.cited_span_ends[i]
    recorded_hash = (record.versions_dict.get("doc_hashes") or {}).get(doc_id)
    current_hash, text = current
    now, now_node, now_span = None, None, None
    if text is not None and (current_hash == recorded_hash or recorded_hash is None):
        now, now_node, now_span = text[start:end], node_id, (start, end)
    elif text is not None:  # re-indexed since: the recorded offsets point elsewhere
        node, ratio = closest_node(nodes, record.cited_texts[i])
        if node is not None and ratio >= MIN_RESEMBLANCE:
            now, now_node, now_span = node.text, node.node_id, (node.span_start, node.span_end)
    return TracedSource(
        doc_id=doc_id,
        node_id=node_id,
        heading_path=record.cited_heading_paths[i],
        span_start=start,
        span_end=end,
        recorded_text=record.cited_texts[i],
        current_text=now,
        title=source[0],
        uri=source[1],
        recorded_hash=recorded_hash,
        current_hash=current_hash,
        pages=_node_pages(list(nodes), now_node) if now_node is not None else "",
        current_node_id=now_node,
        current_span=now_span,
    )


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
    sources = [
        _traced(record, i, texts.get(doc_id, (None, None)), meta.get(doc_id, (None, None)), nodes.get(doc_id, []))
        for i, doc_id in enumerate(record.cited_doc_ids)
    ]
    changed = tuple(d for d, h in sorted(recorded.items()) if texts.get(d, (None,))[0] != h)
    resolved = resolve_structure(structure, lambda doc_id: texts.get(doc_id, (None, None))[1])
    return AnswerTrace(record, tuple(sources), versions, changed, resolved)
