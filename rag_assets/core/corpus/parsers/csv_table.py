"""Comma- (or semicolon-, tab-) separated files -> a table, with the standard library's `csv`.

`csv.Sniffer` finds the delimiter and quoting from the file's head; the rows then go through the
same rules as a spreadsheet's sheet (sheet_tables.py): the header row is found, not assumed (a
title line above it is a caption), and every row is a row node naming its columns. The file's name
is the document's title, its heading.
"""

from __future__ import annotations

import csv
import io

from rag_assets.core.corpus.blocks import Block, BlockKind, new_block
from rag_assets.core.corpus.parsers.errors import ParseError
from rag_assets.core.corpus.parsers.sheet_tables import sheet_rows

_SNIFF_CHARS = 16_384
_DELIMITERS = ",;\t|"
_KINDS = {kind.value: kind for kind in BlockKind}


def _dialect(text: str) -> type[csv.Dialect] | csv.Dialect:
    try:
        return csv.Sniffer().sniff(text[:_SNIFF_CHARS], delimiters=_DELIMITERS)
    except csv.Error:  # one column, or no consistent delimiter: commas
        return csv.excel


def parse_csv(text: str) -> list[Block]:
    """The file's table: an optional caption, the table node (its header) and its rows."""
    csv.field_size_limit(10 * 1024 * 1024)
    try:
        grid = [[" ".join(cell.split()) for cell in cells] for cells in csv.reader(io.StringIO(text), _dialect(text))]
    except csv.Error as err:
        raise ParseError(f"not a readable CSV file ({err})") from None
    return [new_block(_KINDS[kind], str(t), int(level), 0, 0) for kind, t, level, _, _ in sheet_rows(grid)]


def csv_title(text: str) -> str | None:
    """None: a CSV file is titled by its name."""
    return None
