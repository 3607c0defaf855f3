"""Document cards read from hand-written first pages, each field labelled by hand (what a person
filing the document would write), and the owner's cards.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_assets.core.corpus.card_sidecar import read_sidecar
from rag_assets.core.corpus.document_cards import DocumentCard, extract_card
from rag_assets.core.errors import ConfigError

TEN_K = """\
UNITED STATES SECURITIES AND EXCHANGE COMMISSION
Washington, D.C. 20549
FORM 10-K
(Mark One)
☒ ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934
For the fiscal year ended January 31, 2021
OR
☐ TRANSITION REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934
Commission file number 001-12345
NORTHWIND TRADERS, INC.
(Exact name of registrant as specified in its charter)
Delaware | 12-3456789
Indicate by check mark if the registrant is a well-known seasoned issuer. Yes ☒ No ☐
"""

TEN_Q = """\
UNITED STATES SECURITIES AND EXCHANGE COMMISSION
Washington, D.C. 20549
FORM 10-Q
☒ QUARTERLY REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934
For the quarterly period ended | Commission file
September 30, 2023 | number 1-9999
Contoso Holdings plc
(Exact name of registrant as specified in its charter)
Jersey | 98-7654321
"""

EIGHT_K = """\
UNITED STATES SECURITIES AND EXCHANGE COMMISSION
WASHINGTON, D.C. 20549
______________________
FORM 8-K
CURRENT REPORT
Pursuant to Section 13 or 15(d) of the Securities Exchange Act of 1934
Date of report (Date of earliest event reported): May 20, 2022 (May 18, 2022)
Fabrikam, Inc.
(Exact name of registrant as specified in charter)
New York | 1-10299 | 13-3513936
"""

EARNINGS = """\
Tailspin Toys Reports Third-Quarter 2023 Results; Raises Full-Year Outlook
Net revenue grew 8%
SEATTLE, Wash. - October 24, 2023 - Tailspin Toys Corporation (NASDAQ: TSPN) today announced results for the
third quarter of fiscal 2023, the 13 weeks ended September 30, 2023. We expect to file our Quarterly Report on
Form 10-Q next week.
"""

MANUAL = """\
Aquila X2 Robot Vacuum User Manual
Model: RV-2000X
Version 2.1
Read all safety instructions before first use.
© 2022 Litware Appliances Ltd. All rights reserved.
"""

PLAIN = """\
Notes from the garden
The tomatoes came up early this year and the beans followed a week later.
We watered twice a day through the dry spell.
"""


def card(text: str, title: str = "") -> DocumentCard:
    return extract_card("c/doc.pdf", title, text.splitlines())


def test_a_10k_cover_page() -> None:
    got = card(TEN_K, title="UNITED STATES SECURITIES AND EXCHANGE COMMISSION")
    assert (got.organisation, got.kind, got.fiscal_year, got.quarter, got.date) == (
        "NORTHWIND TRADERS, INC.",
        "10-K",
        2021,
        None,
        "2021-01-31",
    )
    # the cover's boilerplate is no title: the registrant, form and period are
    assert got.title == "NORTHWIND TRADERS, INC. Form 10-K for fiscal year 2021"
    assert got.period() == "FY2021"


def test_a_10q_cover_states_its_end_date_not_its_fiscal_quarter() -> None:
    got = card(TEN_Q)
    assert (got.organisation, got.kind, got.fiscal_year, got.quarter, got.date) == (
        "Contoso Holdings plc",
        "10-Q",
        None,
        None,
        "2023-09-30",
    )


def test_an_8k_cover_page_dates_its_event() -> None:
    got = card(EIGHT_K)
    assert (got.organisation, got.kind, got.fiscal_year, got.date) == ("Fabrikam, Inc.", "8-K", None, "2022-05-20")
    assert got.title == "Fabrikam, Inc. Form 8-K of 2022-05-20"


def test_an_earnings_release_mentioning_a_form_is_a_release() -> None:
    got = card(EARNINGS, title="Tailspin Toys Reports Third-Quarter 2023 Results; Raises Full-Year Outlook")
    assert (got.organisation, got.kind, got.fiscal_year, got.quarter, got.date) == (
        "Tailspin Toys Corporation",
        "earnings release",
        2023,
        3,
        "2023-09-30",
    )
    assert got.title == "Tailspin Toys Reports Third-Quarter 2023 Results; Raises Full-Year Outlook"
    assert got.period() == "Q3 FY2023"


def test_a_product_manual() -> None:
    got = card(MANUAL, title="Aquila X2 Robot Vacuum User Manual")
    assert (got.product, got.model, got.version, got.kind, got.organisation) == (
        "Aquila X2 Robot Vacuum",
        "RV-2000X",
        "2.1",
        "manual",
        "Litware Appliances Ltd",
    )
    assert got.title == "Aquila X2 Robot Vacuum User Manual"


def test_a_title_that_is_only_the_file_name_is_none() -> None:
    # a reader titles a document without one by its file name: the card reads the cover instead
    got = extract_card("c/scan_0042.pdf", "scan_0042", TEN_K.splitlines())
    assert got.title == "NORTHWIND TRADERS, INC. Form 10-K for fiscal year 2021"
    assert extract_card("c/notes.txt", "notes", PLAIN.splitlines()).title == "Notes from the garden"
    # the PDF reader's "cover line (file name)": the file's part is not the document's
    got = extract_card("c/NW_2021_10K.pdf", "FORM 10-K (NW 2021 10K.pdf)", TEN_K.splitlines())
    assert got.title == "NORTHWIND TRADERS, INC. Form 10-K for fiscal year 2021"


def test_a_plain_page_gives_an_empty_card_but_its_title() -> None:
    got = card(PLAIN, title="Notes from the garden")
    assert got == DocumentCard("c/doc.pdf", title="Notes from the garden")
    assert card(PLAIN.replace("Notes from the garden\n", ""), title="Untitled").title == (
        "The tomatoes came up early this year and the beans followed a week later."
    )


def test_the_owners_fields_override_and_are_noted(tmp_path: Path) -> None:
    path = tmp_path / "cards.yaml"
    path.write_text("doc.pdf:\n  organisation: Northwind\n  fiscal_year: 2020\nc/other.pdf:\n  kind: 10-K\n")
    cards, unknown = read_sidecar(path).apply([card(TEN_K)], "c")
    assert (cards[0].organisation, cards[0].fiscal_year, cards[0].kind) == ("Northwind", 2020, "10-K")
    assert cards[0].from_sidecar == ("organisation", "fiscal_year")
    assert unknown == ["c/other.pdf"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("doc.pdf:\n  colour: red\n", "unknown field(s) colour"),
        ("doc.pdf:\n  quarter: 5\n", "quarter must be 1-4"),
        ("doc.pdf:\n  fiscal_year: twenty\n", "fiscal_year must be a whole number"),
        ("- doc.pdf\n", "expected a mapping"),
        ("doc.pdf: [\n", "cannot be read"),
    ],
)
def test_a_bad_cards_file_is_named_with_its_problem(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "cards.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=r"cards file .*cards\.yaml") as raised:
        read_sidecar(path)
    assert problem in str(raised.value)


def test_no_cards_file_overrides_nothing(tmp_path: Path) -> None:
    cards, unknown = read_sidecar(tmp_path / "cards.yaml").apply([card(TEN_K)], "c")
    assert cards == [card(TEN_K)] and unknown == []
