"""build_tree nesting rules and tree_problems validity rules, on hand-built block lists."""

from __future__ import annotations

import dataclasses

from rag_assets.core.corpus.blocks import code, heading, list_item, paragraph, table_row
from rag_assets.core.corpus.tree import (
    CONTENT,
    NODE_SEPARATOR,
    STRUCTURE,
    DocumentTree,
    TreeNode,
    build_tree,
    render_tree,
    tree_problems,
)


def fields(tree: DocumentTree) -> list[tuple]:
    return [(n.node_id, n.parent_id, n.kind, n.block, n.depth, n.heading_path) for n in tree.nodes]


def test_exact_nodes_of_a_small_document() -> None:
    tree = build_tree(
        "Guide",
        [
            heading("Guide", 1),  # repeats the title: merged into the root
            paragraph("Intro."),
            heading("Setup", 2),
            paragraph("You need:"),
            list_item("a kettle", 1),
            list_item("water", 2),
            table_row(["k", "v"]),
            heading("Deep", 4),  # skipped level: nests one deeper, no phantom levels
            code("x = 1\n"),
            heading("Next", 2),
        ],
    )
    assert fields(tree) == [
        (0, None, STRUCTURE, "title", 0, ("Guide",)),
        (1, 0, CONTENT, "paragraph", 1, ("Guide",)),
        (2, 0, STRUCTURE, "heading", 1, ("Guide", "Setup")),
        (3, 2, CONTENT, "paragraph", 2, ("Guide", "Setup")),
        (4, 3, CONTENT, "list_item", 3, ("Guide", "Setup")),
        (5, 4, CONTENT, "list_item", 4, ("Guide", "Setup")),
        (6, 2, CONTENT, "table_row", 2, ("Guide", "Setup")),
        (7, 2, STRUCTURE, "heading", 2, ("Guide", "Setup", "Deep")),
        (8, 7, CONTENT, "code", 3, ("Guide", "Setup", "Deep")),
        (9, 0, STRUCTURE, "heading", 1, ("Guide", "Next")),
    ]
    texts = ["Guide", "Intro.", "Setup", "You need:", "a kettle", "water", "k | v", "Deep", "x = 1", "Next"]
    assert tree.text == NODE_SEPARATOR.join(texts)
    spans = [(n.span_start, n.span_end) for n in tree.nodes]
    assert spans[:3] == [(0, 5), (7, 13), (15, 20)]
    assert all(tree.text[n.span_start : n.span_end] == n.text for n in tree.nodes)
    assert tree_problems(tree.nodes, tree.text) == []
    assert tree.content_count == 6
    assert tree.children()[2] == [3, 6, 7]


def test_render_shows_nesting() -> None:
    tree = build_tree(
        "T", [paragraph("before any heading"), heading("A", 1), paragraph("p"), list_item("i", 1), code("a\nb")]
    )
    assert render_tree(tree.nodes) == "\n".join(
        [
            "0: T",
            "  1: before any heading",
            "  2: A",
            "    3: p",
            "      4: i",
            "    5: a ⏎ b",
        ]
    )


def test_list_without_intro_hangs_under_heading_and_resets_after_other_blocks() -> None:
    tree = build_tree("T", [heading("H", 1), list_item("a", 1), list_item("b", 3), table_row(["r"]), list_item("c", 2)])
    assert [(n.text, n.parent_id) for n in tree.nodes[1:]] == [("H", 0), ("a", 1), ("b", 2), ("r", 1), ("c", 1)]


def test_no_headings_is_flat_and_headings_only_is_all_structure() -> None:
    flat = build_tree("T", [paragraph("one"), paragraph("two"), code("three")])
    assert [n.depth for n in flat.nodes] == [0, 1, 1, 1]
    bare = build_tree("T", [heading("A", 1), heading("B", 2), heading("C", 3)])
    assert [n.kind for n in bare.nodes] == [STRUCTURE] * 4
    assert [n.depth for n in bare.nodes] == [0, 1, 2, 3]


def test_empty_blocks_are_dropped_and_empty_title_falls_back() -> None:
    tree = build_tree("  ", [paragraph("   "), list_item("", 1), paragraph("kept")])
    assert [n.text for n in tree.nodes] == ["Untitled", "kept"]


