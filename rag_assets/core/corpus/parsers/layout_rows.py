"""The stored layout of a file read at ingestion (slides, workbooks, e-books), and table rows.

Like a Word file (docx.py), a zip-based document is read once, from its bytes, into a small JSON
document the catalogue stores as text: its title and its blocks as rows `[kind, text, level,
page_start, page_end]`. Its parser turns the rows back into blocks. Tables are written as PDF
tables are (pdf_tables.table_blocks): a table node (its header line, or a caption) and one row
node under it per row, each naming its columns (`label | Header: value | ...`, `Table.row_texts`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from rag_assets.core.corpus.blocks import Block, BlockKind, collapse_spaces, new_block
from rag_assets.core.corpus.parsers.archive_limits import ArchiveLimits, check_archive
from rag_assets.core.corpus.parsers.errors import ParseError
from rag_assets.core.corpus.parsers.pdf_table import Table

LAYOUT_VERSION = 1
ZIP_MAGIC = b"PK\x03\x04"
_KINDS = {kind.value: kind for kind in BlockKind}

Row = list[object]  # [kind, text, level, page_start, page_end]


def row(kind: str, text: str, level: int = 0, page: int = 0) -> Row:
    return [kind, collapse_spaces(text), level, page, page]


def table_rows(
    header: Sequence[str], body: Sequence[Sequence[str]], page: int = 0, caption: str = "", context: str = ""
) -> list[Row]:
    """A table as rows: its node (the caption, else the header line after `context`, such as the
    period a sheet's table covers) and one row per body row under it, naming its columns; the
    first column is the rows' label, as in a PDF table."""
    cells = [collapse_spaces(h) for h in header]
    table = Table(cells[1:], cells[0] if cells else "", [(collapse_spaces(r[0]), [*r[1:]]) for r in body if r])
    texts = table.row_texts()
    if not texts:
        return []
    node = collapse_spaces(caption) or " | ".join(p for p in (collapse_spaces(context), table.header_text()) if p)
    level = 1 if node else 0
    head = [row("paragraph", node, 0, page)] if node else []
    return head + [["table_row", text, level, page, page] for text in texts]


def dump_layout(fmt: str, title: str | None, rows: list[Row], **extra: object) -> str:
    """The JSON document `layout_blocks(fmt, ...)` reads back."""
    if not any(r[1] for r in rows):
        raise ParseError(f"no text in the .{fmt} file (empty, or only pictures)")
    data = {"layout": fmt, "version": LAYOUT_VERSION, "title": title, "blocks": rows, **extra}
    return json.dumps(data, ensure_ascii=False)


def _load(fmt: str, layout: str) -> dict[str, object]:
    try:
        data = json.loads(layout)
    except ValueError:
        raise ParseError(f"not a .{fmt} layout document (a .{fmt} file is read at ingestion; re-ingest it)") from None
    if not isinstance(data, dict) or data.get("layout") != fmt or data.get("version") != LAYOUT_VERSION:
        raise ParseError(f"not a version-{LAYOUT_VERSION} .{fmt} layout document; re-ingest the .{fmt} file")
    return data


def layout_blocks(fmt: str, layout: str) -> list[Block]:
    """The blocks a file of format `fmt` was read into at ingestion, with their pages."""
    blocks = []
    for kind, text, level, first, last in _load(fmt, layout)["blocks"]:  # type: ignore[union-attr]
        blocks.append(new_block(_KINDS[kind], str(text), int(level), int(first), int(last)))
    return blocks


def layout_title(fmt: str, layout: str) -> str | None:
    title = _load(fmt, layout).get("title")
    return str(title) if title else None


def plain_text(rows: list[Row]) -> str:
    return "\n".join(str(r[1]) for r in rows)


def check_zip(data: bytes, fmt: str, limits: ArchiveLimits, hint: str = "") -> None:
    """ParseError unless `data` is a zip archive within `limits` (archive_limits.py)."""
    if not data.startswith(ZIP_MAGIC):
        raise ParseError(f"not a .{fmt} file (not a zip archive{hint})")
    check_archive(data, limits, f".{fmt}")
