"""Source documents -> Document Structure Trees, one document at a time, failures isolated."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from tqdm import tqdm

from rag_assets.core.corpus.parsers import parse_blocks
from rag_assets.core.corpus.sources import Rejection, SourceDocument
from rag_assets.core.corpus.tree import DocumentTree, build_tree

# Nodes per document at most: the largest real document here (an e-manual) has 2,480; a Markdown
# file of 20,000 headings made 30,014. A tree over the cap is rejected with the count.
DEFAULT_MAX_NODES = 50_000


@dataclass(slots=True)
class BuiltTrees:
    trees: list[tuple[SourceDocument, DocumentTree]]
    rejections: list[Rejection]


def document_tree(doc: SourceDocument) -> DocumentTree:
    return build_tree(doc.title, parse_blocks(doc.format, doc.text))


def build_trees(
    docs: Iterable[SourceDocument],
    *,
    progress: bool = False,
    max_nodes: int = DEFAULT_MAX_NODES,
    kept: Mapping[str, DocumentTree] | None = None,
) -> BuiltTrees:
    """Parse every document (one `kept` holds a tree for keeps it: the catalogue's tree of the
    same content by the same reader); one that fails, or whose tree has more than `max_nodes`
    nodes, is recorded as a rejection and the rest go on."""
    built = BuiltTrees([], [])
    # disable=None: the bar only on a terminal (piped output gets no carriage-return updates)
    for doc in tqdm(docs, desc="trees", unit="doc", disable=None if progress else True):
        try:
            tree = (kept or {}).get(doc.doc_id) or document_tree(doc)
        except (ValueError, RecursionError) as err:
            # ParseError is a ValueError; RecursionError would mean a parser bug on deep input,
            # still only this document's problem.
            reason = f"cannot parse as {doc.format}: {err}"
            built.rejections.append(Rejection(doc.collection, doc.uri, "parse", reason))
            continue
        if len(tree.nodes) > max_nodes:
            reason = (
                f"{len(tree.nodes)} nodes, over the limit of {max_nodes} per document (document_trees config max_nodes)"
            )
            built.rejections.append(Rejection(doc.collection, doc.uri, "parse", reason))
            continue
        built.trees.append((doc, tree))
    return built
