"""Retrieval SubTrees (RSTs): what the router sees of one retrieved document.

Reading of the paper's Algorithm 1, implemented exactly:
- every structure node (heading) is visible: the outline is the map the router navigates (an
  outline too long for the router's token budget keeps the headings nearest the lit content,
  see `SubtreeView.fit`);
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
from dataclasses import dataclass, replace

from rag_assets.core.corpus.tree import CONTENT, STRUCTURE, TreeNode, render_line
from rag_assets.core.text import first_words
from rag_assets.core.text import word_count as word_count  # re-exported: views are budgeted in these words

INDENT = "  "
SHORTEN_STEPS = (64, 32, 16, 8, 4)  # words per content line, tried in turn over budget


@dataclass(frozen=True, slots=True)
class SubtreeView:
    """One rendering of a document for one routing call."""

    doc_id: str
    title: str
    nodes: Sequence[TreeNode]
    visible_content_ids: frozenset[int]
    collapsed_heading_ids: frozenset[int]  # headings with content never shown: EXPAND targets
    shown_heading_ids: frozenset[int] | None = None  # None: the whole outline
    content_words: int | None = None  # content lines cut to this many words (+ " …")

    @property
    def visible_ids(self) -> list[int]:
        return [
            n.node_id
            for n in self.nodes
            if (n.kind == STRUCTURE and (self.shown_heading_ids is None or n.node_id in self.shown_heading_ids))
            or n.node_id in self.visible_content_ids
        ]

    def render(self, token_budget: int | None = None, count_tokens: Callable[[str], int] = word_count) -> str:
        """`id: text` per visible node, indented by depth, within `token_budget` if given (see `fit`)."""
        view = self.fit(token_budget, count_tokens)
        return "\n".join(_line(view.nodes[i], view.content_words) for i in view.visible_ids)

    def fit(self, token_budget: int | None, count_tokens: Callable[[str], int] = word_count) -> SubtreeView:
        """This view cut down until its rendering fits `token_budget`; the result names exactly
        the nodes its rendering shows, so the router's grammar and parser can offer those alone.

        In order: (1) an outline that takes over half the budget keeps the headings nearest the
        visible content (its heading path first, then by tree distance, then document order): a
        manual's outline runs to thousands of tokens, and the headings around the hits are the
        ones worth expanding; (2) content lines are shortened to 64, 32, ... 4 words; (3) content
        lines are dropped from the end; (4) the remaining far headings are dropped, nearest kept.
        """
        if token_budget is None or self._fits(self, token_budget, count_tokens):
            return self
        ranked = self._headings_by_distance()
        essential = self._heading_paths()

        def headings(count: int) -> SubtreeView:
            shown = frozenset(ranked[: max(count, len(essential))])
            return replace(self, shown_heading_ids=shown, collapsed_heading_ids=self.collapsed_heading_ids & shown)

        view = self
        outline = "\n".join(render_line(self.nodes[i], INDENT) for i in ranked)
        if count_tokens(outline) > token_budget // 2:
            view = headings(self._most_that_fit(ranked, token_budget // 2, count_tokens))
            if self._fits(view, token_budget, count_tokens):
                return view
        for words in SHORTEN_STEPS:
            view = replace(view, content_words=words)
            if self._fits(view, token_budget, count_tokens):
                return view
        # the most content lines, then the most headings, that fit: a view renders longer with
        # every line it shows, so each is a binary search (a filing's section can show thousands
        # of table rows: trying one count after another renders the view thousands of times)
        content, shortened = sorted(view.visible_content_ids), view

        def with_content(count: int) -> SubtreeView:
            return replace(shortened, visible_content_ids=frozenset(content[:count]))

        count = self._most_views_that_fit(with_content, len(content) - 1, 0, token_budget, count_tokens)
        view = with_content(max(count, 0))
        shown = view.shown_heading_ids if view.shown_heading_ids is not None else frozenset(ranked)
        if count >= 0 or len(shown) - 1 < len(essential):
            return view

        def with_headings(count: int) -> SubtreeView:
            return replace(headings(count), visible_content_ids=frozenset(), content_words=shortened.content_words)

        count = self._most_views_that_fit(with_headings, len(shown) - 1, len(essential), token_budget, count_tokens)
        return with_headings(max(count, len(essential)))

    @classmethod
    def _most_views_that_fit(
        cls,
        view_of: Callable[[int], SubtreeView],
        most: int,
        least: int,
        token_budget: int,
        count_tokens: Callable[[str], int],
    ) -> int:
        """The largest count in [least, most] whose view fits the budget, or least - 1 when none
        does (views grow with their count)."""
        low, high = least - 1, most
        while low < high:
            middle = (low + high + 1) // 2
            if cls._fits(view_of(middle), token_budget, count_tokens):
                low = middle
            else:
                high = middle - 1
        return low

    @staticmethod
    def _fits(view: SubtreeView, token_budget: int, count_tokens: Callable[[str], int]) -> bool:
        return count_tokens(view.render()) <= token_budget

    def _most_that_fit(self, ranked: Sequence[int], budget: int, count_tokens: Callable[[str], int]) -> int:
        """How many of the ranked headings render within `budget` (binary search: outlines are long)."""
        low, high = 0, len(ranked)
        while low < high:
            middle = (low + high + 1) // 2
            lines = sorted(ranked[:middle])
            if count_tokens("\n".join(render_line(self.nodes[i], INDENT) for i in lines)) <= budget:
                low = middle
            else:
                high = middle - 1
        return low

    def _heading_paths(self) -> list[int]:
        """The root and every heading above a visible content node, in document order."""
        path: set[int] = {0}
        for node_id in self.visible_content_ids:
            parent = self.nodes[node_id].parent_id
            while parent is not None:
                if self.nodes[parent].kind == STRUCTURE:
                    path.add(parent)
                parent = self.nodes[parent].parent_id
        return sorted(path)

    def _headings_by_distance(self) -> list[int]:
        """Every heading, the heading paths of the visible content first, then the others by
        distance from them in the heading tree (ties in document order). Every prefix of this
        order holds each heading's parent heading, so a cut outline still reads as a tree."""
        below: dict[int, list[int]] = {}
        for n in self.nodes:
            if n.kind == STRUCTURE and n.parent_id is not None:
                below.setdefault(_parent_heading(self.nodes, n), []).append(n.node_id)
        order = self._heading_paths()
        seen = set(order)
        frontier = order
        while frontier:
            following = sorted(c for h in frontier for c in below.get(h, ()) if c not in seen)
            seen.update(following)
            order += following
            frontier = following
        return order


