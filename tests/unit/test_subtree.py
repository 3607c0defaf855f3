"""Retrieval SubTrees on hand-built trees: lighting, expansion, budgets — exact renderings."""

from __future__ import annotations

import dataclasses

import pytest

from rag_assets.core.corpus.blocks import heading, list_item, paragraph
from rag_assets.core.corpus.tree import build_tree
from rag_assets.core.routing.subtree import DocumentRouting


def routing() -> DocumentRouting:
    tree = build_tree(
        "Kettle",
        [
            paragraph("Read this first."),  # 1
            heading("Filling", 1),  # 2
            paragraph("Fill with water:"),  # 3
            list_item("at least 0.5 l", 1),  # 4 (under 3)
            list_item("the MAX mark", 2),  # 5 (under 4)
            list_item("at most 1.7 l", 1),  # 6 (under 3)
            paragraph("Close the lid."),  # 7
            heading("Boiling", 1),  # 8
            paragraph("Press the switch."),  # 9
            heading("Tea", 2),  # 10
            paragraph("Green tea at 80 C."),  # 11
        ],
    )
    return DocumentRouting("d", tree.nodes)


def test_lighting_a_deep_list_hit_follows_algorithm_1() -> None:
    doc = routing()
    assert doc.lit_content([5]) == {5, 4, 3}  # siblings {5}, content ancestors 4, 3
    view = doc.light([4])  # siblings 4, 6; ancestor 3; descendants of siblings: 5
    assert view.visible_content_ids == {3, 4, 5, 6}
    assert view.render() == "\n".join(
        [
            "0: Kettle",
            "  2: Filling",
            "    3: Fill with water:",
            "      4: at least 0.5 l",
            "        5: the MAX mark",
            "      6: at most 1.7 l",
            "  8: Boiling",
            "    10: Tea",
        ]
    )
    assert view.collapsed_heading_ids == {0, 2, 8, 10}  # 1, 7, 9, 11 never shown


def test_expansion_never_shows_a_node_twice() -> None:
    doc = routing()
    doc.light([4])
    filling = doc.expand(2)
    assert filling.visible_content_ids == {7}
    assert filling.render().splitlines()[2] == "    7: Close the lid."
    assert filling.collapsed_heading_ids == {0, 8, 10}
    assert doc.expand(2).visible_content_ids == frozenset()
    boiling = doc.expand(8)
    assert boiling.visible_content_ids == {9}  # the Tea sub-heading keeps its own content
    assert boiling.collapsed_heading_ids == {0, 10}
    with pytest.raises(ValueError, match="not a heading"):
        doc.expand(9)


def test_headings_and_non_content_hits() -> None:
    doc = routing()
    assert doc.light([8, 99, -1]).visible_content_ids == frozenset()
    assert doc.light([11]).render().splitlines()[-1] == "      11: Green tea at 80 C."


def test_budget_shortens_then_drops_content_but_keeps_the_outline() -> None:
    tree = build_tree(
        "T",
        [
            heading("A", 1),
            paragraph("one two three four five six seven eight nine ten"),
            paragraph("alpha beta gamma delta epsilon zeta eta theta iota kappa"),
        ],
    )
    view = DocumentRouting("d", tree.nodes).light([2])
    assert view.render(10_000) == view.render()
    assert view.render(20) == "0: T\n  1: A\n    2: one two three four …\n    3: alpha beta gamma delta …"
    assert view.render(12) == "0: T\n  1: A\n    2: one two three four …"
    assert view.render(1) == "0: T\n  1: A"
    assert view.render(12) == view.render(12)  # deterministic


def test_full_view_shows_everything_and_collapses_nothing() -> None:
    view = routing().full_view()
    assert view.visible_content_ids == {1, 3, 4, 5, 6, 7, 9, 11} and view.collapsed_heading_ids == frozenset()


def manual() -> DocumentRouting:
    """A manual whose outline alone (30 chapters x 2 sections) is far over a small budget."""
    blocks = []
    for chapter in range(1, 31):
        blocks.append(heading(f"Chapter {chapter}", 1))
        for section in (1, 2):
            blocks += [
                heading(f"Section {chapter}.{section}", 2),
                paragraph(f"Text of section {chapter}.{section} with several more words in it."),
            ]
    return DocumentRouting("manual", build_tree("Manual", blocks).nodes)


