"""Each PDF engine's output as the same two lists: its headings (page, level, text) and its text
blocks (page, text) in its reading order, so one scoring serves every engine.

- opendataloader-pdf's JSON: elements in reading order under `kids` (lists under `list items`,
  tables under `rows` / `cells`, each possibly with `kids` of its own); an element's text is its
  `content`, a heading's level its `heading level`, its page its `page number`;
- markdown pages (pymupdf4llm's `page_chunks`): a heading is a line opening with 1 to 6 `#`, a
  block is what lies between blank lines; emphasis marks (`**`, `_`) are not text;
- this project's tree: structure nodes are headings at their depth, every node below the root a
  block.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.heading_truth import Heading
from rag_assets.core.corpus.parsers.pdf import parse_pdf
from rag_assets.core.corpus.parsers.pdf_extract import extract_pdf
from rag_assets.core.corpus.tree import STRUCTURE, DocumentTree, build_tree

_MARKDOWN_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
# emphasis runs that open or close a word (a `_` inside a name stays)
_EMPHASIS = re.compile(r"(?<!\w)[*_`]+|[*_`]+(?!\w)")
_NESTED = ("kids", "list items", "rows", "cells")


@dataclass(frozen=True)
class TextBlock:
    page: int  # 1-based; 0 where the engine gives none
    text: str


def _elements(element: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """`element` and everything nested in it, depth first in the engine's order."""
    yield element
    for name in _NESTED:
        for child in element.get(name) or ():
            if isinstance(child, dict):
                yield from _elements(child)


def _content(element: dict[str, Any]) -> str:
    content = element.get("content")
    return " ".join(content.split()) if isinstance(content, str) else ""


def opendataloader_headings(document: dict[str, Any]) -> list[Heading]:
    """The headings of an opendataloader-pdf JSON document."""
    return [
        Heading(int(e.get("page number") or 0), int(e.get("heading level") or 1), _content(e))
        for e in _elements(document)
        if e.get("type") == "heading" and _content(e)
    ]


def opendataloader_blocks(document: dict[str, Any]) -> list[TextBlock]:
    """Every element with text, in the document's reading order."""
    return [TextBlock(int(e.get("page number") or 0), _content(e)) for e in _elements(document) if _content(e)]


def _plain(markdown: str) -> str:
    return " ".join(_EMPHASIS.sub("", markdown).split())


def markdown_headings(pages: list[str]) -> list[Heading]:
    """The `#` headings of markdown pages (page i+1 is `pages[i]`), their `#` count as level."""
    headings = []
    for number, page in enumerate(pages, start=1):
        for line in page.splitlines():
            found = _MARKDOWN_HEADING.match(line.strip())
            if found and _plain(found.group(2)):
                headings.append(Heading(number, len(found.group(1)), _plain(found.group(2))))
    return headings


def _line_text(line: str) -> str:
    """A markdown line without its heading marks."""
    found = _MARKDOWN_HEADING.match(line.strip())
    return found.group(2) if found else line


def markdown_blocks(pages: list[str]) -> list[TextBlock]:
    """The blank-line separated blocks of markdown pages, heading marks and emphasis removed."""
    blocks = []
    for number, page in enumerate(pages, start=1):
        for chunk in re.split(r"\n\s*\n", page):
            text = _plain(" ".join(_line_text(line) for line in chunk.splitlines()))
            if text:
                blocks.append(TextBlock(number, text))
    return blocks


def read_tree(path: Path) -> DocumentTree:
    """This project's reader on `path`: the tree ingestion builds."""
    return build_tree(path.stem, parse_pdf(extract_pdf(path.read_bytes()).layout))


def tree_headings(tree: DocumentTree) -> list[Heading]:
    """The tree's headings in document order, their depth as level."""
    return [Heading(n.page_start, n.depth, n.text) for n in tree.nodes[1:] if n.kind == STRUCTURE]


def tree_blocks(tree: DocumentTree) -> list[TextBlock]:
    """Every node below the root, headings and content, in document order."""
    return [TextBlock(n.page_start, " ".join(n.text.split())) for n in tree.nodes[1:] if n.text.strip()]