def _parent_heading(nodes: Sequence[TreeNode], node: TreeNode) -> int:
    parent = node.parent_id
    while parent is not None and nodes[parent].kind != STRUCTURE:
        parent = nodes[parent].parent_id
    return 0 if parent is None else parent


def _shorten(node: TreeNode, words: int) -> str:
    text = first_words(node.text.replace("\n", " ⏎ "), words, mark_cut=True)
    return f"{INDENT * node.depth}{node.node_id}: {text}"


def _line(node: TreeNode, content_words: int | None) -> str:
    if node.kind == CONTENT and content_words is not None:
        return _shorten(node, content_words)
    return render_line(node, INDENT)


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

    def fit(
        self, view: SubtreeView, token_budget: int | None, count_tokens: Callable[[str], int] = word_count
    ) -> SubtreeView:
        """`view.fit(...)`, and the content it cut counts as never shown: expanding its heading
        later shows it (the router never saw it, so it must not be lost)."""
        fitted = view.fit(token_budget, count_tokens)
        self.seen -= view.visible_content_ids - fitted.visible_content_ids
        return fitted

    def full_view(self) -> SubtreeView:
        """Every content node at once (the 'no router' and 'no structure' ablations)."""
        return SubtreeView(self.doc_id, self.title, self.nodes, frozenset(self.section), frozenset())
