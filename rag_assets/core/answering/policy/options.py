"""What an asker may override of the evaluated configuration, and the choices each override takes.
Imports nothing heavy: the CLI checks options with it before any model loads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

MODES = ("dense", "bm25", "hybrid")
ROUTERS = ("encoder", "llm", "similarity", "hit-nodes")  # what an asker may choose for rdr2
Note = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class AskOptions:
    """Overrides of the evaluated configuration (None: as evaluated)."""

    top_k: int | None = None
    expand_iterations: int | None = None
    retrieval_mode: str | None = None
    router: str | None = None
    style: str | None = None
    tree_depth: int | None = None
    tree_branching: int | None = None
    document: str | None = None  # search and route only this document (doc id, file name or title)
    by_name: bool | None = None  # where no card names a document, those the question names by file name
    all_documents: bool | None = None  # search every document (no steer by the documents' cards)
    form: str | None = None  # generated | extractive (None: the collection's default)

    def steer(self) -> str:
        """Where a question is searched by default (`policy.sessions.document_steer`)."""
        if self.all_documents:
            return "off"
        return "cards+names" if self.by_name else "cards"
