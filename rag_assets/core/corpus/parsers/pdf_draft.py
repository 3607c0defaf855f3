"""A block being gathered from a PDF's lines (`parsers.pdf`), and the blocks it becomes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rag_assets.core.corpus.blocks import Block, BlockKind, collapse_spaces, new_block, normalise_code, table_row
from rag_assets.core.corpus.parsers.pdf_fixed_grid import FixedGrid, fixed_pitch_grid, header_cells
from rag_assets.core.corpus.parsers.pdf_lines import Line, join_hyphenated
from rag_assets.core.corpus.parsers.pdf_table import Table
from rag_assets.core.corpus.parsers.pdf_tables import table_blocks

BULLET = re.compile(r"^(?:[•◦▪●○■□‣⁃∙·*–—-]|\(?(?:\d{1,2}|[a-zA-Z]|[ivx]{1,4})[.)])\s+(?=\S)")
GLYPH_BULLETS = "•◦▪●○■□‣⁃∙·*"


@dataclass(slots=True)
class Draft:
    kind: BlockKind
    lines: list[Line] = field(default_factory=list)
    level: int = 0
    after_break: bool = False  # a paragraph set right under the previous one, which broke early

    def blocks(self, previous: Block | None, compounds: frozenset[str] = frozenset()) -> list[Block]:
        """The draft's blocks: one, or a table's node and rows (see `pdf_tables.table_blocks`;
        a monospaced table, `pdf_fixed_grid`)."""
        if self.lines[0].table is not None:
            return table_blocks([ln.table for ln in self.lines if ln.table is not None], previous)
        if self.kind is BlockKind.CODE:
            rows, pages = self._code_rows()
            grid = fixed_pitch_grid(rows)
            if grid is not None:
                return _grid_blocks(grid, [pages[i] for i in grid.lines], previous)
            return [new_block(BlockKind.CODE, normalise_code("\n".join(rows)), 0, min(pages), max(pages))]
        return [self.block(compounds)]

    def _code_rows(self) -> tuple[list[str], list[int]]:
        """The monospaced lines as text, each indented by as many characters as fit between it and
        the block's left edge, a blank line where the block leaves one; and each line's page."""
        left = min(line.x0 for line in self.lines)
        rows: list[str] = []
        pages: list[int] = []
        for previous, ln in zip([None, *self.lines], self.lines, strict=False):
            if previous is not None and previous.page == ln.page and ln.top - previous.bottom > 0.5 * ln.height:
                rows.append("")  # a blank line inside the code
                pages.append(ln.page)
            rows.append(" " * round((ln.x0 - left) / max((ln.x1 - ln.x0) / len(ln.text), 0.1)) + ln.text)
            pages.append(ln.page)
        return rows, pages

    def block(self, compounds: frozenset[str] = frozenset()) -> Block:
        pages = [line.page for line in self.lines]
        if self.kind is BlockKind.TABLE_ROW:
            row = table_row("\t".join(line.text for line in self.lines).split("\t"))
            return new_block(row.kind, row.text, 0, min(pages), max(pages))
        text = ""
        for line in self.lines:
            text = join_hyphenated(text, line.text.replace("\t", " "), compounds)
        if self.kind is BlockKind.LIST_ITEM:
            text = BULLET.sub("", text, count=1) if text[:1] in "•◦▪●○■□‣⁃∙·*–—-" else text
        return new_block(self.kind, collapse_spaces(text), self.level, min(pages), max(pages))


def _grid_blocks(grid: FixedGrid, pages: list[int], previous: Block | None) -> list[Block]:
    """A monospaced table's rows, each naming its columns. Its header is its own first line, else
    the table row right above it with as many cells (a header set in a proportional font, read as
    a row of its own), else none; rows under their own header nest under it as a PDF table's do."""
    columns = len(grid.rows[0])
    header = grid.header
    if header is None and previous is not None and previous.kind is BlockKind.TABLE_ROW:
        header = header_cells(previous.text, columns)
    named = header or [""] * columns
    table = Table(named[1:], named[0], [(row[0], row[1:]) for row in grid.rows], sorted(set(pages)))
    if grid.header is not None:
        return table_blocks([table], previous)
    return [new_block(BlockKind.TABLE_ROW, text, 0, page, page) for text, page in zip(table.row_texts(), pages)]


def emit(drafts: list[Draft], compounds: frozenset[str]) -> list[Block]:
    blocks: list[Block] = []
    for draft in drafts:
        blocks.extend(draft.blocks(blocks[-1] if blocks else None, compounds))
    return blocks
