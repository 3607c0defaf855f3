"""The flat block stream every parser emits, and from which every tree is built.

Parsers only recognise blocks (a heading of some level, a paragraph, a list item at some nesting
depth, a table row, a code block); `build_tree` alone decides how blocks nest. Keeping the two
apart means every format gets the same nesting rules, and the rules are tested once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields, make_dataclass
from enum import StrEnum
from typing import TypeVar

_T = TypeVar("_T")


def frozen_factory(cls: type[_T]) -> Callable[..., _T]:
    """A faster `cls(*values)` for a frozen slots dataclass: every field, positionally.

    A frozen dataclass's `__init__` stores each field through `object.__setattr__`, which makes
    it ~3x slower than a plain dataclass's, and was the largest single cost of building trees (a
    node has 9 fields, an article ~40 nodes). This builds the object as an instance of a mutable
    twin with the same fields, hence the same slot layout, and then retypes it: CPython allows
    `__class__` assignment between such layouts. The result is an ordinary `cls`: equal,
    hashable, frozen and `dataclasses.replace`-able like one made by `cls(...)`. Trailing fields
    with plain defaults may be left out, as with `cls`; no `__post_init__`.
    """
    spec = [
        (f.name, f.type) if f.default is MISSING else (f.name, f.type, field(default=f.default))
        for f in fields(cls)  # type: ignore[arg-type]
    ]
    twin = make_dataclass(f"_{cls.__name__}Draft", spec, slots=True, eq=False, repr=False, match_args=False)

    def make(*values: object) -> _T:
        obj = twin(*values)
        obj.__class__ = cls
        return obj  # type: ignore[return-value]

    make.__doc__ = f"{cls.__name__}(*values), built faster: see `frozen_factory`."
    return make


class BlockKind(StrEnum):
    HEADING = "heading"
    PARAGRAPH = "paragraph"
    LIST_ITEM = "list_item"
    TABLE_ROW = "table_row"
    CODE = "code"


@dataclass(frozen=True, slots=True)
class Block:
    """One block of a document in reading order.

    `level` is the heading level (1 = top) for headings and the list nesting depth (1 = a
    top-level item) for list items; it is 0 for every other kind. `page_start`/`page_end` are the
    1-based pages the block lies on in a paginated source (PDF, Word), 0 where pages are unknown.
    """

    kind: BlockKind
    text: str
    level: int = 0
    page_start: int = 0
    page_end: int = 0


new_block: Callable[..., Block] = frozen_factory(Block)  # Block(kind, text, level[, page_start, page_end])


def collapse_spaces(text: str) -> str:
    """Whitespace-collapsed, stripped text: how prose blocks are normalised.

    `str.split()` splits on exactly the characters `re`'s `\\s` matches and is ~3x faster.
    Most text is already normal, and splitting a paragraph into words costs ~4x more than seeing
    that it is: every character `str.split()` splits on but the space is non-printable (checked
    on every code point of Python 3.11's Unicode tables), so printable text without double,
    leading or trailing spaces is returned as is.
    """
    if text.isprintable() and "  " not in text and not text.startswith(" ") and not text.endswith(" "):
        return text
    return " ".join(text.split())


def normalise_code(text: str) -> str:
    """Code keeps its lines; trailing spaces and blank edges go."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def heading(text: str, level: int) -> Block:
    return new_block(BlockKind.HEADING, collapse_spaces(text), level)


def paragraph(text: str) -> Block:
    return new_block(BlockKind.PARAGRAPH, collapse_spaces(text), 0)


def list_item(text: str, level: int) -> Block:
    return new_block(BlockKind.LIST_ITEM, collapse_spaces(text), level)


def table_row(cells: list[str]) -> Block:
    """A row is its non-empty cells joined by ' | ' (the cell order is kept)."""
    parts = [collapse_spaces(c) for c in cells]
    return new_block(BlockKind.TABLE_ROW, " | ".join(p for p in parts if p), 0)


def code(text: str) -> Block:
    return new_block(BlockKind.CODE, normalise_code(text), 0)
