"""Which documents a question is searched (and so routed) in, by default: those whose cards it names.

"What was AMCOR's quick ratio in FY2023?" on a store of 74 filings: the cards
(core/corpus/document_cards.py) say which filings are AMCOR's of FY2023, and searching only those
is what a person would do. The steer restricts, never guesses: a question whose words name no
card's organisation or product (every question of a collection whose cards carry none, such as
a wiki or a manual) is searched in every document, and the reason says so. `file_names` adds
`--by-name`'s older rule (core/index/document_names.py) for the questions no card matches.

The matches are computed once per question text: strategies search several times per question
(rdr2's first stage, rag-hybrid's passages, a sub-query's), and a steer over a few hundred cards
is a few milliseconds a question.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rag_assets.core.corpus.document_cards import DocumentCard
from rag_assets.core.index.card_matching import CardIndex
from rag_assets.core.index.document_names import DocumentNames


@dataclass(frozen=True, slots=True)
class SteerChoice:
    """The documents a question is searched in (None: all of them) and why, in the words an
    answer's notes show ("names AMCOR PLC; of FY2023")."""

    documents: list[str] | None
    reason: str
    by: str  # "cards" | "file names" | "" (nothing restricted)


@dataclass
class DocumentSteer:
    """The default search scope of each question, from the searched collections' cards."""

    cards: Sequence[DocumentCard]
    file_names: DocumentNames | None = None
    _choices: dict[str, SteerChoice] = field(default_factory=dict, repr=False)
    _index: CardIndex | None = field(default=None, repr=False)  # the cards prepared once, on first use

    def choose(self, question: str) -> SteerChoice:
        """Where `question` is searched: the documents its cards name, else (with `file_names`)
        those its file names name, else all."""
        choice = self._choices.get(question)
        if choice is None:
            choice = self._choices[question] = self._choose(question)
        return choice

    def documents_for(self, question: str) -> list[str] | None:
        return self.choose(question).documents

    def _choose(self, question: str) -> SteerChoice:
        if self.cards and self._index is None:
            self._index = CardIndex(self.cards)
        match = self._index.match(question) if self._index is not None else None
        if match is not None and match.doc_ids:
            return SteerChoice(list(match.doc_ids), match.reason, "cards")
        # no card to match: none made, or none with an organisation or product (a wiki, a manual)
        why = (
            f"the question {match.reason}" if match is not None else "no document card names an organisation or product"
        )
        named = self.file_names.named_in(question) if self.file_names is not None else []
        return SteerChoice(named or None, f"no card matched: {why}", "file names" if named else "")

    def note(self, question: str) -> str:
        """The line an answer's notes carry about where `question` was searched."""
        choice = self.choose(question)
        if choice.by == "cards":
            where = "the documents whose cards the question names"
        elif choice.by == "file names":
            where = "the documents the question names by file name"
        else:
            return f"searched every document ({choice.reason})"
        return f"searched {where} ({choice.reason}): " + ", ".join(choice.documents or [])
