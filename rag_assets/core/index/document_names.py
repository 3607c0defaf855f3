"""The documents a question names, from the words of the documents' file names.

A collection of near-alike documents told apart by their names (ACME_2022_10K.pdf,
ACME_2023Q2_10Q.pdf, ...) is searched in the wrong one: several years of one company's filings read
almost alike, so the best passage for "ACME's FY2022 capital expenditure" may well lie in the 2021
filing. The question names what it is about (company, period, form), and the file names say it
too. So a document is named by a question when the question holds words of its name:

- a name is split into its words, and the years inside them ("2023Q2" -> 2023q2 and 2023);
- a question's words count alone, joined with the next one to three ("American Water Works" names
  AMERICANWATERWORKS, "10-K" names 10K, "Coca-Cola" COCACOLA), with the years inside them
  ("FY2022" -> 2022), and an acronym of three or more capitals names a longer name word it starts
  ("MGM" names MGMRESORTS);
- a document scores the inverse document frequency of its name words the question holds, and the
  named documents are those scoring at least `KEEP_SHARE` of the best. So "from FY2020 to FY2022"
  keeps both years' filings, and a question about a year the company has no filing for keeps all of
  the company's filings;
- nothing is named unless the question holds a rare name word (one at most a tenth of the
  documents share, `RARE_SHARE`): a year or a form alone names no document, and neither does a
  question that names none (then the whole collection is searched, as without this).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from pathlib import PurePosixPath

KEEP_SHARE = 0.75  # named: scoring at least this share of the best-scoring document
RARE_SHARE = 0.1  # a name word at most this share of documents hold makes a question name documents
MAX_JOINED = 4  # consecutive question words joined into one name word ("american water works")
_WORD = re.compile(r"[a-z0-9]+")
_YEAR = re.compile(r"(?:19|20)\d\d")
_ACRONYM = re.compile(r"\b[A-Z][A-Z0-9&]{2,}\b")
# file-name words that tell no document from another
_PLAIN = frozenset(
    "a an and the of to in on for by with from at or as is are was be this that pdf docx md txt html htm json "  # noqa: SIM905
    "doc document file final draft copy new version".split()
)


def name_words(doc_id: str) -> frozenset[str]:
    """The words of a document's file name (its last path part, extension dropped), with the years
    inside them."""
    stem = PurePosixPath(doc_id).name
    stem = stem.rsplit(".", 1)[0] if "." in stem else stem
    words = set(_WORD.findall(stem.lower()))
    words |= {year for word in words for year in _YEAR.findall(word)}
    # a bare number other than a year (a day, a month, a counter) tells a name from nothing a question says
    return frozenset(w for w in words if len(w) > 1 and w not in _PLAIN and (not w.isdigit() or _YEAR.fullmatch(w)))


def question_terms(question: str) -> tuple[set[str], set[str]]:
    """The terms a question can name a document by, and its acronyms (lower-cased)."""
    words = _WORD.findall(question.lower())
    terms = set(words) | {year for word in words for year in _YEAR.findall(word)}
    for size in range(2, MAX_JOINED + 1):
        terms |= {"".join(words[i : i + size]) for i in range(len(words) - size + 1)}
    acronyms = {a.lower().replace("&", "") for a in _ACRONYM.findall(question)}
    return terms, acronyms


class DocumentNames:
    """A collection's documents by the words of their names, to find the ones a question names."""

    def __init__(self, doc_ids: Iterable[str]) -> None:
        self.words = {doc_id: name_words(doc_id) for doc_id in dict.fromkeys(doc_ids)}
        frequency = Counter(w for words in self.words.values() for w in words)
        count = max(len(self.words), 1)
        self.weight = {w: math.log(count / n) for w, n in frequency.items()}
        self.rare = {w for w, n in frequency.items() if n <= max(1, int(count * RARE_SHARE))}

    def held(self, doc_id: str, terms: set[str], acronyms: set[str]) -> set[str]:
        """The words of `doc_id`'s name a question with `terms` and `acronyms` holds."""
        return {
            w for w in self.words[doc_id] if w in terms or any(w.startswith(a) and len(w) > len(a) for a in acronyms)
        }

    def named_in(self, question: str) -> list[str]:
        """The doc ids `question` names, best first ([]: it names none, search them all)."""
        terms, acronyms = question_terms(question)
        held = {doc_id: self.held(doc_id, terms, acronyms) for doc_id in self.words}
        if not any(words & self.rare for words in held.values()):
            return []
        scores = {doc_id: sum(self.weight[w] for w in words) for doc_id, words in held.items()}
        best = max(scores.values())
        named = [doc_id for doc_id, score in scores.items() if score > 0 and score >= KEEP_SHARE * best]
        return sorted(named, key=lambda doc_id: (-scores[doc_id], doc_id))


@lru_cache(maxsize=16)
def document_names(doc_ids: tuple[str, ...]) -> DocumentNames:
    """The `DocumentNames` of these documents, built once (a service asks many questions of one
    collection; its documents change only with a re-index, which changes the key)."""
    return DocumentNames(doc_ids)
