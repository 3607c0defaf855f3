"""Retrieval units cut *from* the trees, so passage -> node alignment is exact by construction.

A passage is consecutive content nodes of one section (same nearest heading) packed up to about
`max_words`; it crosses a heading only where a section holds fewer than `min_words` words (it then
joins its neighbour). A node longer than the limit is split at sentence
boundaries (word boundaries if one sentence is itself too long), so a passage may hold part of a
node: its span is then a sub-span of the node's. The reference implementation aligned chunks to
trees by brute-force Levenshtein; here the alignment is simply recorded.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rag_assets.core.corpus.tree import CONTENT, TreeNode

PASSAGE_JOINER = "\n"
# A passage of fewer words joins a neighbour: a Markdown file of 20,000 headings with a few words
# under each became 10,000 passages of 21 characters, each embedded and searched alone.
DEFAULT_MIN_WORDS = 5
# Passages per document at most (the largest real document here, an e-manual, cuts into 547): a
# document over it is left out of the index with the reason, not allowed to swamp it.
DEFAULT_MAX_PASSAGES = 20_000
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"\S+")


@dataclass(frozen=True, slots=True)
class Passage:
    passage_id: str
    doc_id: str
    node_ids: tuple[int, ...]
    spans: tuple[tuple[int, int], ...]  # one (start, end) per node id, into the document text
    heading_path: tuple[str, ...]
    text: str
    word_count: int
    content_hash: str


def _pieces(node: TreeNode, max_words: int) -> list[tuple[int, int, int]]:
    """(start, end, words) pieces of one node, each at most ~max_words, with exact offsets."""
    words = _WORD.findall(node.text)
    if len(words) <= max_words:
        return [(node.span_start, node.span_end, len(words))]
    # Sentence boundaries first: units are (start, end) offsets inside node.text.
    units: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END.finditer(node.text):
        units.append((start, match.start()))
        start = match.end()
    units.append((start, len(node.text)))
    fine: list[tuple[int, int, int]] = []
    for s, e in units:
        count = len(_WORD.findall(node.text[s:e]))
        if count <= max_words:
            fine.append((s, e, count))
            continue
        spans = [m.span() for m in _WORD.finditer(node.text, s, e)]
        for i in range(0, len(spans), max_words):
            chunk = spans[i : i + max_words]
            fine.append((chunk[0][0], chunk[-1][1], len(chunk)))
    pieces: list[tuple[int, int, int]] = []
    for s, e, count in fine:
        if pieces and pieces[-1][2] + count <= max_words:
            ps, _, pc = pieces[-1]
            pieces[-1] = (ps, e, pc + count)
        else:
            pieces.append((s, e, count))
    return [(node.span_start + s, node.span_start + e, c) for s, e, c in pieces]


def _section_of(node: TreeNode, by_id: dict[int, TreeNode]) -> int:
    parent = node.parent_id
    while parent is not None and by_id[parent].kind == CONTENT:
        parent = by_id[parent].parent_id
    return -1 if parent is None else parent


def cut_passages(
    doc_id: str, nodes: Sequence[TreeNode], text: str, max_words: int = 100, min_words: int = DEFAULT_MIN_WORDS
) -> list[Passage]:
    """Greedy packing of each section's content nodes, in document order; then a passage of fewer
    than `min_words` words joins its neighbour (the next section's, the previous one's) while the
    two fit in `max_words`, so a run of near-empty sections does not become one passage each."""
    return merge_small_passages(_packed(doc_id, nodes, text, max_words), min_words, max_words)


def merge_small_passages(passages: Sequence[Passage], min_words: int, max_words: int) -> list[Passage]:
    """Consecutive passages of one document grouped while one side has fewer than `min_words`
    words and together they fit in `max_words` (0: no merging). Packing already fills each
    section up to `max_words`, so groups only ever join passages of neighbouring sections."""
    groups: list[list[Passage]] = []
    for passage in passages:
        if groups:
            words = sum(p.word_count for p in groups[-1])
            small = passage.word_count < min_words or words < min_words
            if small and words + passage.word_count <= max_words:
                groups[-1].append(passage)
                continue
        groups.append([passage])
    return [group[0] if len(group) == 1 else _joined(group) for group in groups]


def _joined(group: Sequence[Passage]) -> Passage:
    """One passage of several consecutive ones: their nodes and spans in order, the heading path
    they share, the first one's id."""
    shared: list[str] = []
    for level in zip(*(p.heading_path for p in group), strict=False):
        if len(set(level)) > 1:
            break
        shared.append(level[0])
    path, body = tuple(shared), PASSAGE_JOINER.join(p.text for p in group)
    return Passage(
        passage_id=group[0].passage_id,
        doc_id=group[0].doc_id,
        node_ids=tuple(n for p in group for n in p.node_ids),
        spans=tuple(s for p in group for s in p.spans),
        heading_path=path,
        text=body,
        word_count=sum(p.word_count for p in group),
        content_hash=_digest(path, body),
    )


