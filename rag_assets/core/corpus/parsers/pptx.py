"""PowerPoint (.pptx) -> blocks, with python-pptx.

python-pptx reads the package: slides in order, their shapes (placeholders, text boxes, groups,
tables) and the notes pages. This module decides what a slide says, in reading order. Each slide
is one heading, its title placeholder's text, else its first text, else "Slide N"; its shapes are
read top to bottom, then left to right (groups opened in place); a paragraph is a list item when
it shows a bullet (an explicit bullet or number, or a body placeholder's default bullet, unless
the paragraph turns it off), at its outline level; a table is a table node with its rows naming
the first row's columns; the speaker notes follow under a "Notes" heading. Every block carries
the slide number as its page, so citations say "p. 3" for slide 3.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator

from lxml import etree
from pptx import Presentation
from pptx.enum.shapes import MSO_SHAPE_TYPE, PP_PLACEHOLDER
from pptx.exc import PackageNotFoundError
from pptx.oxml.ns import qn
from pptx.shapes.base import BaseShape
from pptx.slide import Slide

from rag_assets.core.corpus.blocks import collapse_spaces
from rag_assets.core.corpus.parsers.archive_limits import ArchiveLimits, Deadline, plain_xml_error
from rag_assets.core.corpus.parsers.errors import ParseError
from rag_assets.core.corpus.parsers.layout_rows import (
    Row,
    check_zip,
    dump_layout,
    plain_text,
    row,
    table_rows,
)

FORMAT = "pptx"
_TITLES = (PP_PLACEHOLDER.TITLE, PP_PLACEHOLDER.CENTER_TITLE, PP_PLACEHOLDER.VERTICAL_TITLE)
_BULLETED = (PP_PLACEHOLDER.BODY, PP_PLACEHOLDER.OBJECT, PP_PLACEHOLDER.VERTICAL_BODY, PP_PLACEHOLDER.VERTICAL_OBJECT)
_MAX_HEADING_CHARS = 200  # longer first text is prose, not a title: the slide is "Slide N"
_BU_NONE, _BU_CHAR, _BU_NUM = qn("a:buNone"), qn("a:buChar"), qn("a:buAutoNum")


def _open(data: bytes, limits: ArchiveLimits) -> object:
    check_zip(data, FORMAT, limits, "; an old binary .ppt? save it as .pptx")
    try:
        return Presentation(io.BytesIO(data))
    except etree.XMLSyntaxError as err:
        raise plain_xml_error(err, ".pptx") from None
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as err:
        raise ParseError(f"damaged or incomplete .pptx ({err.__class__.__name__}: {err})") from None


def _placeholder(shape: BaseShape) -> object:
    return shape.placeholder_format.type if shape.is_placeholder else None


def _in_reading_order(shapes: object) -> Iterator[BaseShape]:
    """Shapes top to bottom, then left to right; a group's shapes in place of the group."""
    listed = list(shapes)  # type: ignore[call-overload]
    listed.sort(key=lambda s: (s.top if s.top is not None else 0, s.left if s.left is not None else 0))
    for shape in listed:
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            yield from _in_reading_order(shape.shapes)
        else:
            yield shape


def _paragraph_rows(frame: object, bulleted: bool, page: int) -> list[Row]:
    """A text frame's paragraphs; in a body placeholder (`bulleted`) they are bullets by default."""
    rows = []
    for paragraph in frame.paragraphs:  # type: ignore[attr-defined]
        text = collapse_spaces(paragraph.text.replace("\v", " "))
        if not text:
            continue
        ppr = paragraph._p.pPr
        marks = {child.tag for child in ppr} if ppr is not None else set()
        listed = _BU_CHAR in marks or _BU_NUM in marks or (bulleted and _BU_NONE not in marks)
        if listed:
            rows.append(row("list_item", text, paragraph.level + 1, page))
        else:
            rows.append(row("paragraph", text, 0, page))
    return rows


def _table(shape: BaseShape, page: int) -> list[Row]:
    grid = [[collapse_spaces(cell.text) for cell in table_row.cells] for table_row in shape.table.rows]  # type: ignore[attr-defined]
    grid = [cells for cells in grid if any(cells)]
    if not grid:
        return []
    return table_rows(grid[0], grid[1:], page)


def slide_rows(slide: Slide, number: int) -> list[Row]:
    """A slide's heading, text, tables and notes as stored rows, all on page `number`."""
    title = None
    body: list[Row] = []
    texts: list[Row] = []  # the rows of text frames (not of tables): where a missing title is found
    for shape in _in_reading_order(slide.shapes):
        if shape.has_text_frame:
            if title is None and _placeholder(shape) in _TITLES and shape.text_frame.text.strip():
                title = collapse_spaces(shape.text_frame.text.replace("\v", " "))
                continue
            rows = _paragraph_rows(shape.text_frame, _placeholder(shape) in _BULLETED, number)
            body.extend(rows)
            texts.extend(rows)
        elif getattr(shape, "has_table", False):
            body.extend(_table(shape, number))
    notes: list[Row] = []
    if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
        notes = _paragraph_rows(slide.notes_slide.notes_text_frame, False, number)
    if not body and not notes and title is None:
        return []  # a picture-only slide: nothing to cite
    if title is None:  # the first text stands as the heading, once
        first = texts[0] if texts else None
        if first is None or len(str(first[1])) > _MAX_HEADING_CHARS:
            title = f"Slide {number}"
        else:
            body.remove(first)
            title = str(first[1])
    heading = row("heading", title, 1, number)
    noted = [row("heading", "Notes", 2, number), *notes] if notes else []
    return [heading, *body, *noted]


def extract_pptx(
    data: bytes, limits: ArchiveLimits = ArchiveLimits(), max_slides: int | None = None
) -> tuple[str, str]:
    """(layout JSON `parse_pptx` reads, plain text) of a .pptx; ParseError for a damaged file, one
    past `limits` (archive_limits.py) or with more than `max_slides` slides."""
    deadline = Deadline(limits.max_parse_seconds, ".pptx")
    presentation = _open(data, limits)
    slides = presentation.slides  # type: ignore[attr-defined]
    if max_slides is not None and len(slides) > max_slides:
        raise ParseError(
            f"{len(slides):,} slides, over the {max_slides:,}-page limit per document (raise max_document_pages)"
        )
    rows: list[Row] = []
    for number, slide in enumerate(slides, start=1):
        deadline.check()
        rows.extend(slide_rows(slide, number))
    title = collapse_spaces(presentation.core_properties.title or "") or None  # type: ignore[attr-defined]
    if title is None or title.casefold() in ("powerpoint presentation", "presentation"):
        title = next((str(r[1]) for r in rows if r[0] == "heading" and not str(r[1]).startswith("Slide ")), None)
    return dump_layout(FORMAT, title, rows), plain_text(rows)
