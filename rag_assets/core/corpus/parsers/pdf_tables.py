"""Tables on a PDF page: rows that carry their column headers, so a row answers on its own.

Two kinds are found. Ruled tables (cells drawn with lines) are found at extraction by
pdfplumber (`pdf_ruled_tables`) and stored with the page; here their cells become rows.
Unruled tables, as financial statements are set, are found from the page's lines: a run of
rows whose cells (`Line.cells`, runs split at wide gaps) line up in number columns, the row
labels on the left. The header lines above the first row of numbers ("2018 2017 2016") name
the columns; each header cell belongs to the columns under it. A row reads
`label | header: value | header: value`.
"""

from __future__ import annotations

import re

from rag_assets.core.corpus.blocks import Block, BlockKind, collapse_spaces, new_block
from rag_assets.core.corpus.parsers.pdf_lines import SENTENCE_END, Line
from rag_assets.core.corpus.parsers.pdf_ruled_cells import split_ruled_cells
from rag_assets.core.corpus.parsers.pdf_table import Table
from rag_assets.core.corpus.parsers.pdf_table_beside import repeated_header, second_table_left, side_part
from rag_assets.core.corpus.parsers.pdf_table_cells import (
    MIN_FIGURE_ROWS,
    figure_row,
    is_figure,
    row_cells,
    value_columns,
)
from rag_assets.core.corpus.parsers.pdf_table_grid import box_grid, grid_rows, ruled_grid, unruled_grid
from rag_assets.core.corpus.parsers.pdf_word_tables import word_tables

_LETTER_SPACED = re.compile(r"^[\d/.:-]+(?: [\d/.:-]+)+$")  # "0 3 / 2 5 / 2 0 16": a date set letter-spaced
_MAX_HEADER_LINES = 4
_MAX_PLOT_SHARE = 0.3


def _label_and_values(
    cells: list[tuple[float, float, str]], value_left: float
) -> tuple[str, list[tuple[float, float, str]]]:
    """The row label (cells left of the value columns) and the value cells."""
    label = " ".join(text for x0, x1, text in cells if x1 < value_left and not is_figure(text))
    values = [c for c in cells if not (c[1] < value_left and not is_figure(c[2]))]
    return label, values


def _column_of(x0: float, x1: float, columns: list[tuple[float, float]]) -> int:
    """The column a cell falls in: the most overlap, else the nearest by centre."""
    best, best_overlap = -1, 0.0
    for index, (a, b) in enumerate(columns):
        overlap = min(x1, b) - max(x0, a)
        if overlap > best_overlap:
            best, best_overlap = index, overlap
    if best >= 0:
        return best
    centre = (x0 + x1) / 2
    return min(range(len(columns)), key=lambda i: abs((columns[i][0] + columns[i][1]) / 2 - centre))


def _value_left(number_rows: list[list[tuple[float, float, str]]]) -> float:
    """Where the value columns begin: the leftmost start of a number cell in the rows of figures."""
    return min(x0 for cells in number_rows for x0, _, text in cells[1:] if is_figure(text))


def _level_text(level: list[tuple[int, int, float, float, str]], column: tuple[float, float], index: int) -> str:
    """The cell of a header level over column `index`: the one spanning it, else the nearest
    within its own width (a title centred over its columns, narrower than they are), else none."""
    for first, last, _, _, text in level:
        if first <= index <= last:
            return text
    gaps = [(max(x0 - column[1], column[0] - x1), x1 - x0, text) for _, _, x0, x1, text in level]
    gap, width, text = min(gaps)
    return text if gap <= width else ""


