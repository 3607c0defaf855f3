"""Reading order and clean text of real PDFs others wrote: one node per paragraph on one-, two-
and three-column pages, hyphenation repaired, running headers that name the section dropped,
outline titles found beside their printed numbers, a column of text beside a table or equations
read whole. Sources: tests/data/documents/SOURCES.md and tests/fixtures/pdfs/public/SOURCES.md.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rag_assets.core.corpus.parsers.pdf_lines import join_hyphenated, page_lines
from tests.unit.test_parsers_pdf import DOCUMENTS, Run, by_text, make_pdf, outline, tree_of

PUBLIC = Path(__file__).resolve().parents[1] / "fixtures" / "pdfs" / "public"

pytestmark = pytest.mark.unit


def test_two_column_paper_abstract_is_one_paragraph_with_hyphens_repaired() -> None:
    tree = tree_of(DOCUMENTS / "N18-3011.pdf")
    abstract = by_text(tree, "Abstract")
    (paragraph,) = [n for n in tree.nodes if n.parent_id == abstract.node_id]
    assert paragraph.text.startswith(
        "We describe a deployed scalable system for organizing published scientific literature into a "
        "heterogeneous graph to facilitate algorithmic manipulation and discovery."
    )
    assert paragraph.text.endswith(
        "The methods described in this paper are used to enable semantic features in www.semanticscholar.org."
    )
    introduction = by_text(tree, "1 Introduction")
    first = tree.nodes[introduction.node_id + 1]
    assert first.parent_id == introduction.node_id
    # "no-" ends a line before "table": a broken word, joined without its hyphen
    assert first.text == (
        "The goal of this work is to facilitate algorithmic discovery in the scientific literature. "
        "Despite notable advances in scientific search engines, data mining and digital libraries "
        "(e.g., Wu et al., 2014), researchers remain unable to answer simple questions such as:"
    )


def test_paragraph_runs_on_past_a_figure_caption_and_a_lone_accent() -> None:
    tree = tree_of(DOCUMENTS / "N18-3011.pdf")
    # column 1 ends "(e.g., Xiong et al.," under which column 2 sets Figure 1's caption, then
    # "2017). We describe ..."; "Erdos" is drawn with its accent "˝" apart, a line of its own
    paragraph = by_text(tree, "In this paper, we focus on the problem")
    assert "(e.g., Xiong et al., 2017). We describe methods" in paragraph.text
    assert paragraph.text.endswith(
        "between author X and Paul Erdos such that all edges on the path are labeled “authored”."
    )
    caption = tree.nodes[paragraph.node_id + 1]
    assert caption.text == "Figure 1: Part of the literature graph."
    assert not any(n.text.strip() == "˝" for n in tree.nodes)


def test_footnotes_come_after_the_paragraph_a_page_break_cuts(tmp_path: Path) -> None:
    body = "The pump must be primed with clean water every time before"
    page1 = [
        (72, 100, 10, "Priming", True),
        (72, 120, 10, "Fill the housing up to the marked line and close the cap tight.", False),
        (72, 134, 10, "Turn the valve a quarter to the left and wait for the bubbles.", False),
        (72, 160, 10, "When the pump stood dry for more than a week, prime it twice.", False),
        (72, 174, 10, body, False),
        (72, 740, 7, "1 Tap water is clean enough in most regions; see the water table.", False),
        (72, 750, 7, "2 The marked line is on the left side of the housing.", False),
    ]
    page2 = [
        (72, 100, 10, "it is started, or its seals run dry and wear out within days.", False),
        (72, 114, 10, "Check the seals once a month.", False),
    ]
    (tmp_path / "pump.pdf").write_bytes(make_pdf([page1, page2]))
    tree = tree_of(tmp_path / "pump.pdf")
    # the sentence the page break cuts reads whole; the page's footnotes follow it, kept
    assert [(n.text, n.pages) for n in tree.nodes[2:]] == [
        (
            "When the pump stood dry for more than a week, prime it twice. "
            f"{body} it is started, or its seals run dry and wear out within days. Check the seals once a month.",
            "pp. 1-2",
        ),
        ("1 Tap water is clean enough in most regions; see the water table.", "p. 1"),
        ("2 The marked line is on the left side of the housing.", "p. 1"),
    ]


def test_three_column_page_reads_column_by_column() -> None:
    tree = tree_of(DOCUMENTS / "i1040nr.pdf")
    who = by_text(tree, "Who Must File")
    assert who.kind == "structure" and who.depth == 1
    assert (
        tree.nodes[who.node_id + 1].text == "File Form 1040NR if any of the following four conditions applies to you."
    )
    # a bullet item of the right column whose lines wrap under the bullet: one node
    item = by_text(tree, "Days you commute")
    assert item.block == "list_item" and item.text == (
        "Days you commute to work in the United States from a residence in Canada or Mexico if you "
        "regularly commute from Canada or Mexico."
    )
    # a paragraph that runs from the foot of one column to the top of the next stays one node
    assert by_text(tree, "Generally, you are treated as present").text.endswith(
        "physically present in the country at any time during the day."
    )
    # a bold lead-in opens its paragraph; it is not a heading
    exceptions = by_text(tree, "Exceptions.")
    assert exceptions.kind == "content" and exceptions.text == "Exceptions. You do not need to file Form 1040NR if:"
    # no node glues lines of two columns together
    contents = [n.text for n in tree.nodes if n.kind == "content"]
    assert not any("commute to work in the information" in text for text in contents)


def test_running_headers_that_name_the_section_are_dropped() -> None:
    tree = tree_of(DOCUMENTS / "GeoTopo-komprimiert.pdf")
    # each page's header names its section ("4.3. HYPERBOLISCHE GEOMETRIE"), none on 40% of pages
    headers = ("4.1. AXIOME", "4.2. WEITERE EIGENSCHAFTEN", "4.3. HYPERBOLISCHE GEOMETRIE")
    assert [n.text for n in tree.nodes if n.text.startswith(headers)] == []
    assert ("4.3 Hyperbolische Geometrie", "p. 8") in [(n.text, n.pages) for n in tree.nodes if n.kind == "structure"]


def test_outline_titles_found_beside_their_printed_numbers() -> None:
    tree = tree_of(DOCUMENTS / "pdflatex-outline.pdf")
    headings = outline(tree)[1:]
    assert headings == [(1, f"{n} {title}") for n, title in enumerate(["Foo", "Bar", "Baz"] * 3, start=1)]
    # the numbered title is the heading, not a paragraph beside it; page numbers are not nodes
    paragraphs = [n.text for n in tree.nodes if n.block == "paragraph"]
    assert [text for text in paragraphs if not text.startswith("Hello, here is some text")] == ["Contents"]
    assert not any("2 written and" in text for text in paragraphs)  # the page number "2" is no text
    # the contents page: its entries are rows under "Contents", none a heading or a bare number
    entries = [n.text for n in tree.nodes if n.parent_id == by_text(tree, "Contents").node_id]
    assert entries[:2] == ["1 Foo | 2", "2 Bar | 2"] and len(entries) == 9


@pytest.mark.parametrize(
    ("text", "part", "joined"),
    [
        ("a deployed system for litera-", "ture into a graph", "a deployed system for literature into a graph"),
        ("the left-", "hand side", "the left-hand side"),  # printed hyphenated elsewhere: a compound
        ("the Anglo-", "Saxon period", "the Anglo-Saxon period"),  # a capital after the hyphen
        ("a line", "and the next", "a line and the next"),
    ],
)
def test_line_end_hyphens(text: str, part: str, joined: str) -> None:
    assert join_hyphenated(text, part, frozenset({"left-hand"})) == joined


def test_ligatures_and_dashes_read_as_their_characters() -> None:
    (line,) = page_lines(
        [[72, 72, 300, 82, 10, False, "The ﬁrst ofﬁce—a non‑breaking \u2212 3 ‐ soft\u00adly", False]], 1
    )
    assert line.text == "The first office—a non-breaking - 3 - softly"


def test_italic_body_size_headings(tmp_path: Path) -> None:
    # as the FAA's handbook sets its sub-headings: italic at body size, above their paragraphs
    body = "The stainless steel self-locking nut may be spun on and off by hand"
    runs: list[Run] = [
        (72, 60, 16, "Self-Locking Nuts", True),
        (72, 100, 10, "Stainless Steel Self-Locking Nut", "Oblique"),
        (72, 116, 10, body, False),
        (72, 128, 10, "until it is seated against a solid surface.", False),
        (72, 160, 10, "Elastic Stop Nut", "Oblique"),
        (72, 176, 10, "The elastic stop nut is a standard nut with a fiber collar.", False),
        (72, 200, 10, "An italic sentence of the text is no heading.", "Oblique"),
    ]
    (tmp_path / "nuts.pdf").write_bytes(make_pdf([runs]))
    tree = tree_of(tmp_path / "nuts.pdf")
    assert outline(tree)[1:] == [(1, "Stainless Steel Self-Locking Nut"), (1, "Elastic Stop Nut")]
    assert by_text(tree, "The stainless steel").text == f"{body} until it is seated against a solid surface."
    assert by_text(tree, "An italic sentence").block == "paragraph"


def test_italics_are_emphasis_where_headings_are_bold(tmp_path: Path) -> None:
    runs: list[Run] = [
        (72, 60, 16, "Products", True),
        (72, 100, 10, "Creative Cloud", True),  # the document's body-size headings are bold
        (72, 116, 10, "Our subscription offering for creative professionals.", False),
        (72, 140, 10, "Photoshop", "Oblique"),  # a product name set in italic: emphasis
        (72, 156, 10, "The image editor most professionals use.", False),
    ]
    (tmp_path / "products.pdf").write_bytes(make_pdf([runs]))
    tree = tree_of(tmp_path / "products.pdf")
    assert outline(tree)[1:] == [(1, "Creative Cloud")]
    assert by_text(tree, "Photoshop").kind == "content"


def test_three_column_regulation_page_with_a_table_across() -> None:
    # Federal Register p. 6 (p. 2 here): a cost table across the top, three columns below it
    tree = tree_of(DOCUMENTS / "federal-register-2020-17221.pdf")
    part = by_text(tree, "PART 39—AIRWORTHINESS DIRECTIVES")
    lettered = [n.text for n in tree.nodes if n.parent_id == part.node_id and n.kind == "structure"]
    assert lettered[:5] == [
        "(a) Comments Due Date",
        "(b) Affected ADs",
        "(c) Applicability",
        "(d) Subject",
        "(e) Unsafe Condition",
    ]
    assert tree.nodes[by_text(tree, "(c) Applicability").node_id + 1].text.startswith(
        "This AD applies to The Boeing Company Model 737–8 and 737–9 airplanes"
    )
    # a paragraph of the left column read whole, not interleaved with the middle column's lines
    assert by_text(tree, "The FAA has determined that this").text.startswith(
        "The FAA has determined that this proposed AD would not have federalism implications under Executive Order"
    )


def _prose_and_code(x: float, top: float, topic: str) -> tuple[list[Run], float]:
    """A column's stretch: a paragraph of four full lines and a short last one, then eight short
    lines of code (Courier), as a language reference sets them."""
    runs: list[Run] = []
    for k in range(4):
        runs.append((x, top, 9, f"The {topic} statement rule number {k} applies to every suite which", False))
        top += 12
    runs.append((x, top, 9, f"the {topic} clause opens.", False))
    top += 20
    for k in range(8):
        runs.append((x + 10, top, 9, f"x{k} = {topic}({k})", "Courier"))
        top += 12
    return runs, top + 14


def test_two_column_page_with_code_between_paragraphs_reads_column_by_column(tmp_path: Path) -> None:
    """Most lines of each column are short code lines, so the column looks unlike running text by
    its typical line; its full prose lines say it is text (a table's label column has few)."""
    runs: list[Run] = [(54, 60, 14, "Compound statements", True)]
    for x, topics in ((54, ("with", "match", "try")), (322, ("for", "while", "async"))):
        top = 90.0
        for topic in topics:
            stretch, top = _prose_and_code(x, top, topic)
            runs.extend(stretch)
    (tmp_path / "reference.pdf").write_bytes(make_pdf([runs]))
    tree = tree_of(tmp_path / "reference.pdf")
    paragraphs = [n.text for n in tree.nodes if n.block == "paragraph"]
    # one node per paragraph, left column before right; no row glues the two columns together
    assert [p.split()[1] for p in paragraphs] == ["with", "match", "try", "for", "while", "async"]
    assert paragraphs[0] == " ".join(
        [f"The with statement rule number {k} applies to every suite which" for k in range(4)]
        + ["the with clause opens."]
    )
    assert not any("|" in n.text or "\t" in n.text for n in tree.nodes)


def test_paper_column_beside_a_table_is_read_whole_with_its_headings_and_run_in_leads() -> None:
    """A two-column paper page whose right column opens with a table: the table's figures share
    baselines with a few lines of the left column, which once made the page a table of rows
    ("4 Experimental Setup | amples in the dataset ..."). Labelled by hand from the printed page
    (tests/fixtures/pdfs/public/SOURCES.md)."""
    tree = tree_of(PUBLIC / "dpr-paper-p4.pdf")
    assert outline(tree)[1:] == [
        (1, "4 Experimental Setup"),
        (2, "4.1 Wikipedia Data Pre-processing"),
        (2, "4.2 Question Answering Datasets"),
        (1, "5 Experiments: Passage Retrieval"),
    ]
    wikipedia = by_text(tree, "Following (Lee et al., 2019)")
    assert wikipedia.text.endswith(
        "Each passage is also prepended with the title of the Wikipedia article where the passage "
        "is from, along with an [SEP] token."
    )
    squad = by_text(tree, "SQuAD v1.1 (Rajpurkar et al., 2016)")
    assert squad.text.endswith("a fair comparison to previous work and we will discuss more in Section 5.1.")
    # the run-in dataset names open their paragraphs: neither headings nor glued to the one above
    for lead in ("Natural Questions (NQ)", "TriviaQA (Joshi et al., 2017)", "WebQuestions (WQ)"):
        assert by_text(tree, lead).kind == "content"
    assert by_text(tree, "TriviaQA").text.endswith("scraped from the Web.")
    table = by_text(tree, "Dataset | Train")
    rows = [n.text for n in tree.nodes if n.parent_id == table.node_id]
    assert rows[0] == "Natural Questions | Train: 79,168 | Train: 58,880 | Dev: 8,757 | Test: 3,610"
    assert [row.split(" | ")[0] for row in rows] == [
        "Natural Questions",
        "TriviaQA",
        "WebQuestions",
        "CuratedTREC",
        "SQuAD",
    ]
    # no other node glues the two columns side by side
    assert not any("|" in n.text for n in tree.nodes if n.block != "table_row" and n is not table)


def test_full_height_column_read_whole_beside_a_table_that_spans_the_two_columns_right_of_it() -> None:
    """IRS instructions, p. 7: a left column of prose runs the page's height while a table of
    years and amounts spans the two columns to its right, with two text columns under it. The
    left column's lines once became that table's row labels ("determining if you meet the 8-year
    | during . . . | if . . ."); the table's amounts straddle the right gutter. Labelled by hand
    from the printed page (tests/fixtures/pdfs/public/SOURCES.md)."""
    tree = tree_of(PUBLIC / "i1040nr-p7.pdf")
    texts = [n.text for n in tree.nodes]
    assert (
        "The alternative tax regime will apply to you for the 10 succeeding tax years following the year of "
        "your expatriation if one of the principal purposes of your action was to avoid U.S. taxes. You are "
        "considered to have tax avoidance as a principal purpose if:"
    ) in texts
    statement = by_text(tree, "Annual information statement. If the alternative tax regime under the expatriation")
    assert statement.text.endswith("You must attach the statement to Form 1040NR, whether or not you owe any U.S. tax.")
    # the table's rows keep their year and both amounts, in the printed order
    years = [t for t in texts if t[:4].isdigit() and " | " in t]
    assert years[:7] == [
        "1997 | $106,000 | $528,000",
        "1998 | 109,000 | 543,000",
        "1999 | 110,000 | 552,000",
        "2000 | 112,000 | 562,000",
        "2001 | 116,000 | 580,000",
        "2002 | 120,000 | 599,000",
        "2003 | 122,000 | 608,000",
    ]
    assert "2005 | 127,000" in years
    # the left column comes first, whole, and no line of it is glued to the table beside it
    (column_end,) = [
        i for i, t in enumerate(texts) if t.endswith("was more than $124,000. This amount is adjusted for")
    ]
    assert column_end < texts.index("1997 | $106,000 | $528,000")
    assert not any("8-year" in t and "|" in t for t in texts)


def test_latex_two_column_page_with_a_contents_list_and_equations_reads_column_by_column() -> None:
    """pdf.js's two-column LaTeX tagging example, p. 1: a contents list and the end of the
    introduction in the left column, equations and matrices in the right. Its lines were read
    across the page ("Abstract | ment just uses standard LATEX markup"), the contents entries
    glued to the equations beside them. Labelled by hand (tests/fixtures/pdfs/public/SOURCES.md)."""
    tree = tree_of(PUBLIC / "pdfjs-bug1997343-p1.pdf")
    headings = [
        heading for heading in outline(tree)[1:] if heading[1] != "The LATEX Team"
    ]  # an author line: not labelled
    assert headings == [
        (1, "Abstract"),
        (1, "Contents"),
        (1, "1 Introduction"),
        (1, "2 Document structures"),
        (2, "2.1 Mathematics"),
        (2, "2.2 Lists"),
    ]
    assert by_text(tree, "An example document").text == (
        "An example document showing automatic tagging of typical structures found in a LATEX document, "
        "including titles, sections, theorems, lists, citation lists and mathematics. A two column layout is "
        "used, the tagging enables the reading order to correctly follow the flow of text through the columns."
    )
    texts = [n.text for n in tree.nodes]
    # each contents entry is one row: its number, title and page, nothing from the column beside it
    entries = [text for text in texts if re.match(r"\d(\.\d)? [A-Z]", text) and " | " in text]
    assert [entry.split(" ")[0] for entry in entries] == ["1", "2", "2.1", "2.2", "2.3", "2.4", "2.5", "3"]
    assert entries[0] == "1 Introduction | 1"
    assert all(entry[-4:] in (" | 1", " | 2") for entry in entries)
    assert not any("prime" in entry or "cos" in entry for entry in entries)
    assert texts.index("Lists often occur in documents.") > texts.index("Let be a prime, then")
