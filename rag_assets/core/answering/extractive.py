"""The extractive answer: the sentence, list item or table row of the evidence that best answers
the question, returned as it stands in the document, with its citation narrowed to it.

The reader is not asked: each cited node's text is cut into sentences (a list item or a table
row is one node, so one unit), every unit is scored against the question by the collection's
trained passage reranker (a cross-encoder) where one is published, else by the embedder's
similarity, and the best unit is the answer, whole: a quote a person can check against its
citation. (A span cut out of it scored better by token F1 against short gold answers, and was
often a wrong phrase — "executed, nothing happens" for "what does pass do?" — where the sentence
said "pass is a null operation".) With `short` answers asked for, a question that asks for a
kind of thing (a date for "when", a figure for "how many / how much", a name for "who") is
answered from the best of the `TYPED_CANDIDATES` top-scored units that holds one (a sentence
about the topic without the date or name is no answer to it), else from the best unit. The first
citation is the sentence; the other nodes follow as the evidence also given.

A generated answer the reader left empty (the small reader sometimes stops at once) is answered
the same way from the evidence it was given (`answered_when_empty`): an empty answer answers
nothing and rests on nothing, a sentence of the evidence at least cites where to read.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rag_assets.core.answering.attribution import EXTRACTIVE
from rag_assets.core.answering.types import AnswerOutcome, Citation, PairScorer

# what an extractive answer says it is (the answer's note, the page and `rag ask`)
EXTRACTIVE_NOTE = "extractive: the best sentence of the evidence"
READER_EMPTY_NOTE = "extractive: the reader wrote nothing, so the answer is the best sentence of the evidence"
_SENTENCE = re.compile(r"[^\s][^\n]*?(?:[.!?]+[\"')\]]*(?=\s|$)|(?=\n)|$)")
_WORD = re.compile(r"\w+")
MIN_UNIT_CHARS = 3
# how many of the best-scored units a "when / how many / who" question looks through for one
# that holds the kind of thing it asks for
TYPED_CANDIDATES = 5


@dataclass(frozen=True, slots=True)
class Unit:
    citation: int  # index into the citations given
    start: int  # offsets inside the citation's text
    end: int
    text: str


def units(citations: Sequence[Citation]) -> list[Unit]:
    """Every sentence (a list item or a table row is one) of the cited texts, in citation order."""
    out = []
    for i, cite in enumerate(citations):
        for m in _SENTENCE.finditer(cite.text):
            text = m.group(0).strip()
            if len(text) >= MIN_UNIT_CHARS:
                out.append(Unit(i, m.start(), m.start() + len(text), text))
    return out


class EmbedderScorer:
    """Cosine similarity of the packaged embedder: the scorer where no reranker was trained."""

    def __init__(self, embedder) -> None:
        self.embedder = embedder

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        vectors = self.embedder.encode([query, *texts], progress=False)
        return [float(s) for s in np.asarray(vectors[1:]) @ np.asarray(vectors[0])]


# function words a short span does not start or end with
_EDGE_TEXT = (
    "a an the of to in on at by for with from and or but nor is are was were be been being it its this "
    "that these those as so than then which who whom whose when where"
)
EDGE_WORDS = frozenset(_EDGE_TEXT.split())


def _stem(word: str) -> str:
    return word.lower().rstrip("s")[:6]


_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
# "May 3, 2017", "3 May 2017"
_FULL_DATE = rf"(?:{_MONTHS})\s+\d{{1,2}}\s*,?\s*\d{{4}}|\d{{1,2}}\s+(?:{_MONTHS})\s+\d{{4}}"
_NUMBER = r"[$€£]?\(?\d[\d,]*(?:\.\d+)?\)?(?:\s*(?:%|percent\b|million\b|billion\b|thousand\b))?"
# what kind of thing a question asks for -> the pattern of its answer in a sentence
_ASKS = (
    (
        re.compile(r"^\s*(?:when|what year|which year|what date|in what year)\b", re.IGNORECASE),
        re.compile(rf"\b(?:{_FULL_DATE}|(?:{_MONTHS})\s+\d{{4}}|(?:1[5-9]|20)\d\d)\b"),
    ),
    (
        re.compile(
            r"^\s*(?:how (?:many|much|long|old|far|big|tall)|what (?:percentage|percent|number|amount)"
            r"|what (?:is|was|were|are) the (?:\w+ ){0,6}(?:amount|number|total|ratio|rate|margin|percentage|count))\b",
            re.IGNORECASE,
        ),
        re.compile(rf"(?<![\w.]){_NUMBER}(?:\s+(?!(?:{_EDGE_TEXT.replace(' ', '|')})\b)[a-z]+)?", re.IGNORECASE),
    ),
    (
        re.compile(r"^\s*(?:who|whom|whose)\b", re.IGNORECASE),
        re.compile(r"\b[A-Z][\w'’.-]*(?:\s+(?:(?:of|the|de|da|van|von|del|le)\s+)?[A-Z][\w'’.-]*)*"),
    ),
)


# capitalised at a sentence's start, yet no name: "Three franchises have lost ..."
_NOT_NAMES = frozenset(
    """one two three four five six seven eight nine ten eleven twelve first second third fourth fifth
    many most some several all both each every no none other another there here however although
    after before during since until while if when""".split()  # noqa: SIM905
)
# a date with its month: its day and year are no counts
_DATED = re.compile(rf"\b(?:{_FULL_DATE}|(?:{_MONTHS})\s+\d{{1,2}}|(?:{_MONTHS})\s+\d{{4}})\b")


def asks_for_kind(question: str) -> bool:
    """Whether the question asks for a date, a figure or a name (see `typed_span`)."""
    return any(asks.search(question) for asks, _ in _ASKS)


def _no_answer(kind: int, sentence: str, start: int, words: list[str]) -> bool:
    """A match that is not the kind asked for: a number that is a date's day ("May 3"), a lone
    capitalised number or function word taken for a name."""
    if kind == 1 and any(date.start() <= start < date.end() for date in _DATED.finditer(sentence)):
        return True
    return kind == 2 and len(words) == 1 and words[0].lower() in _NOT_NAMES


def typed_span(question: str, sentence: str) -> tuple[int, int] | None:
    """(start, end) of the first thing in `sentence` of the kind the question asks for (a date for
    "when", a figure for "how many", a name for "who") that the question does not already say;
    None when the question asks for no such kind or the sentence holds none."""
    asked = {_stem(w) for w in _WORD.findall(question)}
    asked |= set(re.findall(r"\d+", question))  # "FY2018" asks about 2018: no answer
    for kind, (asks, answer) in enumerate(_ASKS):
        if not asks.search(question):
            continue
        for found in answer.finditer(sentence):
            words = [w for w in _WORD.findall(found.group(0).replace(",", "")) if w.lower() not in EDGE_WORDS]
            if _no_answer(kind, sentence, found.start(), words):
                continue
            if words and not all(_stem(w) in asked for w in words):
                # a unit word the question says ("how many episodes": "10 episodes") is left out
                text = found.group(0)
                if len(words) > 1 and _stem(words[-1]) in asked and not text[-1].isdigit():
                    return found.start(), found.start() + len(text) - len(words[-1]) - 1
                return found.start(), found.end()
        return None
    return None


@dataclass(frozen=True, slots=True)
class Extracted:
    answer: str  # '' when the evidence has no sentence
    citations: list[Citation]  # the sentence's citation first, then every other citation given
    supporting: int  # 1 (the sentence) or 0 (no evidence)
    method: str


def extract_answer(question: str, citations: Sequence[Citation], scorer: PairScorer, *, short: bool) -> Extracted:
    """The best unit of `citations` for `question` as the answer, cited at its span."""
    found = units(citations)
    if not found:
        return Extracted("", list(citations), 0, "")
    scores = scorer.scores(question, [u.text for u in found])
    ranked = sorted(range(len(found)), key=lambda i: (-scores[i], i))
    best = found[ranked[0]]
    if short and asks_for_kind(question):
        holding = [found[i] for i in ranked[:TYPED_CANDIDATES] if typed_span(question, found[i].text) is not None]
        best = holding[0] if holding else best
    cite = citations[best.citation]
    sentence = dataclasses.replace(
        cite, text=best.text, span_start=cite.span_start + best.start, span_end=cite.span_start + best.end
    )
    answer = best.text  # a quote: the whole unit, which a person can check against its citation
    rest = [c for i, c in enumerate(citations) if i != best.citation]
    return Extracted(answer, [sentence, *rest], 1, EXTRACTIVE)


def answered_when_empty(outcome: AnswerOutcome, scorer: PairScorer | None, *, short: bool) -> AnswerOutcome:
    """`outcome` as it is, or, where the reader wrote nothing, answered extractively from the
    evidence it was given (`answer_form` extractive, `reader_empty` set; no scorer: left empty)."""
    if outcome.answer.strip() or scorer is None or not outcome.citations:
        return outcome
    found = extract_answer(outcome.question, outcome.citations, scorer, short=short)
    if not found.answer:
        return outcome
    outcome.answer, outcome.citations, outcome.answer_form = found.answer, found.citations, "extractive"
    outcome.supporting, outcome.attribution, outcome.reader_empty = found.supporting, found.method, True
    return outcome
