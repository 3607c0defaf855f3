"""Cleaning a PDF's positioned lines before they become blocks: fragments, cells, hyphens
(reading order: `pdf_columns`; running headers and footers: `pdf_furniture`).

Works on the per-page line lists `pdf_extract` stores; each step is one function so the tests
can hold each rule to a small hand-made page. Coordinates are points from the page's top-left.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from rag_assets.core.corpus.parsers.pdf_table import Table

_COMPOUND = re.compile(r"\b([^\W\d_]+-[^\W\d_]+)\b")
# Typographic glyphs read as the characters they stand for: ligatures as their letters, the
# hyphen and non-breaking hyphen as "-", the minus sign as "-", a soft hyphen as nothing.
_GLYPHS = str.maketrans(
    {
        "ﬀ": "ff",
        "ﬁ": "fi",
        "ﬂ": "fl",
        "ﬃ": "ffi",
        "ﬄ": "ffl",
        "ﬅ": "st",
        "ﬆ": "st",
        "\u2010": "-",
        "\u2011": "-",
        "\u2212": "-",
        "\u00ad": "",
        "\u00a0": " ",
    }
)
# A spacing accent drawn on its own above a letter ("Erdos" with "˝" set over its o): PDFium
# reads it as a line of its own, which would cut the paragraph in two. The letter stays plain.
_LONE_ACCENTS = re.compile(r"^[\u02c6-\u02dd\u00a8\u00b4\u00b8\u00af\s]+$")
HEADING_SCALE = 1.15  # a line this much larger than the body text may be a heading
# A sentence end, maybe followed by closing quotes/brackets and reference marks ("work."[4]).
SENTENCE_END = re.compile(r"[.!?:;][\"'”’)\]]*(?:\[[^\]]{1,12}\])*$")


@dataclass(slots=True)
class Line:
    """One text line: box in points, dominant font size, mostly-bold and monospaced flags, 1-based page."""

    x0: float
    top: float
    x1: float
    bottom: float
    size: float
    bold: bool
    text: str
    page: int
    mono: bool = False
    # (x0, x1, text) of each run a row of cells was joined from (`join_cells`); empty for a plain line
    cells: list[tuple[float, float, str]] = field(default_factory=list)
    table: Table | None = None  # a whole table standing in for its lines (`pdf_tables.with_tables`)
    italic: bool = False
    lead_in: bool = False  # opens with a bold or italic run, the rest in the body's type

    @property
    def height(self) -> float:
        return self.bottom - self.top


def page_lines(raw_lines: list[list[object]], page: int) -> list[Line]:
    """Stored `[x0, top, x1, bottom, size, bold, text, mono, italic]` rows as Lines, duplicates dropped.

    Some PDFs draw a text twice (a fake bold, a shadow): the same text in the same box is kept once.
    A line of nothing but spacing accents (drawn apart from their letter) is dropped.
    """
    lines: list[Line] = []
    seen: set[tuple[object, ...]] = set()
    for row in raw_lines:
        x0, top, x1, bottom, size, bold, text, mono, *rest = row
        key = (round(float(x0)), round(float(top)), text)  # type: ignore[arg-type]
        if key in seen or _LONE_ACCENTS.match(str(text)):
            continue
        seen.add(key)
        box = (float(x0), float(top), float(x1), float(bottom), float(size))  # type: ignore[arg-type]
        italic = bool(rest[0]) if rest else False
        lines.append(Line(*box, bool(bold), str(text).translate(_GLYPHS), page, bool(mono), italic=italic))
    return lines


def _reference_mark(last: Line, line: Line) -> bool:
    """A superscript of a few characters (a footnote's number) set within `last`'s span, at its
    top: its place in the line is lost, and as a line of its own it would cut the paragraph."""
    return (
        len(line.text.strip()) <= 3
        and line.size < 0.8 * last.size
        and last.x0 < line.x0 < line.x1 < last.x1
        and last.top - 1 <= line.top < last.top + 0.5 * last.height
    )


def merge_fragments(lines: list[Line]) -> list[Line]:
    """Join consecutive pieces of one printed line (PDFium breaks at superscripts, font changes);
    the line takes the style of its longer piece, and of its text after a bold lead-in."""
    merged: list[Line] = []
    first_piece = False  # whether merged[-1] is still its line's first piece alone
    for line in lines:
        if merged:
            last = merged[-1]
            if _reference_mark(last, line):
                continue  # a footnote mark drawn after its line (PDFium reads it there): left out
            gap = line.x0 - last.x1
            if one_baseline(last, line) and -2.0 <= gap <= 1.2 * max(last.size, line.size):
                joiner = "" if gap < 0.15 * line.size or line.text[:1] in ",.;:)" else " "
                weight_last, weight_line = len(last.text), len(line.text)
                lead_in = (last.bold and not line.bold) or (last.italic and not line.italic)
                if lead_in:
                    # a bold lead-in ("Exceptions.", a paper's run-in "Natural Questions (NQ)")
                    # opens a paragraph: no heading
                    weight_last = 0
                    last.lead_in = first_piece
                last.text = f"{last.text}{joiner}{line.text}"
                last.x1 = max(last.x1, line.x1)
                last.top, last.bottom = min(last.top, line.top), max(last.bottom, line.bottom)
                if weight_line > weight_last:
                    last.size, last.bold, last.italic = line.size, line.bold, line.italic
                first_piece = False
                continue
        merged.append(line)
        first_piece = True
    return merged


def one_baseline(a: Line, b: Line) -> bool:
    """Whether two runs sit on one printed line: they overlap by more than half the smaller height."""
    return min(a.bottom, b.bottom) - max(a.top, b.top) > 0.5 * min(a.height, b.height)


def join_cells(lines: list[Line]) -> list[Line]:
    """Consecutive runs on one baseline with a wide gap between them (after reading order, so
    never two columns) are the cells of a table row: one line, cells separated by tabs."""
    joined: list[Line] = []
    for line in lines:
        if joined:
            last = joined[-1]
            if one_baseline(last, line) and line.x0 > last.x1:
                if not last.cells:
                    last.cells.append((last.x0, last.x1, last.text))
                last.cells.append((line.x0, line.x1, line.text))
                last.text = f"{last.text}\t{line.text}"
                last.x1 = max(last.x1, line.x1)
                last.top, last.bottom = min(last.top, line.top), max(last.bottom, line.bottom)
                last.bold = last.bold and line.bold
                last.italic = last.italic and line.italic
                continue
        joined.append(line)
    return joined


def body_size(pages: list[list[Line]]) -> float:
    """The font size most characters are set in: the body text's, to which headings compare
    (code is set apart, often smaller, and in a manual may outweigh the prose)."""
    sizes: Counter[float] = Counter()
    for lines in pages:
        for line in lines:
            if not line.mono:
                sizes[round(line.size * 2) / 2] += len(line.text)
    return sizes.most_common(1)[0][0] if sizes else 0.0


def opens_next_column(last: Line, line: Line) -> bool:
    """Whether `line` is set at the top of the column right of `last`'s (same page, above it)."""
    return line.page == last.page and line.top < last.top - line.size and line.x0 > last.x1


def broken_early(last: Line, line: Line, right_edge: float) -> bool:
    """Whether `last` ended with room left for `line`'s first word before its column's right
    edge: the text broke the line there (a list drawn without markers, an address), since a
    wrapped line ends only where the next word no longer fits. The word's width is estimated
    from `line`'s mean character width, with a space before it and half an em for the estimate's error
    (a word of wide letters)."""
    words = line.text.split(maxsplit=1)
    if not words or not line.text:
        return False
    char_width = (line.x1 - line.x0) / len(line.text)
    return last.x1 + (len(words[0]) + 1) * char_width + 0.5 * line.size < right_edge


def compound_words(pages: list[list[Line]]) -> frozenset[str]:
    """The hyphenated words printed inside lines ("state-of-the-art", "left-hand"), lower-cased:
    a line that ends in one of them keeps its hyphen."""
    return frozenset(match.casefold() for lines in pages for line in lines for match in _COMPOUND.findall(line.text))


def join_hyphenated(text: str, part: str, compounds: frozenset[str]) -> str:
    """`text` and the next line's `part`, joined. A line ending in a word broken by a hyphen
    ("litera-" + "ture") is joined without it, unless the next part starts with a capital or a
    digit or the document prints the hyphenated word elsewhere ("left-hand"): a compound."""
    if not text:
        return part.strip()
    if not (text.endswith("-") and text[-2:-1].isalpha()):
        return f"{text} {part.strip()}"
    rest = part.strip()
    head = text[:-1].rsplit(" ", 1)[-1]
    tail = re.split(r"[^\w-]", rest, maxsplit=1)[0]
    if rest[:1].islower() and f"{head}-{tail}".casefold() not in compounds:
        return f"{text[:-1]}{rest}"
    return f"{text}{rest}"
