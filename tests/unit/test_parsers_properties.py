"""Properties every parser must keep on any input, plus dispatch and format detection.

Random Markdown (built from headings, paragraphs, lists, tables, fences, quotes) and random HTML
(built from block and inline tags, closed or not), and plain garbage for every format: parsing
never raises and always yields a valid tree whose node texts are exact slices of its text.
"""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_assets.core.corpus.blocks import BlockKind
from rag_assets.core.corpus.parsers import FORMATS, ParseError, detect_format, guess_title, parse_blocks
from rag_assets.core.corpus.tree import build_tree, tree_problems

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

words = st.text(alphabet="abcdefgh xyz*_`[]()!<>&#|-\\", min_size=1, max_size=20)
line = st.lists(words, min_size=1, max_size=6).map(" ".join)


def assert_valid(fmt: str, text: str) -> None:
    blocks = parse_blocks(fmt, text)
    for block in blocks:
        assert block.text, block
        if block.kind is BlockKind.HEADING:
            assert block.level >= 1
    tree = build_tree(guess_title(fmt, text) or "Untitled", blocks)
    assert tree_problems(tree.nodes, tree.text) == []
    for node in tree.nodes:
        assert tree.text[node.span_start : node.span_end] == node.text


@st.composite
def markdown_documents(draw: st.DrawFn) -> str:
    parts: list[str] = []
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["heading", "setext", "para", "list", "table", "fence", "quote", "rule"]))
        if kind == "heading":
            parts.append("#" * draw(st.integers(1, 7)) + " " + draw(line))
        elif kind == "setext":
            parts.append(draw(line) + "\n" + draw(st.sampled_from(["===", "---"])))
        elif kind == "para":
            parts.append("\n".join(draw(st.lists(line, min_size=1, max_size=3))))
        elif kind == "list":
            items = draw(
                st.lists(st.tuples(st.integers(0, 6), st.sampled_from(["-", "*", "1."]), line), min_size=1, max_size=8)
            )
            loose = draw(st.booleans())
            parts.append(("\n\n" if loose else "\n").join("  " * d + f"{m} {t}" for d, m, t in items))
        elif kind == "table":
            cols = draw(st.integers(1, 4))
            rows = draw(
                st.lists(
                    st.lists(words.map(lambda w: w.replace("|", "/")), min_size=cols, max_size=cols),
                    min_size=1,
                    max_size=4,
                )
            )
            lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * cols]
            lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
            parts.append("\n".join(lines))
        elif kind == "fence":
            body = "\n".join(draw(st.lists(line, max_size=3)))
            parts.append("```\n" + body + ("\n```" if draw(st.booleans()) else ""))
        elif kind == "quote":
            parts.append("> " * draw(st.integers(1, 5)) + draw(line))
        else:
            parts.append("---")
    return "\n\n".join(parts) + "\n"


@st.composite
def html_documents(draw: st.DrawFn) -> str:
    tags = [
        "h1",
        "h2",
        "h3",
        "h6",
        "p",
        "ul",
        "ol",
        "li",
        "dl",
        "dt",
        "dd",
        "table",
        "tr",
        "td",
        "th",
        "pre",
        "div",
        "span",
        "b",
        "br",
        "script",
        "title",
        'Th_colspan="2"',
        'Td_colspan="6"',
    ]
    out: list[str] = []
    for _ in range(draw(st.integers(0, 30))):
        choice = draw(st.integers(0, 3))
        if choice == 0:
            out.append(draw(words))
        elif choice == 1:
            out.append(f"<{draw(st.sampled_from(tags))}>")
        elif choice == 2:
            out.append(f"</{draw(st.sampled_from(tags)).split('_')[0]}>")
        else:
            out.append(draw(st.sampled_from(["&amp;", "&nbsp;", "&#x41;", "<!-- c -->", "<br/>", "&bogus;"])))
    return "".join(out)


@SETTINGS
@given(markdown_documents())
def test_random_markdown_makes_a_valid_tree(doc: str) -> None:
    assert_valid("markdown", doc)


@SETTINGS
@given(html_documents())
def test_random_html_makes_a_valid_tree(doc: str) -> None:
    assert_valid("html", doc)


@SETTINGS
@given(st.text(max_size=300))
def test_garbage_makes_a_valid_tree_in_every_text_format(doc: str) -> None:
    for fmt in ("markdown", "html", "text"):
        assert_valid(fmt, doc)


@SETTINGS
@given(st.text(alphabet=" \n\t*=-~#>|`<p>/li0123456789.:", max_size=300))
def test_punctuation_soup_makes_a_valid_tree(doc: str) -> None:
    for fmt in ("markdown", "html", "text", "csv"):
        assert_valid(fmt, doc)


@SETTINGS
@given(st.text(max_size=200))
def test_manual_json_either_parses_or_raises_parse_error(doc: str) -> None:
    with contextlib.suppress(ParseError):
        assert_valid("manual_json", doc)


# -- dispatch and detection -----------------------------------------------------------------------

MANUAL = json.dumps({"section_0": {"title": "T", "html": ["<h2>T</h2>", "<p>x</p>"]}})


def test_formats_and_dispatch() -> None:
    assert FORMATS == (
        "markdown",
        "html",
        "text",
        "manual_json",
        "pdf",
        "docx",
        "pptx",
        "xlsx",
        "epub",
        "csv",
        "web_page",
    )
    assert [b.text for b in parse_blocks("html", "<p>x</p>")] == ["x"]
    with pytest.raises(ParseError, match="unknown document format 'odt'"):
        parse_blocks("odt", "x")
    with pytest.raises(ParseError):
        guess_title("odt", "x")
    with pytest.raises(ParseError, match="re-ingest"):  # a PDF's text is its layout, made at ingestion
        parse_blocks("pdf", "x")


@pytest.mark.parametrize(
    ("name", "text", "fmt"),
    [
        ("a.md", "<p>html-looking</p>", "markdown"),
        ("a.MARKDOWN", "", "markdown"),
        ("a.html", "# not markdown", "html"),
        ("a.htm", "", "html"),
        ("a.txt", "# hash", "text"),
        ("a.rst", "Title\n=====\n", "text"),
        ("manual.json", MANUAL, "manual_json"),
        ("broken.json", '{"section_0": {"html": "not a list"}}', "manual_json"),  # rejected at parse, with why
        ("noext", MANUAL, "manual_json"),
        ("noext", "  <!doctype html><html>", "html"),
        ("noext", "Intro\n\n# Heading\n", "markdown"),
        ("noext", "Some text\n<div>block</div>\n", "html"),
        ("noext", "Title\n*****\n\nBody.\n", "text"),
        ("noext", "Title\n=====\n\nBody.\n", "markdown"),
        ("noext", "See [the docs](http://x).\n", "markdown"),
        ("noext", "```\ncode\n```\n", "markdown"),
        ("noext", "Just some words.\n\nMore words.\n", "text"),
        ("noext", '{"not": "a manual"}', "text"),
        ("noext", "", "text"),
    ],
)
def test_detect_format(name: str, text: str, fmt: str) -> None:
    assert detect_format(name, text) == fmt
