"""A PDF's stored line layout (see `pdf_extract`) -> blocks with page numbers.

Headings come from the outline (bookmarks) when the PDF has one: each entry's title is found
among the lines of its page and becomes a heading of the entry's level. Without an outline they
come from layout: a short line set larger than the body text, or bold at body size, is a heading,
and its level is the rank of its style (larger first, bold before regular at one size), unless
it is numbered ("3.2.1 Scope": level 3). Everything else is content: paragraphs (lines joined
until a gap, a style change, an indent or a line that ends with room left for the next word: a
wrapped line ends only where that word no longer fits), list items (bullets or "1." / "a)"
markers, nested by indentation, and lines set one under another that each end early: a list
drawn without markers), table rows (lines with cell gaps) and code (monospaced lines,
indentation kept).
Running headers, footers and page numbers are dropped first, and two-column pages are read
column by column; a caption or footnotes set between a paragraph and its rest (the next column or
page) come after the whole paragraph (`pdf_floats`), and a filing's cover is headed only by its
largest lines (`pdf_filing.flatten_cover`).
"""

from __future__ import annotations

import json
import re

from rag_assets.core.corpus.blocks import Block, BlockKind, collapse_spaces, new_block
from rag_assets.core.corpus.parsers.errors import ParseError
from rag_assets.core.corpus.parsers.pdf_columns import reading_order
from rag_assets.core.corpus.parsers.pdf_draft import BULLET, GLYPH_BULLETS, Draft, emit
from rag_assets.core.corpus.parsers.pdf_extract import PDF_LAYOUT_VERSION
from rag_assets.core.corpus.parsers.pdf_filing import (
    contents_pages,
    filing_rank,
    flatten_cover,
    join_label,
    opens_item,
    plain_item_headings,
)
from rag_assets.core.corpus.parsers.pdf_floats import float_past_breaks, is_caption
from rag_assets.core.corpus.parsers.pdf_furniture import drop_page_furniture
from rag_assets.core.corpus.parsers.pdf_headings import (
    heading_levels,
    is_heading_line,
    italics_are_emphasis,
    promote_lead_lines,
)
from rag_assets.core.corpus.parsers.pdf_lines import (
    SENTENCE_END,
    Line,
    body_size,
    broken_early,
    compound_words,
    join_cells,
    merge_fragments,
    opens_next_column,
    page_lines,
)
from rag_assets.core.corpus.parsers.pdf_margins import page_margins
from rag_assets.core.corpus.parsers.pdf_outline import place_outline, trusted_outline
from rag_assets.core.corpus.parsers.pdf_slides import is_slide_deck, slide_headings
from rag_assets.core.corpus.parsers.pdf_tables import continued_title, continues_table, with_tables


def _load(layout: str) -> dict[str, object]:
    try:
        data = json.loads(layout)
    except ValueError:
        raise ParseError("not a PDF layout document (the PDF is read at ingestion; re-ingest it)") from None
    if not isinstance(data, dict) or data.get("pdf_layout") != PDF_LAYOUT_VERSION:
        raise ParseError(f"not a version-{PDF_LAYOUT_VERSION} PDF layout document; re-ingest the PDF")
    return data


def _clean_pages(data: dict[str, object]) -> tuple[list[list[Line]], bool]:
    """The cleaned lines of each page, and whether the PDF is a slide deck (`pdf_slides`)."""
    pages = data["pages"]
    assert isinstance(pages, list)
    # columns first: pieces of one printed line are joined within a column, never across a
    # narrow gutter
    lines = [
        merge_fragments(reading_order(page_lines(page["lines"], number), float(page["w"])))
        for number, page in enumerate(pages, start=1)
    ]
    sizes = [(float(page["w"]), float(page["h"])) for page in pages]
    deck = is_slide_deck(lines, sizes, body_size(lines))
    # a slide's title, set where every slide sets it and repeated on the slides that continue
    # it, is no running header
    lines = drop_page_furniture(lines, [height for _, height in sizes], titled_pages=deck)
    cleaned = [
        with_tables(join_cells(runs), page.get("tables") or [], number, page.get("plots") or [])
        for number, (runs, page) in enumerate(zip(lines, pages, strict=True), start=1)
    ]
    for line in (line for runs in cleaned for line in runs if "\t" in line.text):
        line.text = join_label(_marked_item(line.text))  # "ITEM 1.<TAB>Business": a heading set at a tab stop
        line.cells = line.cells if "\t" in line.text else []
    return cleaned, deck