def _header(
    lines: list[Line], columns: list[tuple[float, float]], value_left: float
) -> tuple[list[str], str, list[list[tuple[int, int, str]]]]:
    """Column headers from the header lines: each header cell goes to the columns it spans. A
    line holding a cell over several columns ("2019" over three measures, "Years ended
    December 31,") is a header level of its own; the other lines' cells are each column's own
    header, wrapped lines joined. A column's header is its path, top level first ("2019 / Net
    sales"). Also the header's grid rows: (first column, last column, text) of each cell."""
    levels: list[list[tuple[int, int, float, float, str]]] = []
    own: list[list[str]] = [[] for _ in columns]
    label_parts: list[str] = []
    for line in lines:
        placed: list[tuple[int, int, float, float, str]] = []
        for x0, x1, text in row_cells(line):
            if x1 < value_left:
                label_parts.append(text)
                continue
            under = [i for i, (a, b) in enumerate(columns) if min(x1, b) - max(x0, a) > 0]
            if not under:
                under = [_column_of(x0, x1, columns)]
            placed.append((min(under), max(under), x0, x1, text))
        if any(cell[0] != cell[1] for cell in placed) and not any(own):
            levels.append(placed)
        else:  # a column's own header, wrapped: a wide word goes to the column it overlaps most
            for _, _, x0, x1, text in placed:
                own[_column_of(x0, x1, columns)].append(text)
    header = []
    for index, texts in enumerate(own):
        path = [t for level in levels if (t := _level_text(level, columns[index], index))]
        header.append(collapse_spaces(" / ".join([*path, " ".join(texts)] if texts else path)))
    grid = [
        *([(first, last, text) for first, last, _, _, text in level] for level in levels),
        [(i, i, collapse_spaces(" ".join(texts))) for i, texts in enumerate(own) if texts],
    ]
    return header, collapse_spaces(" ".join(label_parts)), [row for row in grid if row]


def _header_lines(lines: list[Line], first: int, value_left: float) -> tuple[int, int]:
    """(first header line, first body line) above row `first`: header lines are set close above
    it and are rows of cells without figures, or text over the value columns; label lines
    between them and the first figures ("Cash Flows from Operating Activities") open the body.
    Without a header line above them, the body starts at `first`."""
    start, body, index = first, -1, first
    while index > 0 and first - index < _MAX_HEADER_LINES:
        line, below = lines[index - 1], lines[index]
        if below.top - line.bottom > 1.5 * line.size or line.page != below.page or line.table is not None:
            break
        cells = row_cells(line)
        if line.x0 >= value_left - line.size or (len(cells) >= 2 and not figure_row(cells)):
            start = index - 1
            body = index if body < 0 else body
        elif not (len(cells) == 1 and line.x1 < value_left and start == first):
            break
        index -= 1
    return (start, body) if body >= 0 else (first, first)


def _table_end(lines: list[Line], first: int, value_left: float) -> tuple[int, list[int]]:
    """(end, number rows) of the table whose first row of figures is `first`: it runs on over
    rows of figures and over label lines between them (a section label, a wrapped label), up
    to a gap wider than two lines or three label lines without figures."""
    end, numbered, labels = first + 1, [first], 0
    index = first + 1
    while index < len(lines):
        line, above = lines[index], lines[index - 1]
        if line.table is not None or line.page != above.page or line.top - above.bottom > 2.5 * line.size:
            break
        cells = row_cells(line)
        if figure_row(cells):
            numbered.append(index)
            end, labels = index + 1, 0
        elif line.x1 < value_left and labels < 3 and len(cells) == 1:
            labels += 1
        else:
            break
        index += 1
    return end, numbered


def _rows(lines: list[Line], columns: list[tuple[float, float]], value_left: float) -> list[tuple[str, list[str]]]:
    """Rows of (label, values); label lines without figures open a row of their own unless the
    next line continues their label (starts in lower case)."""
    rows: list[tuple[str, list[str]]] = []
    pending = ""
    for line in lines:
        label, values = _label_and_values(row_cells(line), value_left)
        if pending and label[:1].islower():
            label, pending = f"{pending} {label}", ""
        elif pending:
            rows.append((pending, []))
            pending = ""
        if not values:
            pending = label
            continue
        by_column = [""] * len(columns)
        for x0, x1, text in values:
            index = _column_of(x0, x1, columns)
            by_column[index] = f"{by_column[index]} {text}".strip()
        rows.append((label, by_column))
    if pending:
        rows.append((pending, []))
    return rows


def _table(header: list[Line], body: list[Line], number_cells: list[list[tuple[float, float, str]]]) -> Table:
    """The table of these header and body lines, its value columns where its rows of figures
    (`number_cells`) print them."""
    value_left = _value_left(number_cells)
    columns = value_columns([_label_and_values(c, value_left)[1] for c in number_cells], value_left)
    names, label_header, header_rows = _header(header, columns, value_left)
    rows = _rows(body, columns, value_left)
    table = Table(names, label_header, rows, [body[0].page])
    table.grid = unruled_grid(header_rows, label_header, rows, len(columns))
    return table


