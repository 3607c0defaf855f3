"""Citations: the exact source spans of tree nodes an answer's evidence came from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rag_assets.core.answering.types import Citation
from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.index.retrieval import SearchHit


def node_citation(doc_id: str, node: TreeNode, span: tuple[int, int] | None = None) -> Citation:
    """The citation of a node, or of `span` inside it (document offsets; it must lie within the node)."""
    start, end = span or (node.span_start, node.span_end)
    if not (node.span_start <= start <= end <= node.span_end):
        raise ValueError(f"{doc_id} node {node.node_id}: span {start}-{end} lies outside the node")
    text = node.text[start - node.span_start : end - node.span_start]
    return Citation(doc_id, node.node_id, tuple(node.heading_path), text, start, end, node.pages)


def passage_citations(hits: Sequence[SearchHit], trees: Mapping[str, Sequence[TreeNode]]) -> list[Citation]:
    """The citations of the retrieved passages' nodes at the passages' spans, each once, in hit order
    (hits of documents without a tree, and node ids outside the tree, are skipped)."""
    out: list[Citation] = []
    seen: set[tuple[str, int, int, int]] = set()
    for hit in hits:
        nodes = trees.get(hit.doc_id)
        if nodes is None:
            continue
        for node_id, span in zip(hit.node_ids, hit.spans):
            key = (hit.doc_id, node_id, *span)
            if key in seen or not 0 <= node_id < len(nodes):
                continue
            seen.add(key)
            out.append(node_citation(hit.doc_id, nodes[node_id], span))
    return out
