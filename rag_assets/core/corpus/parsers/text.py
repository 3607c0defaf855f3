"""Plain text with underlined headings (reStructuredText / `pydoc_data.topics` style) -> blocks.

Line based and linear: a document is read once, top to bottom, with no recursion, so any text at
all (garbage included) parses; whatever is not recognised is a paragraph.

- A line followed by a line of one repeated character from `*=-~^"+#` (at least 3 long and at
  least 60 % of the title's length) is a heading; an overline + underline pair is a style of its
  own. Levels follow the order in which styles first appear, as in reStructuredText.
- Bullets (`* `, `- `, `+ `, `1. `, `1) `) are list items, nested by their indentation.
- A block indented >= 3 columns past the current margin after a paragraph ending in `:` (or
  indented at all after `::`) is code, and so is a doctest block (`>>>` up to a blank line):
  its lines are kept, dedented.
- Other indented blocks are bodies of the paragraph above them (pydoc's `object.__new__(...)`
  followed by an indented description): they become list items one level deeper, so the tree
  nests the description under the line it describes instead of flattening it or calling prose
  code.
"""

from __future__ import annotations

import re

from rag_assets.core.corpus.blocks import Block, code, heading, list_item, paragraph

_UNDERLINE_CHARS = frozenset('*=-~^"+#')
_BULLET = re.compile(r"(?:[*+-]|(\d{1,3})[.)])[ \t]+(?=\S)")
_MIN_UNDERLINE = 3
_UNDERLINE_RATIO = 0.6
_CODE_INDENT = 3


def _underline(line: str) -> str | None:
    """The character of a line made of one repeated underline character, else None."""
    s = line.strip()
    if len(s) >= _MIN_UNDERLINE and s[0] in _UNDERLINE_CHARS and s.count(s[0]) == len(s):
        return s[0]
    return None


def _heading_at(lines: list[str], i: int) -> tuple[str, tuple[str, bool], int] | None:
    """(title, style, lines used) when a heading starts at line i."""
    n = len(lines)
    over = _underline(lines[i])
    if over is not None:
        title = lines[i + 1].strip() if i + 2 < n else ""
        if title and _underline(lines[i + 1]) is None and _underline(lines[i + 2]) == over:
            return title, (over, True), 3
        return None
    if i + 1 < n:
        under = _underline(lines[i + 1])
        title = lines[i].strip()
        if under is not None and title and len(lines[i + 1].strip()) >= _UNDERLINE_RATIO * len(title):
            return title, (under, False), 2
    return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _bullet(line: str, indent: int, numbered_ok: bool) -> int | None:
    """Column where a bullet item's text starts, if the line is a bullet item."""
    match = _BULLET.match(line, indent)
    if match is None or (match.group(1) is not None and not numbered_ok):
        return None
    return match.end()


def _colon(line: str) -> str:
    s = line.rstrip()
    return "::" if s.endswith("::") else ":" if s.endswith(":") else ""


def _literal_marker(content: str) -> str:
    """reST shows "Example::" as "Example:", and "Example ::" or a lone "::" without the colons."""
    stripped = content.rstrip()
    if not stripped.endswith("::"):
        return content
    body = stripped[:-2]
    return body.rstrip() if not body or body[-1].isspace() else body + ":"


def _code_block(lines: list[str]) -> Block:
    cut = min(_indent(x) for x in lines if x.strip())
    return code("\n".join(x[cut:] for x in lines))


def parse_text(text: str) -> list[Block]:  # noqa: C901 — a line scanner: one branch per kind of line
    """Blocks of an underlined-headings plain-text document in reading order."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").expandtabs(8).split("\n")
    n = len(lines)
    blocks: list[Block] = []
    styles: list[tuple[str, bool]] = []
    containers: list[int] = []  # content columns of open list items and indented bodies
    after = ""  # how the previous prose block ended: "::", ":" or ""
    i = 0
    while i < n:
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        found = _heading_at(lines, i)
        if found is not None:
            title, style, used = found
            if style not in styles:
                styles.append(style)
            blocks.append(heading(title, styles.index(style) + 1))
            containers.clear()
            after = ""
            i += used
            continue
        if _underline(line) is not None:  # a transition line, or a stray underline
            i += 1
            continue
        indent = _indent(line)
        while containers and containers[-1] > indent:
            containers.pop()
        margin = containers[-1] if containers else 0

        start = _bullet(line, indent, numbered_ok=True)
        if line.lstrip().startswith(">>>"):  # a doctest block: up to the next blank line
            j = i + 1
            while j < n and lines[j].strip():
                j += 1
            blocks.append(_code_block(lines[i:j]))
            after = ""
            i = j
            continue
        if start is None and indent > margin and (after == "::" or (after == ":" and indent >= margin + _CODE_INDENT)):
            j = i + 1
            while j < n and (not lines[j].strip() or _indent(lines[j]) > margin):
                j += 1
            while not lines[j - 1].strip():
                j -= 1
            blocks.append(_code_block(lines[i:j]))
            after = ""
            i = j
            continue

        if start is not None:
            containers.append(start)
            parts = [line[start:]]
        else:
            if indent > margin:
                containers.append(indent)  # the indented body of the paragraph above
            parts = [line]
        j = i + 1
        while j < n:
            nxt = lines[j]
            if not nxt.strip() or _underline(nxt) is not None or _heading_at(lines, j) is not None:
                break
            if _bullet(nxt, _indent(nxt), numbered_ok=start is not None) is not None:
                break
            parts.append(nxt)
            j += 1
        content = " ".join(parts)
        content = _literal_marker(content)
        level = len(containers)
        block = list_item(content, level) if level else paragraph(content)
        if block.text:
            blocks.append(block)
        after = _colon(parts[-1])
        i = j
    return blocks


def text_title(text: str) -> str | None:
    """The first underlined heading, else None."""
    for block in parse_text(text):
        if block.kind.value == "heading":
            return block.text
    return None