def _marked_item(text: str) -> str:
    """A row of two cells whose first is one symbol ("!", "§", "": a bullet drawn in a symbol
    font without its Unicode) is a list item hung from its marker, not a table row."""
    marker, _, rest = text.partition("\t")
    if len(marker.strip()) == 1 and not marker.strip().isalnum() and rest and "\t" not in rest:
        return f"• {rest}"
    return text


_WRAPPED = re.compile(r"\b(?:the|of|on|in|to|for|and|or|by|with|from|at|a|an)$", re.IGNORECASE)


def _opens_filing_section(draft: Draft, line: Line) -> bool:
    """A filing's Part, Item, statement or note name starts a block of its own: after a heading,
    unless that heading breaks mid-phrase ("Selected impacts of investment securities on the" /
    "Consolidated statements of income"); an Item set in the body's type ("Item 1A. Risk
    Factors.") after a sentence's end."""
    last = draft.lines[-1].text
    if draft.kind is BlockKind.HEADING and filing_rank(line.text) is not None and not _WRAPPED.search(last):
        return True
    return opens_item(line) and bool(SENTENCE_END.search(last))


def _continues(draft: Draft, line: Line, right_edge: float) -> bool:
    """Whether `line` carries on the paragraph, heading or list item `draft` holds."""
    last = draft.lines[-1]
    if abs(line.size - last.size) > 0.6 or (line.bold != last.bold and draft.kind is not BlockKind.LIST_ITEM):
        return False
    if opens_next_column(last, line) and draft.kind is BlockKind.PARAGRAPH:
        # the top of the next column: the paragraph runs on when its last line ends no sentence
        # (a caption set there is not its rest: `float_past_breaks` moves it after the paragraph)
        return not SENTENCE_END.search(last.text) and not is_caption(line.text)
    ranked = filing_rank(draft.lines[0].text) is not None  # "Item 1. Business." wraps only when full
    if (draft.kind is not BlockKind.HEADING or ranked) and broken_early(last, line, right_edge):
        return False
    if _opens_filing_section(draft, line):
        return False
    if line.page != last.page:
        # A paragraph runs on over a page break when its last line does not end a sentence.
        return draft.kind is BlockKind.PARAGRAPH and not SENTENCE_END.search(last.text)
    gap = line.top - last.bottom
    if gap > 0.7 * max(line.size, last.size) or gap < -0.5 * line.size:
        return False
    if draft.kind is BlockKind.LIST_ITEM:
        first = draft.lines[0]
        if BULLET.match(first.text):  # the text after a marker wraps under itself, under the
            # marker, or back at the margin when the marker stood at a first-line indent
            return (
                line.x0 > first.x0 + 0.5 * line.size
                or line.x0 < first.x0 - 0.5 * line.size
                or (abs(line.x0 - first.x0) < 1.0 and first.text[:1] in GLYPH_BULLETS)
            )
        # an item without a marker glyph wraps at its own indent, after a full line
        return abs(line.x0 - first.x0) < 1.0 and last.x1 > right_edge - 3 * last.size
    if SENTENCE_END.search(last.text) and (last.x1 < right_edge - 0.1 * (right_edge - last.x0) or line.lead_in):
        # a short line ending a sentence ends its paragraph, even without a gap, as does a
        # sentence end before a bold lead-in (a paper's run-in "TriviaQA (Joshi et al., 2017) ...")
        return False
    # A paragraph set with a first-line indent comes back to the margin on its second line (its
    # first line ran full: `broken_early` said so above); up to six ems covers the indents in use.
    first_line_indent = draft.kind is BlockKind.PARAGRAPH and len(draft.lines) == 1
    indent = last.x0 - line.x0
    return (
        abs(line.x0 - last.x0) < 2 * line.size
        or draft.kind is BlockKind.HEADING
        or (first_line_indent and 0 < indent <= 6 * line.size)
    )


