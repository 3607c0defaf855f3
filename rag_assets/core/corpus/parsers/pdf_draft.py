"""A block being gathered from a PDF's lines (`parsers.pdf`), and the blocks it becomes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rag_assets.core.corpus.blocks import Block, BlockKind, collapse_spaces, new_block, normalise_code, table_row
from rag_assets.core.corpus.parsers.pdf_lines import Line, join_hyphenated
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
        """The draft's blocks: one, or a table's node and rows (see `pdf_tables.table_blocks`)."""
        if self.lines[0].table is not None:
            return table_blocks([ln.table for ln in self.lines if ln.table is not None], previous)
        return [self.block(compounds)]

    def block(self, compounds: frozenset[str] = frozenset()) -> Block:
        pages = [line.page for line in self.lines]
        if self.kind is BlockKind.CODE:
            # monospaced: a line's indent is as many characters as fit between it and the block's left
            left = min(line.x0 for line in self.lines)
            rows: list[str] = []
            for previous, ln in zip([None, *self.lines], self.lines, strict=False):
                if previous is not None and previous.page == ln.page and ln.top - previous.bottom > 0.5 * ln.height:
                    rows.append("")  # a blank line inside the code
                rows.append(" " * round((ln.x0 - left) / max((ln.x1 - ln.x0) / len(ln.text), 0.1)) + ln.text)
            return new_block(BlockKind.CODE, normalise_code("\n".join(rows)), 0, min(pages), max(pages))
        if self.kind is BlockKind.TABLE_ROW:
            row = table_row("\t".join(line.text for line in self.lines).split("\t"))
            return new_block(row.kind, row.text, 0, min(pages), max(pages))
        text = ""
        for line in self.lines:
            text = join_hyphenated(text, line.text.replace("\t", " "), compounds)
        if self.kind is BlockKind.LIST_ITEM:
            text = BULLET.sub("", text, count=1) if text[:1] in "•◦▪●○■□‣⁃∙·*–—-" else text
        return new_block(self.kind, collapse_spaces(text), self.level, min(pages), max(pages))


def emit(drafts: list[Draft], compounds: frozenset[str]) -> list[Block]:
    blocks: list[Block] = []
    for draft in drafts:
        blocks.extend(draft.blocks(blocks[-1] if blocks else None, compounds))
    return blocks
