"""Source documents -> Document Structure Trees, one document at a time, failures isolated."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tqdm import tqdm

from rag_assets.core.corpus.parsers import parse_blocks
from rag_assets.core.corpus.sources import Rejection, SourceDocument
from rag_assets.core.corpus.tree import DocumentTree, build_tree


@dataclass(slots=True)
class BuiltTrees:
    trees: list[tuple[SourceDocument, DocumentTree]]
    rejections: list[Rejection]


def document_tree(doc: SourceDocument) -> DocumentTree:
    return build_tree(doc.title, parse_blocks(doc.format, doc.text))


def build_trees(docs: Iterable[SourceDocument], *, progress: bool = False) -> BuiltTrees:
    """Parse every document; one that fails is recorded as a rejection and the rest go on."""
    built = BuiltTrees([], [])
    # disable=None: the bar only on a terminal (piped output gets no carriage-return updates)
    for doc in tqdm(docs, desc="trees", unit="doc", disable=None if progress else True):
        try:
            tree = document_tree(doc)
        except (ValueError, RecursionError) as err:
            # ParseError is a ValueError; RecursionError would mean a parser bug on deep input,
            # still only this document's problem.
            reason = f"cannot parse as {doc.format}: {err}"
            built.rejections.append(Rejection(doc.collection, doc.uri, "parse", reason))
            continue
        built.trees.append((doc, tree))
    return built
