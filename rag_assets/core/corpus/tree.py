"""Document Structure Trees: headings are structure nodes, everything else is content.

`build_tree` turns a parser's block stream into nodes in document order. Node 0 is the root (the
document title). The document's *normalised text* is the node texts joined by a blank line, so
every node's char span into it is exact by construction and the checks can verify it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from rag_assets.core.corpus.blocks import Block, BlockKind, collapse_spaces, frozen_factory

STRUCTURE = "structure"
CONTENT = "content"
NODE_SEPARATOR = "\n\n"
# Lists nested deeper than this are flattened into siblings at this depth: nothing is lost, and a
# pathological document (10,000 nested lists) cannot produce a tree no router could render.
DEFAULT_MAX_LIST_NESTING = 16


@dataclass(frozen=True, slots=True)
class TreeNode:
    node_id: int
    parent_id: int | None
    kind: str  # STRUCTURE | CONTENT
    block: str  # "title" for the root, else a BlockKind value
    depth: int
    text: str
    heading_path: tuple[str, ...]
    span_start: int
    span_end: int
    # 1-based pages of a paginated source (PDF, Word) the node lies on; 0 where unknown. The root
    # spans the document's pages; a heading has the page it is printed on.
    page_start: int = 0
    page_end: int = 0

    @property
    def pages(self) -> str:
        """'p. 3', 'pp. 3-4', or '' without page numbers: how citations and traces show them."""
        return page_label(self.page_start, self.page_end)


def page_label(page_start: int, page_end: int) -> str:
    """'p. 3', 'pp. 3-4', or '' without page numbers (page_start 0)."""
    if not page_start:
        return ""
    if page_end > page_start:
        return f"pp. {page_start}-{page_end}"
    return f"p. {page_start}"


@dataclass(slots=True)
class DocumentTree:
    title: str
    nodes: list[TreeNode] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The normalised document text the spans point into."""
        return NODE_SEPARATOR.join(node.text for node in self.nodes)

    def children(self) -> dict[int, list[int]]:
        kids: dict[int, list[int]] = {node.node_id: [] for node in self.nodes}
        for node in self.nodes:
            if node.parent_id is not None:
                kids[node.parent_id].append(node.node_id)
        return kids

    @property
    def content_count(self) -> int:
        return sum(1 for node in self.nodes if node.kind == CONTENT)


# The build loop is the hot path of tree building (a 4 KB article has ~40 nodes), so it is one
# function over local variables rather than a builder object: no method calls or property lookups
# per block, block kinds compared by identity (a `BlockKind` member's `.value` runs Python code in
# `enum`), and nodes made by `_new_node`, TreeNode(*fields) without a frozen dataclass's
# per-field `object.__setattr__` (see `frozen_factory`).
_new_node: Callable[..., TreeNode] = frozen_factory(TreeNode)
_HEADING, _PARAGRAPH, _LIST_ITEM, _TABLE_ROW = (
    BlockKind.HEADING,
    BlockKind.PARAGRAPH,
    BlockKind.LIST_ITEM,
    BlockKind.TABLE_ROW,
)
_BLOCK_NAMES = {kind: kind.value for kind in BlockKind}  # a str-Enum hashes as its str value: cheap
_SEPARATOR_LENGTH = len(NODE_SEPARATOR)


