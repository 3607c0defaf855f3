"""Retrieval SubTrees (RSTs): what the router sees of one retrieved document.

Reading of the paper's Algorithm 1, implemented exactly:
- every structure node (heading) is always visible: the outline is the map the router navigates;
- for each retrieved (hit) content node h, the lit content is
  1. h's content siblings (the content children of h's parent, h included),
  2. h's content ancestors up to, not including, the first heading above it,
  3. the content descendants of every node of (1);
- `expand(heading)` shows the heading's own content (content nodes whose nearest heading it is)
  that has not been shown before; sub-headings stay visible and can be expanded in turn.
A `DocumentRouting` remembers what was shown, so no content node is ever shown twice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from rag_assets.core.tree import CONTENT, STRUCTURE, TreeNode, render_line

INDENT = "  "
_SHORTEN_STEPS = (64, 32, 16, 8, 4)


def word_count(text: str) -> int:
    return len(text.split())


@dataclass(frozen=True, slots=True)
class SubtreeView:
    """One rendering of a document for one routing call."""

    doc_id: str
    title: str
    nodes: Sequence[TreeNode]
    visible_content_ids: frozenset[int]
    collapsed_heading_ids: frozenset[int]  # headings with content never shown: EXPAND targets

    @property
    def visible_ids(self) -> list[int]:
        return [n.node_id for n in self.nodes if n.kind == STRUCTURE or n.node_id in self.visible_content_ids]

    def render(self, token_budget: int | None = None, count_tokens: Callable[[str], int] = word_count) -> str:
        """`id: text` per visible node, indented by depth, within `token_budget` if given.

        Over budget, content lines are first shortened (to 64, 32, ... 4 words + " …"), then
        dropped from the end; heading lines are never touched, so the outline always survives.
        """
        visible = [self.nodes[i] for i in self.visible_ids]
        lines = [render_line(n, INDENT) for n in visible]
        if token_budget is None or count_tokens("\n".join(lines)) <= token_budget:
            return "\n".join(lines)
        for limit in _SHORTEN_STEPS:
            lines = [_shorten(n, limit) if n.kind == CONTENT else render_line(n, INDENT) for n in visible]
            if count_tokens("\n".join(lines)) <= token_budget:
                return "\n".join(lines)
        keep = [n.kind == STRUCTURE for n in visible]
        content_positions = [i for i, n in enumerate(visible) if n.kind == CONTENT]
        for count in range(len(content_positions), -1, -1):
            for i in content_positions:
                keep[i] = i in content_positions[:count]
            text = "\n".join(line for line, k in zip(lines, keep) if k)
            if count_tokens(text) <= token_budget:
                return text
        return text


def _shorten(node: TreeNode, words: int) -> str:
    parts = node.text.replace("\n", " ⏎ ").split()
    text = " ".join(parts[:words]) + (" …" if len(parts) > words else "")
    return f"{INDENT * node.depth}{node.node_id}: {text}"


class DocumentRouting:
    """One document's tree plus the content already shown to the router."""

    def __init__(self, doc_id: str, nodes: Sequence[TreeNode]) -> None:
        if not nodes or nodes[0].parent_id is not None:
            raise ValueError(f"document {doc_id!r}: a tree needs its root as node 0")
        self.doc_id = doc_id
        self.nodes = list(nodes)
        self.children: dict[int, list[int]] = {n.node_id: [] for n in nodes}
        for n in nodes:
            if n.parent_id is not None:
                self.children[n.parent_id].append(n.node_id)
        self.section: dict[int, int] = {}  # content node -> its nearest heading
        for n in nodes:
            if n.kind == CONTENT:
                parent = self.nodes[n.parent_id]
                self.section[n.node_id] = parent.node_id if parent.kind == STRUCTURE else self.section[parent.node_id]
        self.seen: set[int] = set()

    @property
    def title(self) -> str:
        return self.nodes[0].text

    def _content_descendants(self, node_id: int) -> list[int]:
        out, stack = [], list(reversed(self.children[node_id]))
        while stack:
            child = stack.pop()
            if self.nodes[child].kind == CONTENT:
                out.append(child)
                stack.extend(reversed(self.children[child]))
        return out

    def lit_content(self, hit_ids: Iterable[int]) -> set[int]:
        """Algorithm 1's lit set for these hits (content hits only; others are ignored)."""
        lit: set[int] = set()
        for hit in hit_ids:
            if not (0 <= hit < len(self.nodes)) or self.nodes[hit].kind != CONTENT:
                continue
            parent = self.nodes[hit].parent_id
            siblings = [c for c in self.children[parent] if self.nodes[c].kind == CONTENT]
            lit.update(siblings)
            ancestor = self.nodes[parent]
            while ancestor.kind == CONTENT:
                lit.add(ancestor.node_id)
                ancestor = self.nodes[ancestor.parent_id]
            for sibling in siblings:
                lit.update(self._content_descendants(sibling))
        return lit

    def _view(self, shown: set[int]) -> SubtreeView:
        self.seen |= shown
        collapsed = {heading for content, heading in self.section.items() if content not in self.seen}
        return SubtreeView(self.doc_id, self.title, self.nodes, frozenset(shown), frozenset(collapsed))

    def light(self, hit_ids: Iterable[int]) -> SubtreeView:
        """The first view of the document: the retrieved nodes and their context."""
        return self._view(self.lit_content(hit_ids) - self.seen)

    def expand(self, heading_id: int) -> SubtreeView:
        """The heading's own content not shown before (raises for a node that is not a heading)."""
        if not (0 <= heading_id < len(self.nodes)) or self.nodes[heading_id].kind != STRUCTURE:
            raise ValueError(f"document {self.doc_id!r}: node {heading_id} is not a heading")
        own = {c for c, heading in self.section.items() if heading == heading_id}
        return self._view(own - self.seen)

    def full_view(self) -> SubtreeView:
        """Every content node at once (the 'no router' and 'no structure' ablations)."""
        return SubtreeView(self.doc_id, self.title, self.nodes, frozenset(self.section), frozenset())
