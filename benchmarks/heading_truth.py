"""The heading truth of real filings and its scoring, shared by the heading benchmarks.

The truth: a FinanceBench filing's bookmarks (an outline of ten entries or more), counted where the
entry's title is printed on its target page. The PDF is read with its outline removed
(`qpdf --empty --pages IN -- OUT`), so an engine must find the headings from the layout alone.

An engine's headings are a list of `Heading` (page, level, text) in reading order; a heading's
parent is the nearest earlier heading of a smaller level (in a tree listed in document order that
is its parent node, so a tree's headings score the same through its depths).

- precision: recovered headings that match a counted entry (on its page, the same words, or one a
  prefix of the other: "Item 1. Business." for "Item 1. Business");
- recall: counted entries matched by a recovered heading;
- parent accuracy: matched entries whose heading's nearest matched ancestor is the heading matched
  to the entry's parent (none for a top-level entry); not measured on a flat outline;
- precision at the outline's levels: as precision, counting only the recovered headings at the
  levels where some entry was matched (bookmarks that list a 10-K's Parts and Items leave out the
  sub-headings inside them: a heading below every level they reach cannot be judged by them).
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pypdfium2 as pdfium

MIN_ENTRIES = 10
_KEY = re.compile(r"[\W_]+")
_MIN_PREFIX = 8


@dataclass(frozen=True)
class Entry:
    index: int
    level: int
    title: str
    page: int  # 1-based
    parent: int | None  # index of the parent entry


@dataclass(frozen=True)
class Heading:
    page: int  # 1-based
    level: int  # 1 is the top; only the order of levels matters
    text: str


@dataclass(frozen=True)
class HeadingScore:
    flat: bool  # every entry at level 1: parent accuracy not measured
    entries: int
    counted: int
    headings: int
    matched: int
    parents: int  # matched entries with the right parent
    at_levels: int = 0  # recovered headings at the levels where some entry was matched


def key(text: str) -> str:
    """The text compared: case folded, without spaces, punctuation and underscores."""
    return _KEY.sub("", text.casefold())


def bookmarks(path: Path) -> list[Entry]:
    """The outline's entries with their parents (the nearest earlier entry one level up)."""
    document = pdfium.PdfDocument(path)
    try:
        raw = []
        for bookmark in document.get_toc(max_depth=16):
            dest = bookmark.get_dest()
            page = dest.get_index() if dest is not None else None
            title = " ".join(bookmark.get_title().split())
            if title and page is not None:
                raw.append((bookmark.level + 1, title, page + 1))
    finally:
        document.close()
    entries: list[Entry] = []
    open_levels: list[Entry] = []
    for index, (level, title, page) in enumerate(raw):
        while open_levels and open_levels[-1].level >= level:
            open_levels.pop()
        entry = Entry(index, level, title, page, open_levels[-1].index if open_levels else None)
        entries.append(entry)
        open_levels.append(entry)
    return entries


def printed(entries: list[Entry], path: Path) -> list[Entry]:
    """The entries whose title is printed on their page."""
    document = pdfium.PdfDocument(path)
    try:
        texts: dict[int, str] = {}
        kept = []
        for entry in entries:
            if entry.page not in texts:
                textpage = document[entry.page - 1].get_textpage()
                texts[entry.page] = key(textpage.get_text_range())
                textpage.close()
            if key(entry.title) and key(entry.title) in texts[entry.page]:
                kept.append(entry)
        return kept
    finally:
        document.close()


def outlined_filings(folder: Path) -> list[Path]:
    """The filings of `folder` whose bookmarks are a real outline (MIN_ENTRIES or more)."""
    return [p for p in sorted(folder.glob("*.pdf")) if len(bookmarks(p)) >= MIN_ENTRIES]


def without_outline(source: Path, folder: Path) -> Path:
    """A copy of `source` in `folder` with the same pages and no bookmarks (needs `qpdf`)."""
    target = folder / source.name
    subprocess.run(["qpdf", "--empty", "--pages", str(source), "--", str(target)], check=True)
    return target


def same_title(heading: str, title: str) -> bool:
    a, b = key(heading), key(title)
    if a == b:
        return True
    shorter, longer = sorted((a, b), key=len)
    return len(shorter) >= _MIN_PREFIX and longer.startswith(shorter)


def heading_parents(headings: list[Heading]) -> list[int | None]:
    """Each heading's parent: the index of the nearest earlier heading of a smaller level."""
    parents: list[int | None] = []
    open_levels: list[int] = []
    for index, heading in enumerate(headings):
        while open_levels and headings[open_levels[-1]].level >= heading.level:
            open_levels.pop()
        parents.append(open_levels[-1] if open_levels else None)
        open_levels.append(index)
    return parents