def _indented_item(lines: list[Line], index: int, margin: float, right_edge: float) -> bool:
    """A line set in from its column's margin, not centred, and not a paragraph's first-line
    indent (the next line does not come back to the margin): an item of a list drawn without
    marker glyphs (browsers draw bullets as shapes)."""
    line = lines[index]
    indent = line.x0 - margin
    if not 1.5 * line.size <= indent <= 10 * line.size or abs(indent - (right_edge - line.x1)) < 2 * line.size:
        return False
    following = lines[index + 1] if index + 1 < len(lines) else None
    return not (
        following is not None
        and abs(following.x0 - margin) < 1.0
        and -0.3 * line.size <= following.top - line.bottom < 0.7 * line.size  # loose boxes may touch
        and line.x1 > right_edge - 3 * line.size
    )


def _line_kind(line: Line, body: float, headings: bool) -> BlockKind:
    """What a line starts, judged alone: code, a heading (when headings come from layout), a
    table row, a list item, else a paragraph."""
    text = line.text.strip()
    if line.mono:
        return BlockKind.CODE
    if headings and is_heading_line(line, body):
        return BlockKind.HEADING
    if "\t" in text:
        return BlockKind.TABLE_ROW
    if BULLET.match(text):
        return BlockKind.LIST_ITEM
    return BlockKind.PARAGRAPH


def _code_continues(draft: Draft, line: Line) -> bool:
    """Code runs on over blank lines (up to one) and over a page break."""
    last = draft.lines[-1]
    same_page = last.page == line.page and -0.5 * line.size < line.top - last.bottom < 1.8 * line.size
    return same_page or line.page == last.page + 1


def _drafts(
    pages: list[list[Line]], margins: dict[int, tuple[float, float]], body: float, headings: bool, slides: bool = False
) -> list[Draft]:
    """The page's lines gathered into blocks; with `slides`, no block runs on to the next page."""
    drafts: list[Draft] = []
    for lines in pages:
        for index, line in enumerate(lines):
            margin, right_edge = margins[id(line)]
            # a slide's blocks end with it
            current = drafts[-1] if drafts and not (slides and drafts[-1].lines[-1].page != line.page) else None
            if line.table is not None:
                if (
                    len(drafts) >= 2
                    and drafts[-1].kind in (BlockKind.HEADING, BlockKind.PARAGRAPH)
                    and continued_title(drafts[-2].lines[-1], drafts[-1].lines, line)
                ):
                    drafts.pop()  # "Statement of Cash Flows (continued)": the table goes on
                    current = drafts[-1]
                if current is not None and continues_table(current.lines[-1], line):
                    current.lines.append(line)
                else:
                    drafts.append(Draft(BlockKind.TABLE_ROW, [line]))
                continue
            kind = _line_kind(line, body, headings)
            if (
                kind is BlockKind.CODE
                and current is not None
                and current.kind is kind
                and _code_continues(current, line)
            ):
                current.lines.append(line)
                continue
            if current is not None and _wraps_item(current, kind, line, right_edge):
                kind = BlockKind.PARAGRAPH
            if (
                current is not None
                and kind in (BlockKind.PARAGRAPH, BlockKind.HEADING)
                and (current.kind is kind or (current.kind is BlockKind.LIST_ITEM and kind is BlockKind.PARAGRAPH))
                and _continues(current, line, right_edge)
            ):
                current.lines.append(line)
                continue
            if kind is BlockKind.PARAGRAPH and _indented_item(lines, index, margin, right_edge):
                kind = BlockKind.LIST_ITEM
            after_break = current is not None and kind is current.kind is BlockKind.PARAGRAPH
            drafts.append(Draft(kind, [line], after_break=after_break and _set_under(current, line, right_edge)))
    return drafts


def _wraps_item(draft: Draft, kind: BlockKind, line: Line, right_edge: float) -> bool:
    """Whether a line judged a list item or a heading alone is the wrapped rest of `draft`'s
    line: a dash under a full line (`_dash_wrapped`), or a bold line under a bold list item's
    first line that carries it on ("Title I, the “WIPO Copyright ..." / "Treaties
    Implementation Act of 1998,” ...": a bold item's second line is no heading)."""
    if kind is BlockKind.LIST_ITEM:
        return _dash_wrapped(draft, line, right_edge)
    return kind is BlockKind.HEADING and draft.kind is BlockKind.LIST_ITEM and _continues(draft, line, right_edge)