def test_a_long_outline_keeps_the_headings_nearest_the_hit() -> None:
    doc = manual()
    by_text = {n.text: n.node_id for n in doc.nodes}
    hit = by_text["Text of section 15.1 with several more words in it."]
    view = doc.light([hit])
    assert len(view.render().split()) > 250  # the whole outline: 91 heading lines
    fitted = view.fit(200)
    text = fitted.render()
    assert len(text.split()) <= 200 and fitted.render(200) == text == view.render(200)
    shown = set(fitted.visible_ids)
    # the hit, its heading path, then its neighbours in the heading tree: sibling section and
    # the other chapters (distance 1) come before any other chapter's sections (distance 2)
    assert {0, by_text["Chapter 15"], by_text["Section 15.1"], hit, by_text["Section 15.2"]} <= shown
    assert {by_text[f"Chapter {c}"] for c in range(1, 31)} <= shown
    assert by_text["Section 3.1"] not in shown and by_text["Section 29.2"] not in shown
    # every shown heading's parent heading is shown: the cut outline still reads as a tree
    assert all(doc.nodes[i].parent_id in shown for i in shown if i != 0)
    # what was cut can be neither answered nor expanded
    assert fitted.collapsed_heading_ids <= shown and fitted.visible_content_ids <= shown
    assert by_text["Section 15.2"] in fitted.collapsed_heading_ids and fitted.content_words is None
    assert by_text["Section 29.2"] in view.collapsed_heading_ids - fitted.collapsed_heading_ids


def test_fit_is_the_identity_within_budget_and_deterministic() -> None:
    doc = manual()
    view = doc.light([3])
    assert view.fit(None) is view and view.fit(10_000) is view
    assert view.fit(60) == view.fit(60) and len(view.fit(60).render().split()) <= 60


def test_a_section_of_thousands_of_rows_is_cut_to_the_most_rows_that_fit() -> None:
    # a filing's statement: one heading over 3,000 table rows, every row lit by the search
    rows = [paragraph(f"Line item {n} | 2018: {n},000 | 2017: {n},500") for n in range(3000)]
    doc = DocumentRouting("filing", build_tree("Filing", [heading("Statements", 1), *rows]).nodes)
    view = doc.light([n.node_id for n in doc.nodes if n.kind == "content"])
    fitted = view.fit(512)
    assert len(fitted.render().split()) <= 512
    kept = sorted(fitted.visible_content_ids)
    assert kept and kept == sorted(view.visible_content_ids)[: len(kept)]  # the first rows, in order
    # one row more would not fit: the cut keeps as many rows as the budget holds
    one_more = dataclasses.replace(
        fitted, visible_content_ids=frozenset(sorted(view.visible_content_ids)[: len(kept) + 1])
    )
    assert len(one_more.render().split()) > 512


def test_content_cut_for_the_budget_is_shown_by_a_later_expansion() -> None:
    tree = build_tree(
        "T",
        [
            heading("A", 1),
            paragraph("one two three four five six seven eight nine ten"),
            paragraph("alpha beta gamma delta epsilon zeta eta theta iota kappa"),
            heading("B", 1),
            paragraph("other"),
        ],
    )
    doc = DocumentRouting("d", tree.nodes)
    fitted = doc.fit(doc.light([2]), 12)
    assert fitted.visible_content_ids == {2} and doc.seen == {2}  # 3 was cut: never shown
    assert doc.expand(1).visible_content_ids == {3}


def test_the_flat_view_keeps_only_the_lines_it_renders() -> None:
    from rag_assets.core.routing.navigation import RoutingKnobs, fit_view, render_flat

    tree = build_tree(
        "T",
        [
            heading("A", 1),
            paragraph("one two three four five six seven eight nine ten"),
            paragraph("alpha beta gamma delta epsilon zeta eta theta iota kappa"),
        ],
    )
    doc = DocumentRouting("d", tree.nodes)
    view = doc.light([2])
    assert render_flat(view, 8) == "2: one two three four …"
    flat = fit_view(doc, view, RoutingKnobs(structure=False, token_budget=8))
    assert flat.visible_content_ids == {2} and flat.collapsed_heading_ids == frozenset() and doc.seen == {2}
    assert render_flat(view) == (
        "2: one two three four five six seven eight nine ten\n"
        "3: alpha beta gamma delta epsilon zeta eta theta iota kappa"
    )