def match(headings: list[Heading], entries: list[Entry]) -> dict[int, int]:
    """entry index -> the index of the heading matched to it: in document order, each heading and
    entry used once, on the entry's page."""
    used: set[int] = set()
    matched: dict[int, int] = {}
    for entry in entries:
        for index, heading in enumerate(headings):
            if index not in used and heading.page == entry.page and same_title(heading.text, entry.title):
                matched[entry.index] = index
                used.add(index)
                break
    return matched


def parent_correct(entry: Entry, matched: dict[int, int], parents: list[int | None], entries: dict[int, Entry]) -> bool:
    """Whether the matched heading's nearest matched ancestor is the entry parent's heading."""
    by_heading = {heading: index for index, heading in matched.items()}
    parent = parents[matched[entry.index]]
    while parent is not None and parent not in by_heading:
        parent = parents[parent]
    found = by_heading.get(parent) if parent is not None else None
    expected = entry.parent
    while expected is not None and expected not in matched:
        # a parent the engine could not match: judge against the nearest matched ancestor
        expected = entries[expected].parent
    return found == expected


def _nearest_matched(parent: int | None, parents: list[int | None], by_heading: dict[int, int]) -> int | None:
    while parent is not None and parent not in by_heading:
        parent = parents[parent]
    return parent


def parent_faults(headings: list[Heading], entries: list[Entry], counted: list[Entry]) -> dict[str, int]:
    """Why matched entries (of `counted`, the printed ones of `entries`) have the wrong parent,
    counted: nested under a heading whose entry is the entry's sibling in the bookmarks ("under a
    sibling"), placed under an entry above its parent or at the top ("too shallow": the parent is
    set in the type of its own parent), or elsewhere."""
    by_index = {entry.index: entry for entry in entries}
    matched = match(headings, counted)
    by_heading = {heading: index for index, heading in matched.items()}
    parents = heading_parents(headings)
    faults = {"under a sibling": 0, "too shallow": 0, "elsewhere": 0}
    for index, heading in matched.items():
        entry = by_index[index]
        if parent_correct(entry, matched, parents, by_index):
            continue
        found = _nearest_matched(parents[heading], parents, by_heading)
        found_entry = by_heading.get(found) if found is not None else None
        expected = entry.parent
        while expected is not None and expected not in matched:
            expected = by_index[expected].parent
        above = set()
        walk = by_index[expected].parent if expected is not None else None
        while walk is not None:
            above.add(walk)
            walk = by_index[walk].parent
        if found_entry is not None and expected is not None and by_index[found_entry].parent == expected:
            faults["under a sibling"] += 1
        elif expected is not None and (found_entry in above or found_entry is None):
            faults["too shallow"] += 1
        else:
            faults["elsewhere"] += 1
    return faults


def at_matched_levels(headings: list[Heading], matched: dict[int, int]) -> int:
    """The recovered headings at the levels where some entry was matched (`matched`: entry index
    -> heading index)."""
    levels = {headings[h].level for h in matched.values()}
    return sum(h.level in levels for h in headings)


def score_headings(headings: list[Heading], path: Path) -> HeadingScore:
    """`headings` recovered from `path` (read without its outline) against its bookmarks."""
    entries = bookmarks(path)
    counted = printed(entries, path)
    by_index = {entry.index: entry for entry in entries}
    matched = match(headings, counted)
    parents = heading_parents(headings)
    right = sum(parent_correct(entry, matched, parents, by_index) for entry in counted if entry.index in matched)
    return HeadingScore(
        flat=all(entry.level == 1 for entry in entries),
        entries=len(entries),
        counted=len(counted),
        headings=len(headings),
        matched=len(matched),
        parents=right,
        at_levels=at_matched_levels(headings, matched),
    )


@dataclass
class HeadingTotals:
    """Sums over filings; parents only over the nested (not flat) outlines."""

    filings: int = 0
    counted: int = 0
    headings: int = 0
    matched: int = 0
    parents: int = 0
    parented: int = 0
    at_levels: int = 0

    def add(self, score: HeadingScore) -> None:
        self.filings += 1
        self.counted += score.counted
        self.headings += score.headings
        self.matched += score.matched
        self.at_levels += score.at_levels
        if not score.flat:
            self.parents += score.parents
            self.parented += score.matched

    @property
    def precision(self) -> float:
        return self.matched / max(self.headings, 1)

    @property
    def precision_at_levels(self) -> float:
        return self.matched / max(self.at_levels, 1)

    @property
    def recall(self) -> float:
        return self.matched / max(self.counted, 1)

    @property
    def parent_accuracy(self) -> float:
        return self.parents / max(self.parented, 1)
