"""The documents a question names by their file names (the filing chooser of a shared store of
near-alike filings: company, period and form are in the question and in the file name)."""

from __future__ import annotations

import pytest

from rag_assets.core.index.document_names import DocumentNames, document_names, name_words

pytestmark = pytest.mark.unit

FILINGS = [
    "fb/ACME_2021_10K.pdf",
    "fb/ACME_2022_10K.pdf",
    "fb/ACME_2023Q2_10Q.pdf",
    "fb/AMERICANWATERWORKS_2022_10K.pdf",
    "fb/MGMRESORTS_2020_10K.pdf",
    "fb/MGMRESORTS_2022_10K.pdf",
    "fb/COCACOLA_2017_10K.pdf",
    # thirty other companies' filings over eight years: company words are rare, years and forms not
    *(f"fb/COMPANY{i}_{2015 + i % 8}_10K.pdf" for i in range(30)),
]


@pytest.fixture(scope="module")
def names() -> DocumentNames:
    return DocumentNames(FILINGS)


def test_name_words_split_the_file_name_and_the_years_inside_its_words() -> None:
    assert name_words("fb/ACME_2023Q2_10Q.pdf") == {"acme", "2023q2", "2023", "10q"}
    assert name_words("manuals/The_Kettle-Guide.md") == {"kettle", "guide"}
    # a day or month is no name word: "June 20" would name every filing dated on a 20th
    assert name_words("fb/FOOTLOCKER_2022_8K_dated-2022-05-20.pdf") == {"footlocker", "2022", "8k", "dated"}


def test_company_and_year_name_one_filing(names: DocumentNames) -> None:
    assert names.named_in("What is the FY2022 capital expenditure of Acme?") == ["fb/ACME_2022_10K.pdf"]


def test_a_company_written_in_words_or_with_a_hyphen_names_its_joined_file_name(names: DocumentNames) -> None:
    assert names.named_in("Does American Water Works have positive working capital in FY2022?") == [
        "fb/AMERICANWATERWORKS_2022_10K.pdf"
    ]
    assert names.named_in("What was Coca-Cola's dividend?") == ["fb/COCACOLA_2017_10K.pdf"]


def test_an_acronym_names_the_longer_name_it_starts(names: DocumentNames) -> None:
    assert names.named_in("Which region had the worst topline performance for MGM during FY2022?") == [
        "fb/MGMRESORTS_2022_10K.pdf"
    ]


def test_a_range_of_years_keeps_the_filings_of_both(names: DocumentNames) -> None:
    named = names.named_in("What is Acme's revenue growth from FY2021 to FY2022?")
    assert set(named) == {"fb/ACME_2021_10K.pdf", "fb/ACME_2022_10K.pdf"}


def test_a_year_without_a_filing_keeps_every_filing_of_the_company(names: DocumentNames) -> None:
    assert set(names.named_in("What production rate changes is Acme forecasting for FY2025?")) == {
        "fb/ACME_2021_10K.pdf",
        "fb/ACME_2022_10K.pdf",
        "fb/ACME_2023Q2_10Q.pdf",
    }


def test_a_year_or_a_form_alone_or_no_name_names_nothing(names: DocumentNames) -> None:
    assert names.named_in("What was the total revenue in FY2022 according to the 10-K?") == []
    assert names.named_in("How often should I descale the kettle?") == []
    assert DocumentNames([]).named_in("Acme 2022") == []


def test_the_names_of_one_set_of_documents_are_built_once() -> None:
    first = document_names(tuple(FILINGS))
    assert document_names(tuple(FILINGS)) is first
    assert document_names((*FILINGS, "ACME_2024_10K.pdf")) is not first
    assert document_names((*FILINGS, "ACME_2024_10K.pdf")).named_in("Acme FY2024 revenue?") == ["ACME_2024_10K.pdf"]