def _beside(lines: list[Line], cut: float) -> list[Table]:
    """The two tables set side by side in these lines, left then right, every line of each
    side in its table (those above its first row of figures are its header: a title over its
    labels joins the label header); none where a side holds fewer than two rows of figures."""
    tables = []
    for left in (True, False):
        side = [part for line in lines if (part := side_part(line, left, cut)) is not None]
        numbered = [i for i, line in enumerate(side) if figure_row(row_cells(line))]
        if len(numbered) < MIN_FIGURE_ROWS:
            return []
        tables.append(_table(side[: numbered[0]], side[numbered[0] :], [row_cells(side[i]) for i in numbered]))
    return tables


def unruled_tables(lines: list[Line]) -> list[tuple[int, int, Table]]:
    """(start, end, table) for each unruled table among one page's lines in reading order
    (`lines[start:end]` are the table's lines, header lines included; two tables set side by
    side are two entries over the same lines, the left one first)."""
    found: list[tuple[int, int, Table]] = []
    index = 0
    while index < len(lines):
        if lines[index].table is not None or not figure_row(row_cells(lines[index])):
            index += 1
            continue
        first = index
        value_left = _value_left([row_cells(lines[first])])
        end, numbered = _table_end(lines, first, value_left)
        if len(numbered) < MIN_FIGURE_ROWS:
            index += 1
            continue
        number_cells = [row_cells(lines[i]) for i in numbered]
        value_left = _value_left(number_cells)
        start, body = _header_lines(lines, first, value_left)
        cut = second_table_left(number_cells, value_left, lines[first].size)
        beside = (
            _beside(lines[start:end], cut)
            if cut is not None and repeated_header(lines[start:body], value_left, cut)
            else []
        )
        tables = beside or [_table(lines[start:body], lines[body:end], number_cells)]
        found += [(start, end, table) for table in tables]
        index = end
    return found


def _cell_text(cell: str | None) -> str:
    text = collapse_spaces(cell or "")
    return text.replace(" ", "") if _LETTER_SPACED.match(text) else text


def ruled_table(
    cells: list[list[str | None]], page: int, boxes: list[list[object]] | None = None, lines: list[Line] | None = None
) -> Table | None:
    """A ruled table as a Table (its header rows' paths over each column, then its rows), or
    None when it is not a table of at least two columns and a row under its header. Its grid
    comes from the cells' `boxes` (`[x0, top, x1, bottom, text]`, split where the rules left
    cells unsplit by the page's `lines` printed in them) when extraction stored them, else from
    pdfplumber's rows `cells` (None for a slot a merged cell covers)."""
    if boxes:
        found = [(float(b[0]), float(b[1]), float(b[2]), float(b[3]), str(b[4])) for b in boxes]  # type: ignore[arg-type]
        grid = box_grid([(*b[:4], _cell_text(b[4])) for b in split_ruled_cells(found, lines or [])])
    else:  # a layout stored before cell boxes were
        grid = ruled_grid([[None if c is None else _cell_text(c) for c in row] for row in cells])
    header, body = grid_rows(grid)
    body = [row for row in body if any(row)]
    if not body or len(header) < 2:
        return None
    return Table(header, "", [("", row) for row in body], [page], grid=grid)


def _table_line(table: Table, lines: list[Line], box: tuple[float, float, float, float] | None = None) -> Line:
    """One Line standing for a whole table in the page's reading order (its box, its header text)."""
    x0, top, x1, bottom = box or (
        min(ln.x0 for ln in lines),
        min(ln.top for ln in lines),
        max(ln.x1 for ln in lines),
        max(ln.bottom for ln in lines),
    )
    size = lines[0].size if lines else 10.0
    return Line(x0, top, x1, bottom, size, False, table.header_text(), table.pages[0], table=table)


def _over_plots(lines: list[Line], plots: list[list[float]]) -> bool:
    """Whether plotted series (`pdf_plots`) cover at least `_MAX_PLOT_SHARE` of the lines' box:
    a chart's axis labels and legend, not a table."""
    x0, top = min(ln.x0 for ln in lines), min(ln.top for ln in lines)
    x1, bottom = max(ln.x1 for ln in lines), max(ln.bottom for ln in lines)
    area = max((x1 - x0) * (bottom - top), 1.0)
    covered = sum(max(min(x1, b[2]) - max(x0, b[0]), 0.0) * max(min(bottom, b[3]) - max(top, b[1]), 0.0) for b in plots)
    return covered >= _MAX_PLOT_SHARE * area


