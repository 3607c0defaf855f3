"""Words of a text: the one count and the one cut every module uses (evidence budgets, router
views, encoder contexts, CLI citations), so "N words" means the same thing everywhere."""

from __future__ import annotations

ELLIPSIS = " …"


def word_count(text: str) -> int:
    """Whitespace-separated words."""
    return len(text.split())


def first_words(text: str, words: int, *, mark_cut: bool = False) -> str:
    """The first `words` words of `text`, whitespace folded to single spaces; with `mark_cut`, an
    ellipsis says when something was cut."""
    parts = text.split()
    cut = " ".join(parts[:words])
    return cut + ELLIPSIS if mark_cut and len(parts) > words else cut
