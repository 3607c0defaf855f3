"""Samsung e-manual JSON (`section_N` -> {title, html[], section_hierarchy}) -> blocks.

Each section's `html[0]` is its heading; the rest is HTML parsed with the html module. The
heading level is the depth of `section_hierarchy` ("section_0>section_7>section_8" -> 3): on the
Galaxy S10 manual that reproduces every gold section path of the E-Manual QA questions, whereas
the h1..h5 tag levels do not (chapters and their sub-pages use inconsistent tags). The tag level
is only the fallback when a section has no hierarchy. Headings inside a section's body (some
manuals keep sub-topics as `<h4>`s inside one section) nest below the section's heading.
"""

from __future__ import annotations

import json
import re
from typing import Any

from rag_assets.core.corpus.blocks import Block, BlockKind, collapse_spaces, heading
from rag_assets.core.corpus.parsers.errors import ParseError
from rag_assets.core.corpus.parsers.html import parse_html

_SECTION_KEY = re.compile(r"section_(\d+)\Z")
_HEADING_TAG = re.compile(r"\s*<h([1-6])\b", re.IGNORECASE)


_MOJIBAKE = re.compile("[\xc2-\xf4][\x80-\xbf]{1,3}")
_ORPHAN_NBSP = re.compile("\xc2(?=\\s|\\Z)")


def _redecode(match: re.Match[str]) -> str:
    try:
        return match.group().encode("latin-1").decode("utf-8")
    except UnicodeDecodeError:
        return match.group()


def repair_mojibake(text: str) -> str:
    """Undo UTF-8 read as Latin-1 ("friend\u00e2\u0080\u0099s" -> "friend’s") where it round-trips.

    Each suspicious run (a UTF-8 lead byte then continuation bytes, as Latin-1 characters) is
    repaired on its own when it decodes, so one legitimate non-Latin-1 character elsewhere in
    the text does not block the repair, and text that is already right is left alone.
    """
    if text.isascii():
        return text
    # A lone "Â" is the first half of a mis-decoded no-break space whose second half the HTML
    # pretty-printer moved into the next text node; the space it stood for is all that is left.
    return _ORPHAN_NBSP.sub(" ", _MOJIBAKE.sub(_redecode, text))


def load_sections(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The sections in numeric order (section_2 before section_10), validated."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        where = f"line {err.lineno} column {err.colno}"
        raise ParseError(f"manual_json: not valid JSON ({err.msg} at {where})") from None
    if not isinstance(data, dict):
        kind = type(data).__name__
        raise ParseError(f"manual_json: top level is a JSON {kind}, expected an object of section_N entries")
    sections: list[tuple[int, str, dict[str, Any]]] = []
    for key, section in data.items():
        match = _SECTION_KEY.match(key)
        if match is None:
            raise ParseError(f"manual_json: key {key!r} is not of the form section_N")
        if not isinstance(section, dict):
            raise ParseError(f"manual_json: {key} is a JSON {type(section).__name__}, expected an object")
        html = section.get("html")
        if not isinstance(html, list) or not all(isinstance(item, str) for item in html):
            raise ParseError(f"manual_json: {key} has no 'html' list of strings")
        for field in ("title", "section_hierarchy"):
            if field in section and not isinstance(section[field], str):
                raise ParseError(f"manual_json: {key}.{field} is not a string")
        sections.append((int(match.group(1)), key, section))
    if not sections:
        raise ParseError("manual_json: no sections (expected an object of section_N entries)")
    sections.sort(key=lambda entry: entry[0])
    return [(key, section) for _, key, section in sections]


def _section_heading(key: str, section: dict[str, Any]) -> tuple[str, int, int]:
    """(heading text, level in the tree, h-tag level of html[0] or 0) for one section."""
    html: list[str] = section["html"]
    tag_level = 0
    text = ""
    if html:
        match = _HEADING_TAG.match(html[0])
        if match is not None:
            tag_level = int(match.group(1))
            first = parse_html(html[0], clean=repair_mojibake)
            text = first[0].text if first and first[0].kind is BlockKind.HEADING else ""
    text = collapse_spaces(text) or collapse_spaces(repair_mojibake(section.get("title") or "")) or key
    hierarchy = section.get("section_hierarchy") or ""
    level = len(hierarchy.split(">")) if hierarchy.strip() else (tag_level or 1)
    return text, level, tag_level


def parse_manual_json(text: str) -> list[Block]:
    """Blocks of a whole manual: each section's heading, then its body."""
    blocks: list[Block] = []
    for key, section in load_sections(text):
        title, level, tag_level = _section_heading(key, section)
        blocks.append(heading(title, level))
        body = parse_html("\n".join(section["html"]), clean=repair_mojibake)
        if tag_level and body and body[0].kind is BlockKind.HEADING and body[0].text == title:
            body = body[1:]  # the section's own heading, emitted above at its hierarchy level
        for block in body:
            if block.kind is BlockKind.HEADING:
                # A sub-topic heading inside the section: below the section, keeping its offset.
                offset = block.level - tag_level if tag_level else 1
                block = heading(block.text, level + max(offset, 1))
            blocks.append(block)
    return blocks


def manual_title(text: str) -> str | None:
    """The first section's title when it is the manual's only top-level section, else None.

    A manual of several chapters has no title of its own: calling it after its first chapter
    ("Features") would make that chapter the tree's root (`build_tree` merges a first heading
    equal to the title into the root) and every later chapter would look nested in it. None
    lets the caller fall back to the file name ("Galaxy_S10").
    """
    sections = load_sections(text)
    levels = [_section_heading(key, section)[1] for key, section in sections]
    top = min(levels)
    if levels[0] != top or levels.count(top) != 1:
        return None
    key, section = sections[0]
    title = collapse_spaces(repair_mojibake(section.get("title") or ""))
    return title or _section_heading(key, section)[0]