def test_title_merge_only_for_a_leading_heading() -> None:
    late = build_tree("T", [paragraph("p"), heading("T", 1)])
    assert [n.text for n in late.nodes] == ["T", "p", "T"]
    second = build_tree("T", [heading("A", 1), heading("T", 1)])
    assert [n.text for n in second.nodes] == ["T", "A", "T"]


def test_list_nesting_is_clamped() -> None:
    blocks = [paragraph("intro")] + [list_item(f"i{k}", k) for k in range(1, 41)]
    tree = build_tree("T", blocks, max_list_nesting=5)
    assert max(n.depth for n in tree.nodes) == 1 + 5  # intro at depth 1, five item levels
    assert tree.content_count == 41
    assert tree_problems(tree.nodes, tree.text) == []
    default = build_tree("T", blocks)
    assert max(n.depth for n in default.nodes) == 1 + 16


# -- tree_problems on corrupted trees -----------------------------------------------------------


def valid() -> DocumentTree:
    return build_tree("T", [heading("A", 1), paragraph("alpha"), list_item("beta", 1)])


def corrupt(tree: DocumentTree, index: int, **changes: object) -> list[TreeNode]:
    nodes = list(tree.nodes)
    nodes[index] = dataclasses.replace(nodes[index], **changes)
    return nodes


def test_valid_tree_has_no_problems() -> None:
    tree = valid()
    assert tree_problems(tree.nodes, tree.text) == []


def test_two_roots() -> None:
    tree = valid()
    problems = tree_problems(corrupt(tree, 2, parent_id=None, depth=0), tree.text)
    assert "expected exactly one root, found 2" in problems


def test_missing_parent() -> None:
    tree = valid()
    assert "node 2: parent 99 does not exist" in tree_problems(corrupt(tree, 2, parent_id=99), tree.text)


def test_parent_after_child_or_cycle() -> None:
    tree = valid()
    problems = tree_problems(corrupt(tree, 2, parent_id=3, depth=4), tree.text)
    assert any("does not precede it" in p for p in problems)
    problems = tree_problems(corrupt(tree, 2, parent_id=2, depth=3), tree.text)
    assert any("does not precede it" in p for p in problems)


def test_wrong_depth_and_heading_under_content() -> None:
    tree = valid()
    assert "node 2: depth 5 != parent depth + 1" in tree_problems(corrupt(tree, 2, depth=5), tree.text)
    nodes = [*valid().nodes, TreeNode(4, 3, STRUCTURE, "heading", 4, "H", ("T", "A", "H"), 0, 0)]
    assert any("heading under content node 3" in p for p in tree_problems(nodes, valid().text))


def test_empty_content_and_unknown_kind() -> None:
    tree = valid()
    nodes = corrupt(tree, 2, text="  ", span_end=tree.nodes[2].span_start + 2)
    assert "node 2: empty content node" in tree_problems(nodes, tree.text)
    assert "node 3: unknown kind 'other'" in tree_problems(corrupt(tree, 3, kind="other"), tree.text)


def test_span_mismatch_outside_and_overlap() -> None:
    tree = valid()
    node = tree.nodes[2]
    assert "node 2: text differs from the document text at its span" in tree_problems(
        corrupt(tree, 2, span_start=node.span_start + 1, span_end=node.span_end + 1), tree.text
    )
    assert any("outside the text" in p for p in tree_problems(corrupt(tree, 3, span_end=len(tree.text) + 5), tree.text))
    assert "node 3: span starts before the previous node ends" in tree_problems(
        corrupt(tree, 3, span_start=0, span_end=4, text="T\n\nA"), tree.text
    )


def test_ids_out_of_order_and_bad_root() -> None:
    tree = valid()
    nodes = corrupt(tree, 3, node_id=7)
    assert "node ids are not 0..n-1 in document order" in tree_problems(nodes, tree.text)
    nodes = corrupt(tree, 0, kind=CONTENT)
    assert "node 0 is not a structure root" in tree_problems(nodes, tree.text)


def test_problem_list_is_capped() -> None:
    tree = valid()
    nodes = [dataclasses.replace(tree.nodes[2], node_id=k, span_start=0, span_end=0) for k in range(1, 200)]
    problems = tree_problems([tree.nodes[0], *nodes], tree.text)
    assert problems[-1] == "... (more problems not listed)"
    assert len(problems) <= 60
