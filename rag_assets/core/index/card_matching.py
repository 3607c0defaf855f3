"""The documents a question names, from the documents' cards (core/corpus/document_cards.py).

"What was AMCOR's quick ratio in FY2023?" names a company and a period; the cards say which
documents are whose and of which period, whatever their files are called. So:

- the question names an organisation (or a product) when it holds all of the name's words
  ("American Water Works", "Coca Cola"), the name joined ("Footlocker"), its initials as an acronym
  ("AMD": Advanced Micro Devices) or its first word written as a name ("Boeing's", "MGM"; a
  lower-case "best" names no Best Buy); company suffixes ("Inc.", "plc", "Corporation") are no part
  of a name. Of the names a question holds, those holding most of their words win ("American
  Express" is not "American Water Works"). No name held: nothing is restricted (None).
- of the named organisations' documents, those of a period the question names ("FY2022", "2022",
  "FY20", "Q2 2023", "Q22023", "FY2023Q1") are kept; none of that period: all of them are (a
  question about FY2019 answered from the FY2021 report's comparatives). A named quarter, then a
  named form ("10-K", "8-K", "earnings"), narrows further only where some kept document has it.
- a 10-Q's cover says "for the quarterly period ended December 31, 2022", not "Q2 FY2023": the
  fiscal year and quarter of an interim document are told from that date and its organisation's
  fiscal year end, read off the organisation's annual report card (December where it has none).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date

from rag_assets.core.corpus.document_cards import SEC_FORMS, DocumentCard, fiscal_year_of

# words of a name that say what kind of company it is, not which
_SUFFIXES = frozenset(
    [
        "the",
        "inc",
        "incorporated",
        "corp",
        "corporation",
        "co",
        "company",
        "companies",
        "plc",
        "ltd",
        "limited",
        "llc",
        "lp",
        "sa",
        "ag",
        "nv",
        "se",
        "group",
        "holdings",
        "com",
    ]
)
_WORD = re.compile(r"[A-Za-z0-9]+")
_PERIOD = re.compile(
    r"\bFY\s*'?(\d{4}|\d{2})(?:\s*Q([1-4]))?\b"  # FY2022, FY 2023, FY20, FY2023Q1
    r"|\bQ([1-4])\s*(?:of\s+)?(?:FY\s*)?'?\s*((?:19|20)\d\d)\b"  # Q2 2023, Q22023, Q2'2023, Q2 of FY2023
    r"|\b((?:19|20)\d\d)\b",  # 2022
    re.IGNORECASE,
)
_QUARTER_WORDS = re.compile(r"\b(?:Q([1-4])|(first|second|third|fourth)\s+quarter)\b", re.IGNORECASE)
_ORDINAL = {"first": 1, "second": 2, "third": 3, "fourth": 4}
_KINDS = {
    "10-K": re.compile(r"\b10-?K\b|\bannual\s+report\b", re.IGNORECASE),
    "10-Q": re.compile(r"\b10-?Q\b|\bquarterly\s+report\b", re.IGNORECASE),
    "8-K": re.compile(r"\b8-?K\b", re.IGNORECASE),
    "earnings release": re.compile(r"\bearnings\s+(?:release|report|call)\b|\bpress\s+release\b", re.IGNORECASE),
}


@dataclass(frozen=True, slots=True)
class CardMatch:
    """The documents a question names by their cards ([]: none, search all) and why ("names
    AMCOR PLC; of FY2023; Q2")."""

    doc_ids: list[str]
    reason: str


@dataclass(frozen=True, slots=True)
class QuestionPeriod:
    years: frozenset[int]
    quarter: int | None


def name_words(name: str) -> list[str]:
    """A name's words (lower case) without its company suffixes: "The Kraft Heinz Company" -> kraft, heinz."""
    return [w for w in (w.lower() for w in _WORD.findall(name.replace("&", " "))) if w not in _SUFFIXES]


def question_period(question: str) -> QuestionPeriod:
    """The fiscal years and the quarter a question names."""
    years: set[int] = set()
    quarter = None
    for fy, fy_quarter, q, q_year, year in _PERIOD.findall(question):
        if fy:
            years.add(int(fy) if len(fy) == 4 else 2000 + int(fy))
            quarter = int(fy_quarter) if fy_quarter else quarter
        elif q:
            years.add(int(q_year))
            quarter = int(q)
        else:
            years.add(int(year))
    if quarter is None:
        named = _QUARTER_WORDS.search(question)
        if named:
            quarter = int(named.group(1)) if named.group(1) else _ORDINAL[named.group(2).lower()]
    return QuestionPeriod(frozenset(years), quarter)


def name_held(name: str, question: str) -> int:
    """How strongly `question` names `name`: the name's words it holds (0: it does not name it)."""
    words = name_words(name)
    if not words:
        return 0
    tokens = _WORD.findall(question.replace("&", " "))
    lower = [t.lower() for t in tokens]
    held = set(lower)
    joined = {"".join(lower[i : i + n]) for n in range(2, 5) for i in range(len(lower) - n + 1)}
    count = sum(1 for w in dict.fromkeys(words) if w in held)
    if all(w in held for w in words) or "".join(words) in held | joined:
        return len(words) + 1
    capitalised = {t.lower() for t in tokens if t[0].isupper() or t[0].isdigit()}
    initials = "".join(w[0] for w in words) if len(words) > 1 else ""
    acronyms = {t.lower() for t in tokens if t.isupper() and len(t) > 1}
    if words[0] in capitalised or initials in acronyms:
        return max(count, 1)
    return 0


def organisations(cards: Sequence[DocumentCard]) -> dict[str, str]:
    """name -> the organisation it names, one key for the names of one organisation: a name whose
    words begin another's ("ADOBE INC." and "ADOBE SYSTEMS INCORPORATED") or spell it with other
    spaces ("MGM R ESORTS I NTERNATIONAL", as a small-capitals cover reads) names the same one."""
    keys: dict[str, str] = {}
    for name in sorted({n for c in cards for n in (c.organisation, c.product) if n}, key=lambda n: len(name_words(n))):
        words = name_words(name)
        joined = "".join(words)
        keys[name] = next(
            (
                key
                for other, key in keys.items()
                if words[: len(name_words(other))] == name_words(other) or joined == key
            ),
            joined,
        )
    return keys


def fiscal_year_ends(cards: Sequence[DocumentCard], keys: dict[str, str]) -> dict[str, int]:
    """organisation key -> the month its fiscal year ends, from its annual reports' dates."""
    ends: dict[str, int] = {}
    for card in cards:
        if card.kind in ("10-K", "20-F", "annual report") and card.date and card.organisation:
            ends[keys[card.organisation]] = _month_of(date.fromisoformat(card.date))
    return ends


def _month_of(end: date) -> int:
    return date.fromordinal(end.toordinal() - 10).month  # a 52/53-week period ending "July 2" ends June's


def with_fiscal_period(card: DocumentCard, year_end_month: int) -> DocumentCard:
    """An interim document's card with the fiscal year and quarter its period-end date lies in, where
    the document does not state them (an 8-K's date is an event's, not a period's)."""
    if card.kind in ("8-K", "10-K") or not card.date or (card.fiscal_year and card.quarter):
        return card
    end = date.fromisoformat(card.date)
    month = _month_of(end)
    fiscal_year = fiscal_year_of(end) + (1 if month > year_end_month else 0)
    quarter = ((month - year_end_month - 1) % 12) // 3 + 1
    return replace(card, fiscal_year=card.fiscal_year or fiscal_year, quarter=card.quarter or quarter)


def card_years(card: DocumentCard) -> set[int]:
    """The years a card's document is about: its fiscal year, else its date's year."""
    if card.fiscal_year:
        return {card.fiscal_year}
    return {int(card.date[:4])} if card.date else set()


class CardIndex:
    """Cards prepared once for many questions: the organisations' keys, and each interim card's
    fiscal period from its organisation's year end (a collection's cards change per run, its
    questions per ask)."""

    def __init__(self, cards: Sequence[DocumentCard]) -> None:
        self.keys = organisations(cards)
        ends = fiscal_year_ends(cards, self.keys)
        self.cards = [with_fiscal_period(c, ends.get(self.keys.get(c.organisation, ""), 12)) for c in cards]

    def match(self, question: str) -> CardMatch:
        """The documents `question` names by these cards, best named first."""
        return _matched(self.cards, self.keys, question)


def match_cards(cards: Sequence[DocumentCard], question: str) -> CardMatch:
    """The documents `question` names by these cards (one question: `CardIndex` for many)."""
    return CardIndex(cards).match(question)


def _matched(cards: Sequence[DocumentCard], keys: dict[str, str], question: str) -> CardMatch:
    held: dict[str, int] = {}
    for name, key in keys.items():
        held[key] = max(held.get(key, 0), name_held(name, question))
    best = max(held.values(), default=0)
    if best == 0:
        return CardMatch([], "names no organisation or product on them")
    winners = {key for key, strength in held.items() if strength == best}
    named = [c for c in cards if {keys.get(c.organisation), keys.get(c.product)} & winners]
    who = ", ".join(sorted({c.organisation or c.product for c in named}))
    period = question_period(question)
    why = [f"names {who}"]
    kept = [c for c in named if card_years(c) & period.years]
    if kept:
        why.append("of " + ", ".join(f"FY{y}" for y in sorted(period.years)))
    elif period.years:
        why.append(f"none of {', '.join(str(y) for y in sorted(period.years))}: all of theirs")
    kept = kept or named
    if period.quarter and any(c.quarter == period.quarter for c in kept):
        kept = [c for c in kept if c.quarter == period.quarter]
        why.append(f"Q{period.quarter}")
    for kind, pattern in _KINDS.items():
        if pattern.search(question) and any(c.kind == kind for c in kept):
            kept = [c for c in kept if c.kind == kind]
            why.append(f"form {kind}" if kind in SEC_FORMS else kind)
            break
    return CardMatch(sorted(c.doc_id for c in kept), "; ".join(why))