def build_tree(
    title: str, blocks: Iterable[Block], *, max_list_nesting: int = DEFAULT_MAX_LIST_NESTING
) -> DocumentTree:
    """Nest a block stream into a Document Structure Tree.

    Headings nest by level (a skipped level simply nests one deeper); paragraphs, table rows and
    code hang under the current heading; a list item hangs under its parent item, else under the
    paragraph that introduced its list, else under the heading; a table row with a level (1)
    hangs under the paragraph that is its table's node (a caption or header line). Blocks with no text are dropped.
    A first heading that repeats the title (alone or before a parenthesis: the title of a PDF
    followed by its file's name) is the root itself, not a child of it.
    """
    title = collapse_spaces(title) or "Untitled"
    root = _new_node(0, None, STRUCTURE, "title", 0, title, (title,), 0, len(title))
    nodes = [root]
    add = nodes.append
    # Each node starts where the previous one ended plus the separator: spans are exact by
    # construction over `DocumentTree.text`.
    offset = len(title) + _SEPARATOR_LENGTH
    # Open headings from the root down as (level, node); the root has level 0. `section` is the
    # last of them, the parent of every non-item block.
    sections: list[tuple[int, TreeNode]] = [(0, root)]
    section = root
    intro: TreeNode | None = None  # paragraph that may introduce the next list
    items: list[tuple[int, TreeNode]] = []  # open list items of the current list run, (level, node)
    merge_title = True  # until the first heading or content node: a heading == title is the root
    folded_title = title.casefold()
    for block in blocks:
        text = block.text
        if not text:
            continue
        kind = block.kind
        end = offset + len(text)
        if kind is _HEADING:
            if merge_title:
                merge_title = False
                # the title itself, or the title a PDF's file name follows ("FORM 10-K (ACME 2018 10K)")
                if folded_title == text.casefold() or folded_title.startswith(text.casefold() + " ("):
                    continue
            level = max(block.level, 1)
            while sections[-1][0] >= level:
                sections.pop()
            parent = sections[-1][1]
            section = _new_node(
                len(nodes),
                parent.node_id,
                STRUCTURE,
                "heading",
                parent.depth + 1,
                text,
                (*parent.heading_path, text),
                offset,
                end,
                block.page_start,
                block.page_end,
            )
            add(section)
            sections.append((level, section))
            intro, items = None, []
        elif kind is _LIST_ITEM or (kind is _TABLE_ROW and block.level):
            merge_title = False
            level = min(max(block.level, 1), max_list_nesting)
            while items and items[-1][0] >= level:
                items.pop()
            parent = items[-1][1] if items else (intro or section)
            node = _new_node(
                len(nodes),
                parent.node_id,
                CONTENT,
                _BLOCK_NAMES[kind],
                parent.depth + 1,
                text,
                section.heading_path,
                offset,
                end,
                block.page_start,
                block.page_end,
            )
            add(node)
            items.append((level, node))
        else:
            merge_title = False
            node = _new_node(
                len(nodes),
                section.node_id,
                CONTENT,
                _BLOCK_NAMES[kind],
                section.depth + 1,
                text,
                section.heading_path,
                offset,
                end,
                block.page_start,
                block.page_end,
            )
            add(node)
            items = []
            intro = node if kind is _PARAGRAPH else None
        offset = end + _SEPARATOR_LENGTH
    first_page = min((n.page_start for n in nodes if n.page_start), default=0)
    if first_page:
        nodes[0] = replace(root, page_start=first_page, page_end=max(n.page_end for n in nodes))
    return DocumentTree(title=title, nodes=nodes)


def render_line(node: TreeNode, indent: str = "  ") -> str:
    """`id: text` indented by depth; a code block's lines are joined so one node is one line."""
    return f"{indent * node.depth}{node.node_id}: {node.text.replace(chr(10), ' ⏎ ')}"


def render_tree(nodes: Sequence[TreeNode], indent: str = "  ") -> str:
    return "\n".join(render_line(node, indent) for node in nodes)


def tree_problems(nodes: Sequence[TreeNode], text: str) -> list[str]:  # noqa: C901 — one plain check per tree invariant
    """Every way these nodes fail to be a valid tree over `text` (empty list when valid).

    Used by the blocking asset checks and by the property tests, so the rules live here once.
    """
    problems: list[str] = []
    roots = [n for n in nodes if n.parent_id is None]
    if len(roots) != 1:
        problems.append(f"expected exactly one root, found {len(roots)}")
    by_id = {n.node_id: n for n in nodes}
    if sorted(by_id) != list(range(len(nodes))):
        problems.append("node ids are not 0..n-1 in document order")
    if nodes and (nodes[0].parent_id is not None or nodes[0].kind != STRUCTURE):
        problems.append("node 0 is not a structure root")
    previous_end = 0
    for node in sorted(nodes, key=lambda n: n.node_id):
        where = f"node {node.node_id}"
        if node.parent_id is not None:
            parent = by_id.get(node.parent_id)
            if parent is None:
                problems.append(f"{where}: parent {node.parent_id} does not exist")
            else:
                # Parents precede children in document order, which also rules out cycles.
                if parent.node_id >= node.node_id:
                    problems.append(f"{where}: parent {parent.node_id} does not precede it (cycle?)")
                if node.kind == STRUCTURE and parent.kind != STRUCTURE:
                    problems.append(f"{where}: heading under content node {parent.node_id}")
                if node.depth != parent.depth + 1:
                    problems.append(f"{where}: depth {node.depth} != parent depth + 1")
        if node.kind not in (STRUCTURE, CONTENT):
            problems.append(f"{where}: unknown kind {node.kind!r}")
        if node.kind == CONTENT and not node.text.strip():
            problems.append(f"{where}: empty content node")
        if not (0 <= node.span_start <= node.span_end <= len(text)):
            problems.append(f"{where}: span [{node.span_start}, {node.span_end}) outside the text")
        elif text[node.span_start : node.span_end] != node.text:
            problems.append(f"{where}: text differs from the document text at its span")
        if node.span_start < previous_end:
            problems.append(f"{where}: span starts before the previous node ends")
        previous_end = max(previous_end, node.span_end)
        if len(problems) > 50:
            problems.append("... (more problems not listed)")
            break
    return problems
