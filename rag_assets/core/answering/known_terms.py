"""Questions whose words the collection does not know: said not found by what the words are.

The relevance floor (core/answering/no_answer.py) reads how close the evidence is to the
question, and keyboard noise defeats it: asked "asdf qwerty zxcv", the built-in Python reference
gives evidence whose best sentence the embedder scores 0.40, over the floor of 0.36, and the
reader answers "True". What the words mean to the collection says more: none of them occurs in
any of its documents. So each content term of the question (its words less the function words
of `QUERY_STOPWORDS`) is looked up in the collection's full-text index (core/index/term_lookup.py:
the index's own tokenizer, stemmer and stop words, so "statements" is known where "statement"
occurs), and a question fewer than `MIN_KNOWN_SHARE` of whose terms are known is not found.

A share, not "any unknown word": a typo ("brek statement") or a name the documents never use
leaves half the terms known, and the question is still answered. A question with no content term
at all ("what is it?") is left to the relevance floor.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag_assets.core.answering.types import TermLookup

# a question is not found when fewer than this share of its content terms occur in the documents
MIN_KNOWN_SHARE = 0.5
MIN_TERM_CHARS = 2  # one letter ("x", the "O" of "-O") says nothing about the topic
# Function words: the English stop words the full-text index drops (a term it drops is never
# found, so it must not count as unknown) plus the words every question is made of.
_QUERY_STOPWORD_TEXT = """
a about above after again against all am an and any are aren as at be because been before being
below between both but by can cannot could couldn did didn do does doesn doing don down during each
few for from further had hadn has hasn have haven having he her here hers herself him himself his
how i if in into is isn it its itself just ll me more most mustn my myself no nor not now of off on
once only or other ought our ours ourselves out over own re s same shan she should shouldn so some
such t than that the their theirs them themselves then there these they this those through to too
under until up ve very was wasn we were weren what when where which while who whom whose why will
with won would wouldn you your yours yourself yourselves
also else ever every get gets got many may might much must shall tell us use used using way ways
"""
QUERY_STOPWORDS = frozenset(_QUERY_STOPWORD_TEXT.split())
# the full-text index's simple tokenizer: runs of letters and digits (an underscore splits)
_TOKEN = re.compile(r"[^\W_]+")


def query_terms(question: str) -> list[str]:
    """The question's content terms, lower-cased, in order, each once."""
    words = (w for w in _TOKEN.findall(question.lower()) if len(w) >= MIN_TERM_CHARS)
    return list(dict.fromkeys(w for w in words if w not in QUERY_STOPWORDS))


@dataclass(frozen=True, slots=True)
class TermShare:
    terms: tuple[str, ...]  # the question's content terms
    known: frozenset[str]  # those that occur in the documents searched

    @property
    def share(self) -> float | None:
        """The share of the terms known (None: the question has no content term)."""
        return len(self.known) / len(self.terms) if self.terms else None

    @property
    def unknown(self) -> tuple[str, ...]:
        return tuple(t for t in self.terms if t not in self.known)

    def refused(self) -> bool:
        """Whether too few of the terms are known for the documents to answer the question."""
        share = self.share
        return share is not None and share < MIN_KNOWN_SHARE

    def note(self) -> str:
        """Why a question whose terms are unknown is not found, in the words a person reads."""
        unknown = ", ".join(f"'{t}'" for t in self.unknown)
        if len(self.terms) == 1 and not self.known:
            return f"not found: the word {unknown} does not occur in the documents searched"
        if not self.known:
            return f"not found: none of the words {unknown} occurs in the documents searched"
        known = ", ".join(f"'{t}'" for t in self.terms if t in self.known)
        return (
            f"not found: only {len(self.known)} of the question's {len(self.terms)} words occur in the documents "
            f"searched ({known}); {unknown} {'does' if len(self.unknown) == 1 else 'do'} not"
        )


def term_share(question: str, lookup: TermLookup) -> TermShare:
    """The question's content terms and which of them `lookup` finds in the documents."""
    terms = query_terms(question)
    return TermShare(tuple(terms), frozenset(lookup.known(terms)) if terms else frozenset())


def term_refusals(questions: Sequence[str], lookup: TermLookup | None) -> list[TermShare | None]:
    """Per question, its term share where too few of its terms are known (None: answer it)."""
    if lookup is None:
        return [None] * len(questions)
    shares = [term_share(q, lookup) for q in questions]
    return [s if s.refused() else None for s in shares]
