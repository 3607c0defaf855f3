"""A PDF's outline (bookmarks) placed among its pages' lines: each entry's printed title lines
become one heading marker, so the headings are the ones the document names, in its own words."""

from __future__ import annotations

import re

from rag_assets.core.corpus.parsers.pdf_lines import Line

_KEY = re.compile(r"[\W_]+")
# a section number printed before a title the outline states without it ("1 Foo" for "Foo")
_NUMBER = re.compile(r"^\s*(?:\d+(?:\.\d+)*\.?|[IVX]+\.|[A-Z]\.)\s+(?=\S)")
_MAX_TITLE_WORDS = 25  # a bookmark longer than this is a paragraph's opening, not a title


def _key(text: str) -> str:
    return _KEY.sub("", text.casefold())


def _spelled_end(items: list[Line | tuple[int, str]], start: int, wanted: str) -> int:
    """End of the lines from `start` that spell the key `wanted` (as printed, or without a
    leading section number), else `start`."""
    for strip in (False, True):
        joined, end = "", start
        while end < len(items) and isinstance(items[end], Line) and len(joined) < len(wanted):
            text = items[end].text  # type: ignore[union-attr]
            joined += _key(_NUMBER.sub("", text) if strip and end == start else text)
            end += 1
        if joined == wanted:
            return end
    return start


def _wanted(title: str) -> list[str]:
    """The keys an entry's printed title may spell: the title's, and without the section number the
    outline adds to it ("1. Introduction" for a page that prints "Introduction")."""
    keys = [_key(title), _key(_NUMBER.sub("", title))]
    return [key for index, key in enumerate(keys) if key and key not in keys[:index]]


def _printed(lines: list[Line], title: str) -> bool:
    items: list[Line | tuple[int, str]] = list(lines)
    return any(_spelled_end(items, start, key) > start for key in _wanted(title) for start in range(len(items)))


def trusted_outline(pages: list[list[Line]], outline: list[list[object]]) -> list[list[object]]:
    """The outline's entries when they can stand for the document's headings, else [] (headings
    then come from the layout).

    An entry counts when it points at a page and reads as a title (a bookmark of a whole
    paragraph, or of nothing, heads nothing). The outline is trusted when two entries at least
    count and half of them are printed on the page they point at: a one-entry outline ("Blank
    Page", a file name) or one whose titles the pages never print (a spreadsheet's sheet names, a
    tool's test bookmarks) would replace the headings the pages do print."""
    usable = [
        entry
        for entry in outline
        if isinstance(entry[2], int)
        and 0 <= entry[2] < len(pages)
        and isinstance(entry[1], str)
        and 0 < len(entry[1].split()) <= _MAX_TITLE_WORDS
    ]
    if len(usable) < 2:
        return []
    printed = sum(_printed(pages[int(entry[2])], str(entry[1])) for entry in usable)  # type: ignore[call-overload]
    return usable if printed * 2 >= len(usable) else []


def place_outline(pages: list[list[Line]], outline: list[list[object]]) -> list[list[Line | tuple[int, str]]]:
    """Pages with each outline entry's title lines replaced by a (level, heading) marker; an entry
    whose title is not printed on its page is placed by its target position, else at the top.

    The printed lines nearest the entry's target position that spell its title (spaces aside,
    and a section number the outline leaves out) are the heading, in their printed words:
    outlines drop the space where a title wrapped."""
    marked: list[list[Line | tuple[int, str]]] = [list(lines) for lines in pages]
    for level, title, page_index, top in outline:
        assert isinstance(page_index, int) and isinstance(top, float | int) and isinstance(title, str)
        if not 0 <= page_index < len(marked):
            continue
        items = marked[page_index]
        placed = False
        starts = range(len(items))
        if top >= 0:  # nearest the target first: the same words may also appear elsewhere on the page
            starts = sorted(starts, key=lambda i: abs(items[i].top - top) if isinstance(items[i], Line) else 1e9)  # type: ignore[union-attr]
        for start in starts:
            item = items[start]
            if isinstance(item, tuple):
                continue
            end = max((_spelled_end(items, start, wanted) for wanted in _wanted(title)), default=start)
            if end > start:
                printed = " ".join(line.text for line in items[start:end])  # type: ignore[union-attr]
                items[start:end] = [(int(level), printed)]  # type: ignore[call-overload]
                placed = True
                break
        if not placed:
            at = next(
                (i for i, it in enumerate(items) if isinstance(it, Line) and top >= 0 and it.top >= top - 2),
                0 if top < 0 else len(items),
            )
            items.insert(at, (int(level), title))
    return marked
