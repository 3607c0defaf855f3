"""How the encoder router reads a content node: heading path, then (`encoder_ancestor_levels`) the
content nodes it is nested under (a list's intro paragraph, a nested item's parent items), then
its own text."""

from __future__ import annotations

import pytest

from rag_assets.core.corpus.blocks import heading, list_item, paragraph
from rag_assets.core.corpus.tree import CONTENT, build_tree
from rag_assets.core.routing.encoder_settings import EncoderSettings
from rag_assets.core.routing.encoder_training import encoder_pairs
from rag_assets.core.routing.samples import RoutingExample
from rag_assets.core.routing.scoring_router import PARENT_WORDS, ScoringRouter, content_context
from rag_assets.core.routing.subtree import DocumentRouting, SubtreeView
from rag_assets.core.routing.teachers import SimilarityThresholds

BRAVES = "58 by the Buffalo Braves at the Boston Celtics on October 20 , 1972"


def records_page():
    return build_tree(
        "NBA records",
        [
            heading("Team records", 1),
            paragraph("Records set in one game:"),
            list_item("Most points in a quarter", 1),
            list_item(BRAVES, 2),
            list_item("Most points in an overtime period", 1),
            list_item("25 by the Sacramento Kings", 2),
            list_item("in the second overtime", 3),
            heading("Player records", 1),
            paragraph("Wilt Chamberlain scored 100 points in a game."),
        ],
    )


def node_id(tree, text: str) -> int:
    return next(n.node_id for n in tree.nodes if n.text == text)


def test_a_nested_item_is_read_under_its_parent_item_and_the_lists_intro() -> None:
    tree = records_page()
    braves = node_id(tree, BRAVES)
    assert content_context(tree.nodes, braves, levels=2) == (
        f"NBA records > Team records > Records set in one game: > Most points in a quarter: {BRAVES}"
    )
    item = node_id(tree, "Most points in a quarter")
    assert (
        content_context(tree.nodes, item, levels=2)
        == "NBA records > Team records > Records set in one game:: Most points in a quarter"
    )


def test_by_default_a_node_reads_its_heading_path_alone() -> None:
    tree = records_page()
    braves = node_id(tree, BRAVES)
    assert content_context(tree.nodes, braves) == (f"NBA records > Team records: {BRAVES}")


def test_a_node_under_a_heading_only_reads_the_heading_path() -> None:
    tree = records_page()
    wilt = node_id(tree, "Wilt Chamberlain scored 100 points in a game.")
    assert content_context(tree.nodes, wilt, levels=2) == (
        "NBA records > Player records: Wilt Chamberlain scored 100 points in a game."
    )


def test_at_most_two_content_ancestors_nearest_last() -> None:
    tree = records_page()
    deepest = node_id(tree, "in the second overtime")
    # Its parent and grandparent items; the list's intro paragraph above them is left out.
    assert content_context(tree.nodes, deepest, levels=2) == (
        "NBA records > Team records > Most points in an overtime period > 25 by the Sacramento Kings: "
        "in the second overtime"
    )


def test_a_long_parent_is_cut_to_its_first_words() -> None:
    long_parent = " ".join(f"w{i}" for i in range(60))
    tree = build_tree("Doc", [heading("Part", 1), list_item(long_parent, 1), list_item("child", 2)])
    context = content_context(tree.nodes, node_id(tree, "child"), levels=1)
    parent_part = context.removeprefix("Doc > Part > ").removesuffix(": child")
    assert parent_part.split() == [f"w{i}" for i in range(PARENT_WORDS)]


def test_training_pairs_read_the_nodes_as_the_router_will() -> None:
    tree = records_page()
    state = DocumentRouting("records", tree.nodes)
    content = frozenset(n.node_id for n in tree.nodes if n.kind == CONTENT)
    view = SubtreeView("records", state.title, tree.nodes, content, frozenset())
    braves = node_id(tree, BRAVES)
    example = RoutingExample("most points scored in a quarter", state, view, frozenset({braves}), frozenset())
    [under_parents] = encoder_pairs([example], negatives=1, ancestor_levels=2)
    [heading_path_only] = encoder_pairs([example], negatives=1)  # the default: no ancestors
    assert under_parents.positive.startswith("NBA records > Team records > Records set in one game: > Most points in")
    assert heading_path_only.positive == (f"NBA records > Team records: {BRAVES}")
    assert ScoringRouter(None, SimilarityThresholds()).ancestor_levels == EncoderSettings().ancestor_levels == 0
    with pytest.raises(ValueError, match="ancestor_levels"):
        EncoderSettings(ancestor_levels=-1)