def _digest(path: tuple[str, ...], body: str) -> str:
    return hashlib.sha256(("\x1f".join(path) + "\x1e" + body).encode()).hexdigest()[:16]


def _packed(doc_id: str, nodes: Sequence[TreeNode], text: str, max_words: int) -> list[Passage]:
    """Greedy packing of each section's content nodes, in document order."""
    if max_words < 1:
        raise ValueError(f"max_words must be at least 1, got {max_words}")
    by_id = {n.node_id: n for n in nodes}
    passages: list[Passage] = []
    current: list[tuple[int, int, int, int]] = []  # (node_id, start, end, words)
    current_section: int | None = None
    current_path: tuple[str, ...] = ()

    def flush() -> None:
        if not current:
            return
        spans = tuple((s, e) for _, s, e, _ in current)
        body = PASSAGE_JOINER.join(text[s:e] for s, e in spans)
        first_node, first_start = current[0][0], current[0][1]
        node = by_id[first_node]
        piece = first_start - node.span_start  # offset inside the first node: unique per passage
        digest = _digest(current_path, body)
        passages.append(
            Passage(
                passage_id=f"{doc_id}#{first_node}" + (f".{piece}" if piece else ""),
                doc_id=doc_id,
                node_ids=tuple(n for n, _, _, _ in current),
                spans=spans,
                heading_path=current_path,
                text=body,
                word_count=sum(w for _, _, _, w in current),
                content_hash=digest,
            )
        )
        current.clear()

    for node in nodes:
        if node.kind != CONTENT:
            continue
        section = _section_of(node, by_id)
        if section != current_section:
            flush()
            current_section, current_path = section, node.heading_path
        for start, end, words in _pieces(node, max_words):
            if current and sum(w for *_, w in current) + words > max_words:
                flush()
            current.append((node.node_id, start, end, words))
    flush()
    return passages


def collection_passages(
    trees: Mapping[str, tuple[Sequence[TreeNode], str]],
    max_words: int,
    min_words: int = DEFAULT_MIN_WORDS,
    max_passages: int = DEFAULT_MAX_PASSAGES,
) -> tuple[list[Passage], dict[str, int]]:
    """(passages of every document, doc_id -> passage count of each document left out because it
    cut into more than `max_passages`)."""
    kept: list[Passage] = []
    over: dict[str, int] = {}
    for doc_id, (nodes, text) in trees.items():
        cut = cut_passages(doc_id, nodes, text, max_words, min_words)
        if len(cut) > max_passages:
            over[doc_id] = len(cut)
            continue
        kept.extend(cut)
    return kept, over


def too_many_passages(over: Mapping[str, int], max_passages: int) -> dict[str, str]:
    """doc_id -> the reason it was left out of the index, for the documents over the cap."""
    return {
        doc_id: f"{doc_id}: cut into {count} passages, over the limit of {max_passages} per document "
        "(passages config max_passages_per_document)"
        for doc_id, count in over.items()
    }


def passage_columns(passages: Sequence[Passage], collection: str) -> dict[str, list]:
    """Column lists of passages (spans split into starts and ends) for Arrow tables."""
    return {
        "collection": [collection] * len(passages),
        "passage_id": [p.passage_id for p in passages],
        "doc_id": [p.doc_id for p in passages],
        "node_ids": [list(p.node_ids) for p in passages],
        "span_starts": [[s for s, _ in p.spans] for p in passages],
        "span_ends": [[e for _, e in p.spans] for p in passages],
        "heading_path": [list(p.heading_path) for p in passages],
        "text": [p.text for p in passages],
        "word_count": [p.word_count for p in passages],
        "content_hash": [p.content_hash for p in passages],
    }


def passage_problems(passage: Passage, text: str) -> list[str]:
    """Why this passage is not an exact view of the document text (empty when it is)."""
    problems: list[str] = []
    if len(passage.node_ids) != len(passage.spans):
        problems.append(f"{len(passage.node_ids)} node ids but {len(passage.spans)} spans")
    if any(not (0 <= s < e <= len(text)) for s, e in passage.spans):
        problems.append("a span lies outside the document text")
    elif PASSAGE_JOINER.join(text[s:e] for s, e in passage.spans) != passage.text:
        problems.append("text differs from the concatenation of its nodes' text at their spans")
    return problems


def uncovered_content_nodes(nodes: Sequence[TreeNode], passages: Sequence[Passage]) -> list[int]:
    """Content nodes (with text) that no passage covers."""
    covered = {n for p in passages for n in p.node_ids}
    return [n.node_id for n in nodes if n.kind == CONTENT and n.text.strip() and n.node_id not in covered]