def with_tables(
    lines: list[Line], ruled: list[list[object]], page: int, plots: list[list[float]] | None = None
) -> list[Line]:
    """The page's lines with each table's lines replaced by one table Line: ruled tables (cells
    read by pdfplumber at extraction) where they lie, then unruled tables among the rest, except
    over a chart's plots, then tables of words (`pdf_word_tables`)."""
    for x0, top, x1, bottom, cells, *boxes in ruled:  # type: ignore[misc]
        box = (float(x0), float(top), float(x1), float(bottom))  # type: ignore[arg-type]
        inside = [
            i
            for i, ln in enumerate(lines)
            if ln.table is None
            and box[0] - 2 <= (ln.x0 + ln.x1) / 2 <= box[2] + 2
            and box[1] - 2 <= (ln.top + ln.bottom) / 2 <= box[3] + 2
        ]
        table = ruled_table(cells, page, boxes[0] if boxes else None, [lines[i] for i in inside])  # type: ignore[arg-type]
        if table is None:
            continue
        at = inside[0] if inside else next((i for i, ln in enumerate(lines) if ln.top > box[1]), len(lines))
        members = [lines[i] for i in inside]
        kept = [ln for i, ln in enumerate(lines) if i not in set(inside)]
        kept.insert(min(at, len(kept)), _table_line(table, members, box))
        lines = kept
    found: dict[tuple[int, int], list[Table]] = {}
    for start, end, table in unruled_tables(lines):
        if not (plots and _over_plots(lines[start:end], plots)):
            found.setdefault((start, end), []).append(table)
    for (start, end), tables in sorted(found.items(), reverse=True):
        lines[start:end] = [_table_line(table, lines[start:end]) for table in tables]
    for start, end, table in reversed(word_tables(lines)):
        lines[start:end] = [_table_line(table, lines[start:end])]
    return lines


def table_blocks(parts: list[Table], previous: Block | None) -> list[Block]:
    """A table (its parts on consecutive pages) as a table node and one row node under it per
    row (rows have level 1: they nest under the node). The table node is the caption right
    above it (a short paragraph that ends no sentence), else the header line; rows carry their
    column headers either way."""
    first, last_page = parts[0], parts[-1].pages[0]
    rows = [(text, first.pages[0]) for text in first.row_texts()]
    for part in parts[1:]:
        # a part on a later page reads under the first part's headers; its own first row is a
        # repeat of those headers, or a row of the table when it reads otherwise
        own = [] if part.header == first.header else [("", part.header)]
        rebased = Table(first.header, first.label_header, [*own, *part.rows], part.pages)
        rows.extend((text, part.pages[0]) for text in rebased.row_texts())
    if not rows:
        return []
    caption = (
        previous is not None
        and previous.kind is BlockKind.PARAGRAPH
        and len(previous.text.split()) <= 15
        and not SENTENCE_END.search(previous.text)
        and previous.page_end >= first.pages[0] - 1
    )
    blocks: list[Block] = []
    header = collapse_spaces(first.header_text())
    if not caption and header:
        blocks.append(new_block(BlockKind.PARAGRAPH, header, 0, first.pages[0], last_page))
    nested = int(caption or bool(header))
    blocks.extend(new_block(BlockKind.TABLE_ROW, text, nested, page, page) for text, page in rows)
    return blocks


def continues_table(last: Line, line: Line) -> bool:
    """A table right after a table that ended the previous page, with as many columns, is
    that table continued."""
    return (
        last.table is not None
        and line.table is not None
        and line.page == last.page + 1
        and len(line.table.header) == len(last.table.header)
    )


def continued_title(before: Line, title: list[Line], line: Line) -> bool:
    """The only text on the page above this table is a title saying it continues ("(continued)")
    the table that ended the previous page (`before`)."""
    return (
        before.table is not None
        and all(ln.page == line.page for ln in title)
        and "continued" in " ".join(ln.text for ln in title).casefold()
    )
