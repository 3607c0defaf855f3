"""Which filing a FinanceBench question names: by the documents' cards against by their file names.

Reads a card for each of FinanceBench's 74 filings from its first three pages with the project's
PDF reader (core/corpus/first_pages.py, core/corpus/document_cards.py), then, for the questions
(all of questions_dev.jsonl, and the dev + test split the project's question loader draws from
it), the documents each names by the cards (core/index/card_matching.py) and by the file names
(core/index/document_names.py): the share of questions whose gold filing is among the named ones
(a question naming none keeps all 74, which hold it), the share for which something was named at
all, and the mean number of documents kept. Prints the cards too, and the questions whose gold
filing the cards miss.

    .venv/bin/python benchmarks/document_cards.py [--data ../shared/datasets/financebench] [--cards]
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from rag_assets.core.corpus.document_cards import DocumentCard
from rag_assets.core.corpus.first_pages import pdf_card
from rag_assets.core.corpus.question_sets import Question, load_questions
from rag_assets.core.evaluation.scoring import same_document
from rag_assets.core.index.card_matching import CardIndex, fiscal_year_ends, organisations, with_fiscal_period
from rag_assets.core.index.document_names import DocumentNames

REPO = Path(__file__).resolve().parents[1]
COLLECTION = "financebench"


def read_cards(pdfs: Path) -> list[DocumentCard]:
    return [pdf_card(path, f"{COLLECTION}/{path.name}") for path in sorted(pdfs.glob("*.pdf"))]


FORMS = {"10K": "10-K", "10Q": "10-Q", "8K": "8-K", "EARNINGS": "earnings release"}
FILE_NAME = re.compile(r"^.+?_(\d{4})(?:Q([1-4]))?_(10K|10Q|8K|EARNINGS)", re.IGNORECASE)


def agreement(cards: Sequence[DocumentCard]) -> tuple[int, int, list[str]]:
    """(cards whose kind is the file name's form, cards whose period is the file name's year and
    quarter, the disagreeing ones): FinanceBench's file names are labels a person gave each filing.
    A card's fiscal year and quarter as matching reads them (an interim one's from its date)."""
    keys = organisations(cards)
    ends = fiscal_year_ends(cards, keys)
    kinds = periods = 0
    wrong = []
    for card in cards:
        label = FILE_NAME.match(card.doc_id.rsplit("/", 1)[-1])
        if label is None:
            continue
        year, quarter, form = int(label.group(1)), label.group(2), FORMS[label.group(3).upper()]
        read = with_fiscal_period(card, ends.get(keys.get(card.organisation, ""), 12))
        if form == "8-K":
            same_period = read.date[:4] == str(year)
        else:
            same_period = read.fiscal_year == year and (quarter is None or read.quarter == int(quarter))
        kinds += read.kind == form
        periods += same_period
        if read.kind != form or not same_period:
            wrong.append(f"{card.doc_id}: {read.kind} {read.period()} {read.date}")
    return kinds, periods, wrong


def measure(questions: Sequence[Question], named: Callable[[str], list[str]], doc_ids: list[str]) -> dict:
    """found: gold among the kept documents; alone: the gold one alone kept; named: something was
    named; kept: mean documents kept (all of them where none is named); kept_named: mean where some are."""
    found = alone = kept = kept_named = 0
    missed, unnamed = [], []
    for q in questions:
        chosen = named(q.query)
        if chosen:
            kept_named += len(chosen)
        else:
            unnamed.append(q)
        chosen = chosen or doc_ids  # nothing named: the whole collection is searched
        kept += len(chosen)
        gold = [d for d in chosen if same_document(d, q.gold_doc)]
        found += bool(gold)
        alone += bool(gold) and len(chosen) == 1
        if not gold:
            missed.append(q)
    n = max(len(questions), 1)
    named_count = max(len(questions) - len(unnamed), 1)
    return {
        "found": found / n,
        "alone": alone / n,
        "named": 1 - len(unnamed) / n,
        "kept": kept / n,
        "kept_named": kept_named / named_count,
        "missed": missed,
        "unnamed": unnamed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "datasets" / "financebench")
    parser.add_argument("--cards", action="store_true", help="print every card")
    args = parser.parse_args()
    cards = read_cards(args.data / "pdfs")
    index = CardIndex(cards)
    doc_ids = [c.doc_id for c in cards]
    if args.cards:
        for c in cards:
            print(f"{c.doc_id:50} {c.organisation[:32]:32} {c.kind:16} {c.period():12} {c.date:10} {c.title[:50]}")
    kinds, periods, wrong = agreement(cards)
    print(f"cards agreeing with the file names' labels: kind {kinds}/{len(cards)}, period {periods}/{len(cards)}")
    for line in wrong:
        print("  disagrees:", line)
    questions, problems = load_questions(str(args.data / "questions_dev.jsonl"))
    for problem in problems:
        print("skipped:", problem)
    names = DocumentNames(doc_ids)
    ways = {
        "cards": lambda q: index.match(q).doc_ids,
        "file names": names.named_in,
        "cards, else file names (--by-name)": lambda q: index.match(q).doc_ids or names.named_in(q),
    }
    sets = {"all": questions, "dev+test": [q for q in questions if q.split in ("dev", "test")]}
    print(
        f"{len(cards)} filings, cards with an organisation: {sum(bool(c.organisation) for c in cards)}, "
        f"a kind: {sum(bool(c.kind) for c in cards)}, a period: {sum(bool(c.period()) for c in cards)}"
    )
    print(
        "| questions | n | chosen by | gold kept | gold alone kept | something named | mean kept "
        "| mean kept where named |"
    )
    print("|---|---|---|---|---|---|---|---|")
    results = {}
    for label, chosen in sets.items():
        for way, named in ways.items():
            result = results[label, way] = measure(chosen, named, doc_ids)
            print(
                f"| {label} | {len(chosen)} | {way} | {result['found']:.3f} | {result['alone']:.3f} | "
                f"{result['named']:.3f} | {result['kept']:.2f} | {result['kept_named']:.2f} |"
            )
    for way in ways:
        for q in results["all", way]["unnamed"]:
            print(f"{way} name nothing for {q.gold_doc}: {q.query[-120:]!r}")
    for q in results["all", "cards"]["missed"]:
        match = index.match(q.query)
        print(f"cards miss {q.gold_doc}: kept {match.doc_ids[:4]} ({match.reason}); {q.query[-160:]!r}")


if __name__ == "__main__":
    main()
