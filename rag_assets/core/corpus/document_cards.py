"""Document cards: what a person would file a document under, read from the document itself.

A user's file names say nothing ("scan_0042.pdf"), but a document's first page says what it is: an
SEC filing's cover page names its form ("FORM 10-K"), its period ("For the fiscal year ended
December 31, 2022") and its registrant (the line above "(Exact name of registrant as specified in its
charter)"); an earnings release opens with "ACME Reports Fourth Quarter and Full Year 2022 Results"
and "ACME Inc. (NYSE: ACM) today announced"; a manual's title page names its product, model and
version. A card holds those fields, read by rules over the first nodes of the document's tree (and
its title, which a reader takes from the PDF or Office metadata where that is not a file name);
what is not found stays empty. No library reads cover pages, so these are rules, each written
against real first pages (FinanceBench's filings) and the tests' hand-written ones.

Only what the document states is kept: a 10-Q's cover says the quarter's end date, not which fiscal
quarter it is; that is told apart later, with the organisation's fiscal year end from its annual
report's card (core/index/card_matching.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import date, datetime, timedelta

from rag_assets.core.corpus.tree import TreeNode

CARD_NODES = 60  # the first nodes of a tree read for its card (a cover page and a little more)
CARD_PAGES = 3  # ... within its first pages, where the tree knows its pages
# the card's fields an owner may set (cards.yaml); the rest say where the card came from
CARD_FIELDS = ("title", "organisation", "kind", "fiscal_year", "quarter", "date", "product", "model", "version")

SEC_FORMS = ("10-K", "10-Q", "8-K", "20-F", "40-F", "6-K", "11-K", "S-1", "S-4", "DEF 14A")
EARNINGS_RELEASE = "earnings release"
MANUAL = "manual"

_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_DATE = rf"(?:{_MONTHS})\.?\s+\d{{1,2}}\s*,\s*(?:19|20)\d\d"
_FORMS = "|".join(re.escape(f) for f in SEC_FORMS)
# a cover page's form: a line of its own ("Form 10-K"), or in capitals ("3M COMPANY FORM 10-K");
# prose's "our Quarterly Report on Form 10-Q" is not one
_FORM = re.compile(rf"^\W*FORM\s+({_FORMS})\W*$|\bFORM\s+({_FORMS})\b", re.IGNORECASE)
_YEAR_ENDED = re.compile(rf"\b(?:fiscal\s+)?year[\"”)]*\s+ended:?\s*({_DATE})", re.IGNORECASE)
_PERIOD_ENDED = re.compile(
    rf"\b(?:quarterly\s+period|quarter|three\s+months|periods?|weeks)\s+ended:?.{{0,40}}?({_DATE})", re.IGNORECASE
)
_REPORT_DATE = re.compile(rf"\bDate\s+of\s+report[^:]{{0,60}}:\s*({_DATE})", re.IGNORECASE)
_REGISTRANT = re.compile(r"\(?\s*exact\s+name\s+of\s+(?:the\s+)?registrant", re.IGNORECASE)
_ORDINAL = {"first": 1, "second": 2, "third": 3, "fourth": 4}
_QUARTER = re.compile(r"\b(first|second|third|fourth)[-\s]+quarter\b|\bQ([1-4])\b|\b([1-4])Q\b", re.IGNORECASE)
_FISCAL_YEAR = re.compile(
    r"\b(?:fiscal(?:\s+year)?|full[-\s]+year|FY)\s*'?((?:19|20)\d\d)\b"
    r"|\bquarter\s+(?:of\s+)?(?:fiscal\s+)?((?:19|20)\d\d)\b"
    r"|\b((?:19|20)\d\d)\s+(?:first|second|third|fourth)[-\s]+quarter\b",
    re.IGNORECASE,
)
_RELEASE = re.compile(
    r"\b(?:reports?|announces?|announced|posts?)\b.{0,80}?\bresults\b|\bearnings\s+release\b", re.IGNORECASE
)
_TICKER = re.compile(r"([A-Z0-9][\w.,&'’ -]{1,80}?)\s*\((?:NYSE|NASDAQ|Nasdaq|NYSE American|ASX|LSE|TSX)\s*:")
_REPORTER = re.compile(r"^(.{2,60}?)\s+(?:reports?|announces?|posts?)\b", re.IGNORECASE)
_MANUAL = re.compile(r"\b(user(?:'s|’s)?\s+(?:manual|guide)|owner(?:'s|’s)?\s+manual|instruction\s+manual)\b", re.I)
_PRODUCT = re.compile(
    r"^(.{2,80}?)\s*[-–:]?\s*(?:user(?:'s|’s)?\s+(?:manual|guide)|owner(?:'s|’s)?\s+manual|instruction\s+manual)",
    re.IGNORECASE,
)
_MODEL = re.compile(r"\bmodel(?:\s+(?:no\.?|number))?\s*[:#]?\s*([A-Z0-9][A-Z0-9./-]{2,})", re.IGNORECASE)
_VERSION = re.compile(r"\b(?:version|ver\.|rev(?:ision)?\.?)\s*:?\s*(\d+(?:\.\d+)*[a-z]?)\b", re.IGNORECASE)
_COPYRIGHT = re.compile(
    r"(?:©|\(c\)|copyright)\s*(?:(?:19|20)\d\d\s*)?([A-Z][\w&.,' -]{1,60}?)(?:\.\s|,|\s+all\s+rights|$)"
)
# cover-page lines that name no registrant
_BOILERPLATE = re.compile(
    r"transition\s+period|commission\s+file|pursuant|securities|washington|\(state|^\W*$|^(?:form|or)\b", re.IGNORECASE
)
# titles and first headings that say what kind of page this is, not what document it is
_GENERIC = re.compile(
    r"^(?:untitled|united states|securities and exchange commission|washington|form\s|\(mark one\)|for immediate release"
    r"|table of contents|☒|☐|þ|annual report pursuant|quarterly report pursuant|current report|commission file|or$)",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class DocumentCard:
    """What a document would be filed under; '' or None where the document does not say."""

    doc_id: str
    title: str = ""
    organisation: str = ""
    kind: str = ""  # an SEC form ("10-K"), "earnings release", "manual", "annual report", or ''
    fiscal_year: int | None = None  # the fiscal year the document states it is about
    quarter: int | None = None  # the fiscal quarter it states (1-4)
    date: str = ""  # ISO date: the period's end (report, release) or the event's (8-K)
    product: str = ""
    model: str = ""
    version: str = ""
    from_sidecar: tuple[str, ...] = field(default=())  # the fields the owner's cards.yaml set

    def period(self) -> str:
        """The period in a person's words: "FY2022", "Q2 FY2023", "2022-05-20" or ''."""
        if self.fiscal_year and self.quarter:
            return f"Q{self.quarter} FY{self.fiscal_year}"
        if self.fiscal_year:
            return f"FY{self.fiscal_year}"
        if self.quarter:
            return f"Q{self.quarter}"
        return self.date

    def with_fields(self, values: dict[str, object]) -> DocumentCard:
        """This card with `values` set by its owner (names from CARD_FIELDS), noted in `from_sidecar`."""
        unknown = sorted(set(values) - set(CARD_FIELDS))
        if unknown:
            raise ValueError(f"unknown card field(s) {', '.join(unknown)}; expected {', '.join(CARD_FIELDS)}")
        return replace(self, **values, from_sidecar=tuple(dict.fromkeys([*self.from_sidecar, *values])))