def _dash_wrapped(draft: Draft, line: Line, right_edge: float) -> bool:
    """A line opening with a dash under a full line that ends no sentence, at that line's start,
    is the rest of its sentence (" - check with the office") wrapped there, not a dash list's item."""
    last = draft.lines[-1]
    return (
        line.text[:1] in "–—-"
        and last.text[:1] not in "–—-"
        and draft.kind in (BlockKind.PARAGRAPH, BlockKind.LIST_ITEM)
        and abs(line.x0 - last.x0) < 1.0
        and not SENTENCE_END.search(last.text)
        and _continues(draft, line, right_edge)
    )


def _set_under(draft: Draft, line: Line, right_edge: float) -> bool:
    """`line` sits right under `draft`'s last line (line spacing, same start and style) and that
    line broke early: the two are lines of one list, not two paragraphs (those are set apart)."""
    last = draft.lines[-1]
    return (
        last.page == line.page
        and 0 <= line.top - last.bottom < 0.7 * line.size
        and abs(line.x0 - last.x0) < 1.0
        and abs(line.size - last.size) <= 0.6
        and line.bold == last.bold
        and broken_early(last, line, right_edge)
    )


def _unmarked_lists(drafts: list[Draft]) -> None:
    """Paragraphs set one under another, each ending where the text broke its line, are the items
    of a list drawn without markers or indent (HTML list items printed without their list) when
    at least two of them are single lines: a short line over a paragraph is a lead line, and a
    line ending in a colon introduces the list rather than being one of its items."""
    runs: list[list[Draft]] = [[]]
    for draft in drafts:
        member = draft.kind is BlockKind.PARAGRAPH and not draft.lines[-1].text.endswith(":")
        if member and draft.after_break and runs[-1]:
            runs[-1].append(draft)
        else:
            runs.append([draft] if member else [])
    for run in runs:
        if len(run) >= 2 and sum(len(d.lines) == 1 for d in run) >= 2:
            for item in run:
                item.kind = BlockKind.LIST_ITEM


def _list_levels(drafts: list[Draft]) -> None:
    """Nesting of each run of list items from the indents of their markers."""
    run: list[Draft] = []
    for draft in [*drafts, None]:
        if draft is not None and draft.kind is BlockKind.LIST_ITEM:
            run.append(draft)
            continue
        indents: list[float] = []
        for item in sorted(run, key=lambda d: d.lines[0].x0):
            if not indents or item.lines[0].x0 - indents[-1] > 0.8 * item.lines[0].size:
                indents.append(item.lines[0].x0)
        for item in run:
            item.level = sum(1 for indent in indents if indent <= item.lines[0].x0 + 0.8 * item.lines[0].size)
        run = []


def _outline_blocks(
    pages: list[list[Line]], widths: list[float], outline: list[list[object]], body: float, compounds: frozenset[str]
) -> list[Block]:
    blocks: list[Block] = []
    margins = page_margins(pages, widths)
    for number, items in enumerate(place_outline(pages, outline), start=1):
        lines: list[Line] = []
        for item in [*items, None]:
            if isinstance(item, Line):
                lines.append(item)
                continue
            if lines:
                drafts = _drafts([lines], margins, body, headings=False)
                _unmarked_lists(drafts)
                _list_levels(drafts)
                for draft in drafts:
                    blocks.extend(draft.blocks(blocks[-1] if blocks else None, compounds))
                lines = []
            if item is not None:
                blocks.append(new_block(BlockKind.HEADING, collapse_spaces(item[1]), item[0], number, number))
    return _join_page_breaks(blocks)


