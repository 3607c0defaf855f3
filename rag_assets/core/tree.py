"""Document Structure Trees: headings are structure nodes, everything else is content.

`build_tree` turns a parser's block stream into nodes in document order. Node 0 is the root (the
document title). The document's *normalised text* is the node texts joined by a blank line, so
every node's char span into it is exact by construction and the checks can verify it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from rag_assets.core.blocks import Block, BlockKind, collapse_spaces

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


class _Builder:
    def __init__(self, title: str) -> None:
        self.nodes: list[TreeNode] = []
        self.offset = 0
        root = self._add(None, STRUCTURE, "title", title, (title,))
        # (heading level, node) from the root down; the root has level 0.
        self.sections: list[tuple[int, TreeNode]] = [(0, root)]
        self.intro: TreeNode | None = None  # paragraph that may introduce the next list
        self.items: list[tuple[int, TreeNode]] = []  # open list items of the current list run

    def _add(
        self, parent: TreeNode | None, kind: str, block: str, text: str, path: tuple[str, ...]
    ) -> TreeNode:
        start = self.offset
        node = TreeNode(
            node_id=len(self.nodes),
            parent_id=None if parent is None else parent.node_id,
            kind=kind,
            block=block,
            depth=0 if parent is None else parent.depth + 1,
            text=text,
            heading_path=path,
            span_start=start,
            span_end=start + len(text),
        )
        self.nodes.append(node)
        self.offset = node.span_end + len(NODE_SEPARATOR)
        return node

    @property
    def section(self) -> TreeNode:
        return self.sections[-1][1]

    def add_heading(self, text: str, level: int) -> None:
        level = max(level, 1)
        while self.sections[-1][0] >= level:
            self.sections.pop()
        parent = self.section
        node = self._add(parent, STRUCTURE, BlockKind.HEADING.value, text, parent.heading_path + (text,))
        self.sections.append((level, node))
        self.intro, self.items = None, []

    def add_content(self, block: Block, max_list_nesting: int) -> None:
        if block.kind is BlockKind.LIST_ITEM:
            level = min(max(block.level, 1), max_list_nesting)
            while self.items and self.items[-1][0] >= level:
                self.items.pop()
            parent = self.items[-1][1] if self.items else (self.intro or self.section)
            node = self._add(parent, CONTENT, block.kind.value, block.text, self.section.heading_path)
            self.items.append((level, node))
            return
        node = self._add(self.section, CONTENT, block.kind.value, block.text, self.section.heading_path)
        self.items = []
        self.intro = node if block.kind is BlockKind.PARAGRAPH else None


def build_tree(
    title: str, blocks: Iterable[Block], *, max_list_nesting: int = DEFAULT_MAX_LIST_NESTING
) -> DocumentTree:
    """Nest a block stream into a Document Structure Tree.

    Headings nest by level (a skipped level simply nests one deeper); paragraphs, table rows and
    code hang under the current heading; a list item hangs under its parent item, else under the
    paragraph that introduced its list, else under the heading. Blocks with no text are dropped.
    A first heading that repeats the title is the root itself, not a child of it.
    """
    title = collapse_spaces(title) or "Untitled"
    builder = _Builder(title)
    seen_heading = False
    for block in blocks:
        if not block.text:
            continue
        if block.kind is BlockKind.HEADING:
            if not seen_heading and not builder.nodes[1:] and block.text.casefold() == title.casefold():
                seen_heading = True
                continue
            seen_heading = True
            builder.add_heading(block.text, block.level)
        else:
            builder.add_content(block, max_list_nesting)
    return DocumentTree(title=title, nodes=builder.nodes)


def render_line(node: TreeNode, indent: str = "  ") -> str:
    """`id: text` indented by depth; a code block's lines are joined so one node is one line."""
    return f"{indent * node.depth}{node.node_id}: {node.text.replace(chr(10), ' ⏎ ')}"


def render_tree(nodes: Sequence[TreeNode], indent: str = "  ") -> str:
    return "\n".join(render_line(node, indent) for node in nodes)


def tree_problems(nodes: Sequence[TreeNode], text: str) -> list[str]:
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