def card_lines(nodes: Sequence[TreeNode], limit: int = CARD_NODES, pages: int = CARD_PAGES) -> list[str]:
    """The texts of a tree's first nodes (root included) that a card is read from."""
    return [n.text for n in nodes[:limit] if not n.page_start or n.page_start <= pages]


def extract_card(doc_id: str, title: str, lines: Sequence[str]) -> DocumentCard:
    """The card of a document whose title is `title` and whose first nodes read `lines`."""
    # rules drawn as underscores or dashes are no line of text
    lines = [" ".join(line.split()) for line in lines if re.search(r"[^\W_]", line)]
    title = _without_file_name(title, doc_id)
    head = " ".join(lines[:40])
    top = " ".join([title, *lines[:12]])
    kind = _kind(lines, top, head)
    organisation = _organisation(lines, head)
    fiscal_year, quarter, when = _period(kind, head, top)
    product, model, version = _product(title, lines, kind)
    return DocumentCard(
        doc_id=doc_id,
        title=_title(title, lines, organisation, kind, fiscal_year, when),
        organisation=organisation,
        kind=kind,
        fiscal_year=fiscal_year,
        quarter=quarter,
        date=when,
        product=product,
        model=model,
        version=version,
    )


def _without_file_name(title: str, doc_id: str) -> str:
    """The title less what the reader took from the file's name: a title that is only the name
    (a document with none), or a cover's largest line followed by it ("FORM 10-K (ACME 2022 10K)",
    parsers/pdf.py `pdf_title`)."""
    if _file_stem(title) == _file_stem(doc_id):
        return ""
    named = re.match(r"^(.*?)\s*\(([^()]*)\)$", title)
    return named.group(1) if named and _file_stem(named.group(2)) == _file_stem(doc_id) else title


def _file_stem(name: str) -> str:
    stem = name.rsplit("/", 1)[-1]
    stem = stem.rsplit(".", 1)[0] if "." in stem else stem
    return re.sub(r"[\W_]+", " ", stem).strip().casefold()


def card_from_nodes(doc_id: str, title: str, nodes: Sequence[TreeNode]) -> DocumentCard:
    """The card of a document from its tree's first nodes."""
    return extract_card(doc_id, title, card_lines(nodes))


def _kind(lines: list[str], top: str, head: str) -> str:
    for line in lines[:25]:
        form = _FORM.search(line)
        if form and (form.group(1) or "FORM " in line):
            return (form.group(1) or form.group(2)).upper()
    if _RELEASE.search(head):
        return EARNINGS_RELEASE
    if _MANUAL.search(top):
        return MANUAL
    if re.search(r"\bannual\s+report\b", top, re.IGNORECASE):
        return "annual report"
    return ""


