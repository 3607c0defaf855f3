"""A routed document's evidence: the nodes the router selected (plus the budget fill's), cut to
an evidence budget and rendered for the reader, each heading path printed once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.routing.subtree import word_count


@dataclass(slots=True)
class RoutedDocument:
    doc_id: str
    selected_node_ids: list[int] = field(default_factory=list)  # ANSWERed, plus any budget fill
    filled_node_ids: list[int] = field(default_factory=list)  # of those, added by the budget fill
    refused: bool = False
    expelled: int = 0
    collapsed_outputs: int = 0
    router_calls: int = 0


FILL_ORDERS = ("router", "retrieval", "fused")
RRF_K = 60  # reciprocal rank fusion's usual constant


def fill_scores(
    fill: Mapping[tuple[int, int], float],
    selected: Mapping[tuple[int, int], float],
    retrieval_ranks: Mapping[tuple[int, int], int],
    order: str,
) -> dict[tuple[int, int], float]:
    """Scores for the budget fill's candidates, on the scale `fit_evidence` ranks the router's own
    selections (`selected`) with.

    - "router": the router's own score: fill and selections compete on one scale.
    - "retrieval": after every selection, the retrieved passages' nodes in retrieval order, then
      the other candidates by router score.
    - "fused": after every selection, reciprocal rank fusion of the router's ranking of the
      candidates and the retrieval ranking (a node no passage hit has only the router's term).
    Why not the router's score alone: on nq_wiki the answer is often a short table cell or list
    line that retrieval's lexical + dense search ranks well and the encoder does not (gold nodes
    ranked 7th and 18th of ~290 shown nodes in two of the questions a router-ordered fill lost), so
    the fill dropped what retrieve-and-read keeps."""
    if order not in FILL_ORDERS:
        raise ValueError(f"fill_order must be one of {FILL_ORDERS}, got {order!r}")
    if order == "router" or not fill:
        return dict(fill)
    floor = min(selected.values(), default=0.0) - 1.0  # every fill node ranks below every selection
    by_router = sorted(fill, key=lambda key: -fill[key])
    if order == "retrieval":
        hits = sorted((key for key in fill if key in retrieval_ranks), key=lambda key: retrieval_ranks[key])
        rest = [key for key in by_router if key not in retrieval_ranks]
        ranked = hits + rest
    else:
        fused = {key: 1 / (RRF_K + rank) for rank, key in enumerate(by_router)}
        for key in fused:
            if key in retrieval_ranks:
                fused[key] += 1 / (RRF_K + retrieval_ranks[key])
        ranked = sorted(fused, key=lambda key: -fused[key])
    return {key: floor - position / len(ranked) for position, key in enumerate(ranked)}


def fit_evidence(
    documents: Sequence[RoutedDocument],
    trees: Mapping[str, Sequence[TreeNode]],
    budget: int,
    scores: Mapping[tuple[int, int], float] | None = None,
) -> None:
    """Keep, in place, the selected nodes that render (numbered, as the reader sees them) within
    `budget` words: best score first, then selection order; a node that does not fit is skipped
    and a shorter one after it may still fit. Exact without re-rendering: a node costs its mark
    and text, plus its heading line when it is the first kept node under that heading path in its
    document (`render_evidence` prints each path once)."""
    scores = scores or {}
    order = [(i, n) for i, doc in enumerate(documents) for n in doc.selected_node_ids]
    ranked = sorted(range(len(order)), key=lambda k: (-scores.get(order[k], 0.0), k))
    kept: set[tuple[int, int]] = set()
    headed: set[tuple[int, tuple[str, ...]]] = set()  # (document, heading path) already printed
    used = 0
    for k in ranked:
        i, n = order[k]
        node = trees[documents[i].doc_id][n]
        group = (i, tuple(node.heading_path))
        cost = node_words(node) + (0 if group in headed else heading_words(node))
        if used + cost <= budget:
            kept.add((i, n))
            headed.add(group)
            used += cost
    for i, doc in enumerate(documents):
        doc.selected_node_ids = [n for n in doc.selected_node_ids if (i, n) in kept]
        doc.filled_node_ids = [n for n in doc.filled_node_ids if (i, n) in kept]


def heading_words(node: TreeNode) -> int:
    """Words of the heading line `render_evidence` prints above a node's group: `# path`."""
    return word_count(_heading_line(node.heading_path))


def node_words(node: TreeNode) -> int:
    """Words a selected node adds under its heading line, numbered (`[n] text`)."""
    return 1 + word_count(node.text)


def _heading_line(path: Sequence[str]) -> str:
    return f"# {' > '.join(path)}"


def evidence_groups(doc: RoutedDocument, nodes: Sequence[TreeNode]) -> list[tuple[tuple[str, ...], list[int]]]:
    """A document's selected nodes grouped under their heading path, in document order: the order
    the reader sees them (and the order their citations are listed in)."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for n in sorted(doc.selected_node_ids):
        groups.setdefault(tuple(nodes[n].heading_path), []).append(n)
    return list(groups.items())


def render_evidence(
    documents: Sequence[RoutedDocument], trees: Mapping[str, Sequence[TreeNode]], *, numbered: bool = False
) -> str:
    """Selected nodes document by document, in retrieval order; within a document, each heading
    path printed once (`# path`) above its nodes in document order. Structure the reader can use,
    without paying for a repeated path per node: heading paths are about as long as the nodes
    themselves on the real sets (14 vs 14 words on conditionalqa, 12 vs 13 on emanual).

    `numbered`: each node's line reads `[n] text` (n from 1, in the same order), so a reader can
    cite blocks by number.
    """
    blocks = []
    number = 0
    for doc in documents:
        if not doc.selected_node_ids:
            continue
        nodes = trees[doc.doc_id]
        lines = []
        for path, ids in evidence_groups(doc, nodes):
            lines.append(_heading_line(path))
            for n in ids:
                number += 1
                lines.append(f"[{number}] {nodes[n].text}" if numbered else nodes[n].text)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