def _join_page_breaks(blocks: list[Block]) -> list[Block]:
    """Paragraphs cut by a page break (no sentence end before it) joined into one."""
    joined: list[Block] = []
    for block in blocks:
        last = joined[-1] if joined else None
        if (
            last is not None
            and last.kind is BlockKind.PARAGRAPH
            and block.kind is BlockKind.PARAGRAPH
            and block.page_start == last.page_end + 1
            and not SENTENCE_END.search(last.text)
        ):
            joined[-1] = new_block(BlockKind.PARAGRAPH, f"{last.text} {block.text}", 0, last.page_start, block.page_end)
            continue
        joined.append(block)
    return joined


def layout_pages(layout: str) -> list[list[Line]]:
    """The cleaned lines of each page, tables standing as one Line each, as `parse_pdf` reads them."""
    return _clean_pages(_load(layout))[0]


def parse_pdf(layout: str) -> list[Block]:
    """The blocks of a PDF from its stored layout, in reading order, each with its pages."""
    data = _load(layout)
    pages, deck = _clean_pages(data)
    body = body_size(pages)
    stated = data.get("outline") or []
    assert isinstance(stated, list)
    outline = trusted_outline(pages, stated)
    widths = [float(page["w"]) for page in data["pages"]]  # type: ignore[union-attr]
    heights = [float(page["h"]) for page in data["pages"]]  # type: ignore[union-attr]
    compounds = compound_words(pages)
    if outline:
        return _outline_blocks(pages, widths, outline, body, compounds)
    if italics_are_emphasis(pages, body):
        for line in (line for lines in pages for line in lines):
            line.italic = False
    # a slide deck's headings are its slides' titles alone (`pdf_slides`), not its large lines
    drafts = plain_item_headings(_drafts(pages, page_margins(pages, widths), body, headings=not deck, slides=deck))
    contents = contents_pages(pages)
    for draft in drafts:  # a contents page's entries are not the document's headings
        if draft.kind is BlockKind.HEADING and draft.lines[0].page in contents and filing_rank(draft.lines[0].text):
            draft.kind = BlockKind.PARAGRAPH
    if deck:  # one heading a slide, its title; no slide's text runs on past a chart's labels
        slide_headings(drafts, pages, heights, body)
    else:
        drafts = float_past_breaks(drafts, body)
        flatten_cover(drafts)
        heading_levels(drafts)
    _unmarked_lists(drafts)
    if not deck:
        promote_lead_lines(drafts, body)
    _list_levels(drafts)
    return emit(drafts, compounds)


def pdf_title(layout: str, file_name: str | None = None) -> str | None:
    """The title the PDF's metadata states (when it is not a file name), else the first page's
    largest heading text when no later page sets a heading as large (its printed title), or None.

    The stated title comes first: a page printed from HTML states its <title>, while its first
    large heading may be a section ("Overview"). A printed title is followed by the file's name
    (`file_name`, underscores as spaces) unless it already says every word of it: the cover's
    largest line of a filing is "FORM 10-K" or "UNITED STATES SECURITIES AND EXCHANGE
    COMMISSION", and it is the file's name ("BESTBUY 2017 10K") that tells one company's filing
    of one year from its others, in every heading path and so in search."""
    data = _load(layout)
    stated = data.get("title")
    if stated:
        return str(stated)
    printed = _printed_title(_clean_pages(data)[0])
    if printed is None or not file_name:
        return printed
    name = " ".join(file_name.replace("_", " ").split())
    said = set(re.findall(r"\w+", printed.lower()))
    return printed if set(re.findall(r"\w+", name.lower())) <= said else f"{printed} ({name})"


def _printed_title(pages: list[list[Line]]) -> str | None:
    if not pages or not pages[0]:
        return None
    body = body_size(pages)
    first = [line for line in pages[0][:15] if is_heading_line(line, body)]
    if not first:
        return None
    size = max(line.size for line in first)
    later = max((ln.size for lines in pages[1:] for ln in lines if is_heading_line(ln, body)), default=0.0)
    if size <= later:  # as large as a later page's heading: a chapter heading, not the title
        return None
    start = next(i for i, line in enumerate(first) if line.size == size)
    parts = [first[start].text]
    for line in first[start + 1 :]:
        if line.size != size or line.top - first[start].bottom > 2.5 * size:
            break
        parts.append(line.text)
    return collapse_spaces(" ".join(parts)) or None