def _organisation(lines: list[str], head: str) -> str:
    for i, line in enumerate(lines[:40]):
        found = _REGISTRANT.search(line)
        if found:
            before = line[: found.start()].strip(" (") or (lines[i - 1] if i else "")
            if not _BOILERPLATE.search(before):
                return _clean_name(before)
            break
        if re.match(r"commission\s+file", line, re.IGNORECASE) and i + 1 < len(lines):
            after = lines[i + 1]  # 3M's and Microsoft's covers name the registrant after the file number
            if len(after.split()) <= 6 and not _BOILERPLATE.search(after) and not _REGISTRANT.search(after):
                return _clean_name(after)
    ticker = _TICKER.search(head)
    if ticker:  # "New Brunswick, N.J. (July 20, 2023) – Johnson & Johnson (NYSE: JNJ) today announced"
        return _clean_name(re.split(r"--|–|—|\)\s|\s-\s", ticker.group(1))[-1])
    for line in lines[:6]:
        reporter = _REPORTER.match(line)
        if reporter and _RELEASE.search(line) and re.match(r"[^\W_][^|]*$", reporter.group(1)):
            return _clean_name(reporter.group(1))
    copyright_ = _COPYRIGHT.search(head)
    return _clean_name(copyright_.group(1)) if copyright_ else ""


def _clean_name(name: str) -> str:
    name = re.sub(r"\s+([.,])", r"\1", " ".join(name.split()))  # "NIKE, Inc ." -> "NIKE, Inc."
    return name.strip(" -–—:;|")


def _parse_date(text: str) -> date | None:
    text = re.sub(r"\s*,\s*", ", ", text.replace(".", ""))
    try:
        return datetime.strptime(" ".join(text.split()), "%B %d, %Y").date()
    except ValueError:
        return None


def fiscal_year_of(end: date) -> int:
    """The fiscal year a year ending on `end` is named by: its end's year, a 52/53-week year ending in
    the first days of a month counted with the month before (NIKE's "May 31", Pfizer's "July 2")."""
    return (end - timedelta(days=10)).year


def _period(kind: str, head: str, top: str) -> tuple[int | None, int | None, str]:
    """(fiscal year, quarter, ISO date) the document states."""
    year_ended = _YEAR_ENDED.search(head)
    period_ended = _PERIOD_ENDED.search(head)
    reported = _REPORT_DATE.search(head)
    stated = next((m for m in (reported, year_ended, period_ended) if m), None)
    when = _parse_date(stated.group(1)) if stated else None
    if kind == "10-K" and year_ended and when:
        return fiscal_year_of(when), None, when.isoformat()
    if kind in SEC_FORMS:  # a 10-Q or 8-K cover states a date, not the fiscal period
        return None, None, when.isoformat() if when else ""
    quarter = _QUARTER.search(top)
    fiscal = _FISCAL_YEAR.search(top)
    number = None
    if quarter:
        number = _ORDINAL[quarter.group(1).lower()] if quarter.group(1) else int(quarter.group(2) or quarter.group(3))
    fiscal_year = int(next(g for g in fiscal.groups() if g)) if fiscal else None
    if fiscal_year is None and year_ended and when:
        fiscal_year = fiscal_year_of(when)
    return fiscal_year, number, when.isoformat() if when else ""


def _product(title: str, lines: list[str], kind: str) -> tuple[str, str, str]:
    if kind in SEC_FORMS or kind == EARNINGS_RELEASE:
        return "", "", ""
    text = " ".join([title, *lines[:20]])
    named = next((m for m in (_PRODUCT.match(t) for t in [title, *lines[:6]]) if m), None)
    model = _MODEL.search(text)
    version = _VERSION.search(text)
    return (
        _clean_name(named.group(1)) if named else "",
        model.group(1).rstrip(".") if model else "",
        version.group(1) if version else "",
    )


def _title(title: str, lines: list[str], organisation: str, kind: str, fiscal_year: int | None, when: str) -> str:
    """The document's own title unless it is a cover page's boilerplate (or only the registrant's
    name); then a filing is titled by its registrant, form and period, anything else by its first
    heading that is not boilerplate."""
    title = " ".join(title.split())
    if title and not _GENERIC.match(title) and title.casefold() != organisation.casefold():
        return title
    if organisation and kind:
        label = f"Form {kind}" if kind in SEC_FORMS else kind
        period = f" for fiscal year {fiscal_year}" if fiscal_year else (f" for the period ended {when}" if when else "")
        if kind == "8-K" and when:
            period = f" of {when}"
        return f"{organisation} {label}{period}"
    return next((line for line in lines[:10] if _names_the_document(line)), "")


def _names_the_document(line: str) -> bool:
    """Whether a first line could title its document: not a cover page's boilerplate."""
    boilerplate = _GENERIC.match(line) or _BOILERPLATE.search(line) or _REGISTRANT.search(line)
    return not boilerplate and len(line.split()) > 1 and not re.match(r"\(|for the\b", line, re.IGNORECASE)


def card_values(card: DocumentCard) -> dict[str, object]:
    """The card's fields by name (doc id and sidecar note included), for tables and JSON."""
    return {f.name: getattr(card, f.name) for f in fields(card)}
