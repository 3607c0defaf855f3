"""Plain text with underlined headings -> blocks, in the style of Python's pydoc topics."""

from __future__ import annotations

from rag_assets.core.corpus.blocks import code, heading, list_item, paragraph
from rag_assets.core.corpus.parsers import guess_title, parse_blocks
from rag_assets.core.corpus.parsers.text import parse_text
from rag_assets.core.corpus.tree import build_tree, render_tree, tree_problems

DOC = """\
=========
 Overview
=========

The "pass" statement
********************

"pass" is a null operation; it is useful as a placeholder:

   def f(arg): pass    # a function that does nothing (yet)

   class C: pass

Uses
====

* first point,
  continued here
* second point

  * nested point
  * nested two

  Back in the first list.

1. numbered
2. second

object.method(arg)

   Describes the method.  Lines wrap
   like this.

   Another paragraph of the description.

Literal block::

  x = 1
  y = 2

-----

Details
-------

>>> 1 + 1
2

Plain line one
plain line two
"""


def test_document_gives_the_exact_blocks() -> None:
    assert parse_text(DOC) == [
        heading("Overview", 1),  # overline + underline: a style of its own
        heading('The "pass" statement', 2),
        paragraph('"pass" is a null operation; it is useful as a placeholder:'),
        code("def f(arg): pass    # a function that does nothing (yet)\n\nclass C: pass"),
        heading("Uses", 3),  # "=" underline alone differs from the "=" overline pair
        list_item("first point, continued here", 1),
        list_item("second point", 1),
        list_item("nested point", 2),
        list_item("nested two", 2),
        list_item("Back in the first list.", 1),
        list_item("numbered", 1),
        list_item("second", 1),
        paragraph("object.method(arg)"),
        list_item("Describes the method. Lines wrap like this.", 1),
        list_item("Another paragraph of the description.", 1),
        paragraph("Literal block:"),
        code("x = 1\ny = 2"),
        heading("Details", 4),
        code(">>> 1 + 1\n2"),
        paragraph("Plain line one plain line two"),
    ]


def test_tree_nests_descriptions_under_what_they_describe() -> None:
    doc = (
        "Basic customization\n*******************\n\nobject.__new__(cls)\n\n   Called to create.\n\n"
        "   Note:\n\n     Rarely needed.\n\nobject.__del__(self)\n\n   Called to destroy.\n\nSee also\n========\n\nThe end.\n"
    )
    tree = build_tree(guess_title("text", doc) or "", parse_text(doc))
    assert render_tree(tree.nodes) == "\n".join(
        [
            "0: Basic customization",
            "  1: object.__new__(cls)",
            "    2: Called to create.",
            "    3: Note:",
            "      4: Rarely needed.",
            "  5: object.__del__(self)",
            "    6: Called to destroy.",
            "  7: See also",
            "    8: The end.",
        ]
    )


def test_heading_levels_follow_first_appearance() -> None:
    doc = "A\n---\n\nB\n~~~\n\nC\n---\n\nD\n~~~~~\n"
    assert parse_text(doc) == [heading("A", 1), heading("B", 2), heading("C", 1), heading("D", 2)]


def test_short_underlines_transitions_and_other_characters_are_not_headings() -> None:
    assert parse_text("A rather long line of text\n---\n\nx\n\n-----\n\nok\n") == [
        paragraph("A rather long line of text"),
        paragraph("x"),
        paragraph("ok"),
    ]
    assert parse_text("Title\n.....\n") == [paragraph("Title .....")]
    assert parse_text("ab\n==\n") == [paragraph("ab ==")]  # an underline needs 3 characters


def test_code_only_after_a_colon_or_double_colon() -> None:
    assert parse_text("Example:\n\n    x = 1\n\ny\n") == [paragraph("Example:"), code("x = 1"), paragraph("y")]
    # As in reST, the literal block runs while lines are indented past the paragraph's margin.
    assert parse_text("Example:\n\n    x = 1\n\n  y\n") == [paragraph("Example:"), code("  x = 1\n\ny")]
    assert parse_text("Example ::\n\n x = 1\n") == [paragraph("Example"), code("x = 1")]
    assert parse_text("Example:\n\n  too shallow for code\n") == [
        paragraph("Example:"),
        list_item("too shallow for code", 1),
    ]


def test_code_keeps_blank_lines_and_relative_indentation() -> None:
    doc = "Loop:\n\n   for i in x:\n       print(i)\n\n   done()\n\nAfter.\n"
    assert parse_text(doc) == [paragraph("Loop:"), code("for i in x:\n    print(i)\n\ndone()"), paragraph("After.")]


def test_numbered_lines_inside_a_paragraph_stay_prose() -> None:
    assert parse_text("It happened in\n1999. Then more.\n") == [paragraph("It happened in 1999. Then more.")]
    assert parse_text("Steps:\n- one\n- two\n") == [paragraph("Steps:"), list_item("one", 1), list_item("two", 1)]


def test_windows_newlines_and_tabs() -> None:
    assert parse_text("Title\r\n=====\r\n\r\n*\tone\r\n") == [heading("Title", 1), list_item("one", 1)]


def test_guess_title() -> None:
    assert guess_title("text", "Intro\n\nFirst\n=====\n\nSecond\n------\n") == "First"
    assert guess_title("text", "just text\n") is None


def test_garbage_never_fails() -> None:
    garbage = bytes(range(256)).decode("latin-1") * 50 + "\n=\n===\n" + "\x00\x0b\x0c" * 100
    tree = build_tree("g", parse_blocks("text", garbage))
    assert tree_problems(tree.nodes, tree.text) == []
    assert parse_text("") == [] and parse_text("\n\n   \n") == []
    assert parse_text("===\n===\n===\n") == []


def test_deep_indentation() -> None:
    doc = "".join(" " * i + "- item\n" for i in range(3000))
    tree = build_tree("deep", parse_text(doc))
    assert tree_problems(tree.nodes, tree.text) == []
    assert tree.content_count == 3000


def test_every_pydoc_topic_makes_a_valid_tree() -> None:
    from pydoc_data.topics import topics

    for key, text in topics.items():
        title = guess_title("text", text) or key
        tree = build_tree(title, parse_blocks("text", text))
        assert tree_problems(tree.nodes, tree.text) == [], key
        assert tree.content_count > 0, key
        assert tree.nodes[0].text == title, key  # the title heading became the root
