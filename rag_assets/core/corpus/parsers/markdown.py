"""Markdown (CommonMark + tables) -> blocks, via the Rust `markdown_it_pyrs` parser.

The Rust side builds the syntax tree; the Python side only visits block nodes, with an explicit
stack (never recursion) so 10,000 nested quotes or lists cannot overflow anything. Inline text is
gathered with the Rust `walk()` iterator, which is much cheaper than visiting inline nodes here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence

from markdown_it_pyrs import MarkdownIt, Node

from rag_assets.core.corpus.blocks import Block, BlockKind, code, collapse_spaces, new_block, table_row
from rag_assets.core.corpus.parsers.html import parse_html
from rag_assets.core.corpus.parsers.text import parse_text

_MD = MarkdownIt("commonmark").enable("table")
# markdown-it-pyrs 0.4.0 (markdown-it 0.6.0) panics on a `[` followed by an unmatched backtick
# ("see [`x"), in its code-span pairing. The same CommonMark rules without code spans do not;
# a document that panics is re-read with them, its code spans then kept as literal backticks.
_MD_NO_CODE_SPANS = MarkdownIt("zero").enable_many(
    [
        "blockquote",
        "code",
        "fence",
        "heading",
        "hr",
        "lheading",
        "list",
        "paragraph",
        "reference",
        "autolink",
        "emphasis",
        "entity",
        "escape",
        "image",
        "link",
        "newline",
        "html_block",
        "html_inline",
        "table",
    ]
)

# Deep nesting is where the Rust parser is fragile: freeing a syntax tree ~40,000 nodes deep, or
# walking one ~150,000 deep, overflows the C stack (a segfault, not an exception), and building
# one from ~40,000 nested emphasis spans does too. Nesting depth is bounded from the text alone:
# a container needs at least one prefix character on the line that opens it (list levels need two
# columns, a tab is up to four), an inline span at least one delimiter within its paragraph.
_SAFE_PREFIX = 1_000  # longer container prefixes: visit and free the tree without recursion
_MAX_PREFIX = 40_000  # longer still: not Markdown anyone writes; read as plain text (also fast)
_MAX_DELIMITERS = 2_000  # per paragraph; beyond, its `*`, `_` and `[` are escaped to literals
# A line starting with a long prefix: matched at the start of the text, else searched for after a
# newline. Exactly what `^` with re.MULTILINE matches, but the literal "\n" lets `re` skip from
# newline to newline instead of trying every position (7x faster on a 4 KB article).
_LONG_PREFIX = re.compile(r"[ \t>*+\-0-9.)]{" + str(_SAFE_PREFIX) + "}")
_LONG_PREFIX_LINE = re.compile(r"\n[ \t>*+\-0-9.)]{" + str(_SAFE_PREFIX) + "}")
_HUGE_PREFIX = re.compile(r"[ \t>*+\-0-9.)]{" + str(_MAX_PREFIX) + "}")
_HUGE_PREFIX_LINE = re.compile(r"\n[ \t>*+\-0-9.)]{" + str(_MAX_PREFIX) + "}")
_PARAGRAPH_BREAK = re.compile(r"(\n[ \t]*\n)")
_DELIMITER = re.compile(r"([*_\[])")

# Nodes that are blocks; anything else met where a block was expected is inline content (a tight
# list item's hidden paragraph shows up as its inline children directly under the item).
_BLOCK_NAMES = frozenset(
    {
        "paragraph",
        "heading",
        "lheading",
        "bullet_list",
        "ordered_list",
        "list_item",
        "blockquote",
        "table",
        "fence",
        "code_block",
        "html_block",
        "hr",
        "thead",
        "tbody",
        "trow",
        "tcell",
    }
)
_TEXT_NAMES = frozenset({"text", "text_special"})
_BREAK_NAMES = frozenset({"softbreak", "hardbreak"})
_HEADING, _PARAGRAPH, _ITEM = BlockKind.HEADING, BlockKind.PARAGRAPH, BlockKind.LIST_ITEM


def _descendants(node: Node) -> Iterator[Node]:
    """`node.walk(include_self=False)` without recursion, for trees too deep for the Rust walk."""
    stack = list(reversed(node.children))
    while stack:
        child = stack.pop()
        yield child
        kids = child.children
        if kids:
            stack.extend(reversed(kids))


def _dismantle(root: Node) -> None:
    """Empty every children list top-down, so that freeing the nodes never recurses."""
    stack = [root]
    while stack:
        node = stack.pop()
        kids = node.children
        if kids:
            stack.extend(kids)
            node.children = []


def _defuse(text: str) -> str:
    """Escape emphasis and link delimiters in paragraphs with enough of them to nest too deep."""
    chunks = _PARAGRAPH_BREAK.split(text)
    for index, chunk in enumerate(chunks):
        if chunk.count("*") + chunk.count("_") + chunk.count("[") >= _MAX_DELIMITERS:
            chunks[index] = _DELIMITER.sub(r"\\\1", chunk)
    return "".join(chunks)


def _gather(nodes: Iterable[Node], parts: list[str], walk: Callable[..., Iterable[Node]] | None) -> None:
    """Append the text of inline `nodes` to `parts`; with `walk`, the text below them too.

    Text and breaks are leaves, so an emphasis, link or code span contributes exactly its
    descendants' text, gathered in one flat `walk` (one level of recursion at most). Most inline
    content is a lone text node, which this reads without starting a walk at all.
    """
    append = parts.append
    texts, breaks = _TEXT_NAMES, _BREAK_NAMES
    for node in nodes:
        name = node.name
        if name in texts:
            append(node.meta["content"])
        elif name in breaks:
            append(" ")
        elif walk is not None:
            _gather(walk(node, include_self=False), parts, None)


def _group(children: list[Node]) -> list[Node | list[Node]]:
    """Children in order, each run of consecutive inline nodes gathered into one list."""
    out: list[Node | list[Node]] = []
    run: list[Node] = []
    for child in children:
        if child.name in _BLOCK_NAMES:
            if run:
                out.append(run)
                run = []
            out.append(child)
        else:
            run.append(child)
    if run:
        out.append(run)
    return out


def _is_panic(err: BaseException) -> bool:
    # pyo3's PanicException derives from BaseException and is not importable by name.
    return type(err).__name__ == "PanicException"


def _syntax_tree(text: str) -> Node | None:
    """The Markdown syntax tree, working around parser panics; None if it cannot be had."""
    try:
        return _MD.tree(text)
    except BaseException as err:
        if not _is_panic(err):
            raise
    try:
        return _MD_NO_CODE_SPANS.tree(text)
    except BaseException as err:
        if not _is_panic(err):
            raise
    return None


def parse_markdown(text: str) -> list[Block]:
    """Blocks of a Markdown document in reading order.

    A list item's text is its leading paragraph(s); lists nested in it become items one level
    deeper; paragraphs after a nested list stay at the item's level (a continuation item). Block
    quotes are transparent. Raw HTML blocks are parsed as HTML. Thematic breaks are dropped.
    Never raises and never overflows the stack, whatever the input: see `_SAFE_PREFIX` and
    `_MD_NO_CODE_SPANS` for what pathological documents get instead.
    """
    deep = False
    if _LONG_PREFIX.match(text) or _LONG_PREFIX_LINE.search(text):
        if _HUGE_PREFIX.match(text) or _HUGE_PREFIX_LINE.search(text):
            return parse_text(text)
        deep = True
    if text.count("*") + text.count("_") + text.count("[") >= _MAX_DELIMITERS:
        text = _defuse(text)
    root = _syntax_tree(text)
    if root is None:  # the Rust parser failed twice: read it as plain text rather than lose it
        return parse_text(text)
    if not deep:
        return _blocks(root, Node.walk)
    try:
        return _blocks(root, _walk_safely)
    finally:
        _dismantle(root)


def _walk_safely(node: Node, include_self: bool = True) -> Iterator[Node]:
    if include_self:
        yield node
    yield from _descendants(node)


def _blocks(root: Node, walk: Callable[..., Iterable[Node]]) -> list[Block]:  # noqa: C901 — one branch per Markdown block node, on the hot path (no per-node method calls)
    """The blocks under a syntax tree's root; `walk` is `Node.walk` or its recursion-free twin.

    This is the hot path of tree building, so it minds Python's costs: every `Node` attribute
    (`name`, `children`, `meta`) is converted from Rust on each access (~0.3 us), so each is read
    once per node; containers are visited with a stack of iterators (no tuple per node); and
    blocks are built with `new_block` from text normalised here, not through `blocks.paragraph`
    and co., which would normalise it a second time.
    """

    def inline_text(nodes: Sequence[Node]) -> str:
        if len(nodes) == 1:  # most often a lone text node: read it without gathering
            only = nodes[0]
            if only.name == "text":
                return collapse_spaces(only.meta["content"])
        parts: list[str] = []
        _gather(nodes, parts, walk)
        return collapse_spaces("".join(parts))

    blocks: list[Block] = []
    append = blocks.append
    # One (children not yet visited, list depth) per open container, innermost last. A container
    # met in the loop pushes its children and breaks out to visit them first; its parent's
    # iterator resumes where it stopped once they are done: reading order, without recursion.
    stack: list[tuple[Iterator[Node | list[Node]], int]] = [(iter(root.children), 0)]
    while stack:
        nodes, depth = stack[-1]
        prose = _ITEM if depth else _PARAGRAPH  # paragraphs inside a list item continue it
        for node in nodes:
            if isinstance(node, list):  # inline run outside a paragraph node
                content = inline_text(node)
                if content:
                    append(new_block(prose, content, depth))
                continue
            name = node.name
            if name == "paragraph":
                content = inline_text(node.children)
                if content:
                    append(new_block(prose, content, depth))
            elif name == "heading" or name == "lheading":
                content = inline_text(node.children)
                if content:
                    append(new_block(_HEADING, content, node.meta["level"]))
            elif name == "bullet_list" or name == "ordered_list":
                stack.append((iter(node.children), depth + 1))
                break
            elif name == "list_item":
                # The item's text is its leading paragraphs and inline runs (a tight item's
                # hidden paragraph is its inline children), up to its first other block. A " "
                # around paragraphs keeps their words apart, as joining collapsed texts would.
                children = node.children
                parts: list[str] = []
                index = 0
                for child in children:
                    child_name = child.name
                    if child_name == "text":  # the common tight item: read without gathering
                        parts.append(child.meta["content"])
                    elif child_name == "paragraph":
                        parts.append(" ")
                        _gather(child.children, parts, walk)
                        parts.append(" ")
                    elif child_name in _BLOCK_NAMES:
                        break
                    else:
                        _gather((child,), parts, walk)
                    index += 1
                content = collapse_spaces("".join(parts))
                if content:
                    append(new_block(_ITEM, content, depth))
                if index < len(children):  # nested lists, code...: at the item's own depth
                    stack.append((iter(_group(children[index:])), depth))
                    break
            elif name == "blockquote":
                stack.append((iter(_group(node.children)), depth))
                break
            elif name == "table":
                for row in walk(node):
                    if row.name == "trow":
                        block = table_row([inline_text(cell.children) for cell in row.children])
                        if block.text:
                            append(block)
            elif name == "fence" or name == "code_block":
                block = code(node.meta.get("content", ""))
                if block.text:
                    append(block)
            elif name == "html_block":
                blocks.extend(parse_html(node.meta.get("content", "")))
            elif name != "hr":  # an unexpected block node (a future plugin): keep its text
                content = inline_text((node,))
                if content:
                    append(new_block(_PARAGRAPH, content, 0))
        else:  # every node of the innermost container is done
            stack.pop()
    return blocks


def markdown_title(text: str) -> str | None:
    """The first level-1 heading, else the first heading of any level, else None."""
    first: str | None = None
    for block in parse_markdown(text):
        if block.kind is _HEADING:
            if block.level == 1:
                return block.text
            first = first or block.text
    return first
