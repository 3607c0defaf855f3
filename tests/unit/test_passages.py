"""Passage cutting on hand-built trees: section boundaries, long nodes, exact offsets."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from rag_assets.core.corpus.blocks import Block, BlockKind, heading, list_item, paragraph
from rag_assets.core.corpus.tree import build_tree
from rag_assets.core.index.passages import cut_passages, passage_problems, uncovered_content_nodes


def _tree():
    return build_tree(
        "Doc",
        [
            paragraph("Lead words here."),  # 1 (under the root)
            heading("A", 1),  # 2
            paragraph("one two three four"),  # 3
            paragraph("five six:"),  # 4
            list_item("seven eight", 1),  # 5 (under 4)
            list_item("nine", 2),  # 6 (under 5)
            heading("B", 2),  # 7
            paragraph("alpha beta gamma"),  # 8
        ],
    )


def test_passages_pack_a_section_and_never_cross_a_heading() -> None:
    tree = _tree()
    passages = cut_passages("d", tree.nodes, tree.text, max_words=5)
    assert [(p.passage_id, p.node_ids, p.heading_path, p.text) for p in passages] == [
        ("d#1", (1,), ("Doc",), "Lead words here."),
        ("d#3", (3,), ("Doc", "A"), "one two three four"),
        ("d#4", (4, 5, 6), ("Doc", "A"), "five six:\nseven eight\nnine"),
        ("d#8", (8,), ("Doc", "A", "B"), "alpha beta gamma"),
    ]
    assert [p.word_count for p in passages] == [3, 4, 5, 3]
    for p in passages:
        assert passage_problems(p, tree.text) == []
        assert [tree.text[s:e] for s, e in p.spans] == [tree.nodes[n].text for n in p.node_ids]
    assert uncovered_content_nodes(tree.nodes, passages) == []


def test_a_long_node_is_split_at_sentences_with_exact_offsets() -> None:
    long = "First sentence has five words. Second one is short. " + " ".join(f"w{i}" for i in range(12)) + "."
    tree = build_tree("Doc", [heading("S", 1), paragraph(long)])
    node = tree.nodes[2]
    passages = cut_passages("d", tree.nodes, tree.text, max_words=6)
    assert [p.text for p in passages] == [
        "First sentence has five words.",
        "Second one is short.",
        "w0 w1 w2 w3 w4 w5",
        "w6 w7 w8 w9 w10 w11.",
    ]
    assert all(p.node_ids == (2,) for p in passages)
    assert passages[0].spans == ((node.span_start, node.span_start + 30),)
    assert len({p.passage_id for p in passages}) == 4
    assert passages[0].passage_id == "d#2" and passages[1].passage_id.startswith("d#2.")
    assert all(passage_problems(p, tree.text) == [] for p in passages)


def test_the_exactness_check_catches_a_corrupted_passage() -> None:
    tree = _tree()
    passage = cut_passages("d", tree.nodes, tree.text, min_words=0)[0]  # one node: "Lead words here."
    assert passage_problems(replace(passage, text=passage.text + "!"), tree.text) == [
        "text differs from the concatenation of its nodes' text at their spans"
    ]
    assert passage_problems(replace(passage, spans=((0, 10**6),)), tree.text) == [
        "a span lies outside the document text"
    ]
    assert "node ids" in passage_problems(replace(passage, node_ids=()), tree.text)[0]
    assert uncovered_content_nodes(tree.nodes, []) == [1, 3, 4, 5, 6, 8]


def test_ids_and_hashes_are_stable_and_change_with_content() -> None:
    tree = _tree()
    first = cut_passages("d", tree.nodes, tree.text, min_words=0)
    assert first == cut_passages("d", tree.nodes, tree.text, min_words=0)
    edited = build_tree("Doc", [paragraph("Lead words here."), heading("A", 1), paragraph("one two three FOUR")])
    second = cut_passages("d", edited.nodes, edited.text, min_words=0)
    assert first[0].content_hash == second[0].content_hash
    assert first[1].passage_id == second[1].passage_id and first[1].content_hash != second[1].content_hash


_words = st.lists(st.sampled_from(["a", "bb", "ccc.", "dd!", "e?"]), min_size=1, max_size=40).map(" ".join)
_blocks = st.lists(
    st.one_of(
        st.builds(lambda t, lv: heading(t, lv), _words, st.integers(1, 4)),
        st.builds(paragraph, _words),
        st.builds(lambda t, lv: list_item(t, lv), _words, st.integers(1, 3)),
        st.builds(lambda t: Block(BlockKind.CODE, t), _words),
    ),
    max_size=25,
)


@settings(max_examples=100, deadline=None)
@given(_blocks, st.integers(1, 30))
def test_any_tree_is_covered_exactly(blocks, max_words) -> None:
    tree = build_tree("T", blocks)
    unmerged = cut_passages("d", tree.nodes, tree.text, max_words=max_words, min_words=0)
    assert all(len({tree.nodes[n].heading_path for n in p.node_ids}) == 1 for p in unmerged)
    passages = cut_passages("d", tree.nodes, tree.text, max_words=max_words)
    assert uncovered_content_nodes(tree.nodes, passages) == []
    assert len({p.passage_id for p in passages}) == len(passages)
    assert len(passages) <= len(unmerged)
    for p in passages:
        assert passage_problems(p, tree.text) == []
        assert p.word_count <= max_words
        assert len(set(p.node_ids)) == len(p.node_ids)  # a node's pieces never meet in one passage
        # a merged passage's path is what its sections share
        assert all(tree.nodes[n].heading_path[: len(p.heading_path)] == p.heading_path for n in p.node_ids)


def test_small_sections_join_their_neighbours_across_headings() -> None:
    tree = build_tree(
        "Doc",
        [
            heading("A", 1),  # 1
            paragraph("tiny"),  # 2
            heading("B", 1),  # 3
            paragraph("also small"),  # 4
            heading("C", 1),  # 5
            paragraph("a section of six whole words"),  # 6
            heading("D", 2),  # 7
            paragraph("the end"),  # 8
        ],
    )
    passages = cut_passages("d", tree.nodes, tree.text, max_words=10, min_words=5)
    assert [(p.passage_id, p.node_ids, p.heading_path, p.text, p.word_count) for p in passages] == [
        ("d#2", (2, 4, 6), ("Doc",), "tiny\nalso small\na section of six whole words", 9),
        ("d#8", (8,), ("Doc", "C", "D"), "the end", 2),  # 9 + 2 words do not fit in 10: alone
    ]


def test_a_markdown_file_of_twenty_thousand_headings_makes_few_passages() -> None:
    """The drill's 533 KB file: 20,000 headings, half with a few words under them, made 10,000
    passages of 21 characters; merged, a passage holds about max_words words."""
    from rag_assets.core.corpus.parsers import parse_blocks

    text = "".join(f"# Part {i}\n\n## Item {i}\n\nnote number {i} here\n\n" for i in range(10_000))
    tree = build_tree("Headings", parse_blocks("markdown", text))
    assert len(tree.nodes) == 30_001
    unmerged = cut_passages("d", tree.nodes, tree.text, max_words=100, min_words=0)
    assert len(unmerged) == 10_000
    passages = cut_passages("d", tree.nodes, tree.text, max_words=100)
    assert len(passages) == 400  # 25 notes of 4 words per passage
    assert {p.word_count for p in passages} == {100}
    assert uncovered_content_nodes(tree.nodes, passages) == []
