"""The one exception parsers raise, kept apart so every format module can import it."""

from __future__ import annotations


class ParseError(ValueError):
    """Input that is not a document of the stated format; the message names the problem.

    A ValueError so that callers isolating bad documents (`build_trees`) need no parser import.
    """
