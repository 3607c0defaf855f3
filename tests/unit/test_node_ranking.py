"""Where a node scorer ranks a question's gold node (`core/evaluation/node_ranking.py`): the
candidates a question's views show, the first gold rank (ties against the scorer), the pooled
summary paired against a baseline scorer."""

from __future__ import annotations

import pytest

from rag_assets.core.corpus.blocks import heading, paragraph
from rag_assets.core.corpus.tree import CONTENT, build_tree
from rag_assets.core.evaluation.node_ranking import (
    GoldRank,
    QuestionCandidates,
    first_gold_rank,
    question_candidates,
    rank_questions,
    ranking_table,
    summarise_ranks,
)
from rag_assets.core.routing.samples import RoutingExample
from rag_assets.core.routing.subtree import DocumentRouting, SubtreeView


def page():
    return build_tree(
        "Kings",
        [
            heading("History", 1),
            paragraph("The Kings moved to Sacramento in 1985."),
            paragraph("They won the title in 1951."),
            heading("Arena", 1),
            paragraph("They play at the Golden 1 Center."),
        ],
    )


def view_of(tree, shown: list[int], gold: list[int]) -> RoutingExample:
    state = DocumentRouting("kings", tree.nodes)
    view = SubtreeView("kings", state.title, tree.nodes, frozenset(shown), frozenset())
    return RoutingExample("when did the kings move", state, view, frozenset(gold), frozenset())


def test_candidates_are_the_shown_content_nodes_under_their_heading_path_and_gold_only_where_shown() -> None:
    tree = page()
    moved, title, arena = (n.node_id for n in tree.nodes if n.kind == CONTENT)
    first = view_of(tree, [moved, title], [moved])
    second = view_of(tree, [arena], [title])  # a gold label on a node this view does not show
    candidates = question_candidates("q1", [first, second])
    assert candidates.texts == {
        ("kings", moved): "Kings > History: The Kings moved to Sacramento in 1985.",
        ("kings", title): "Kings > History: They won the title in 1951.",
        ("kings", arena): "Kings > Arena: They play at the Golden 1 Center.",
    }
    assert candidates.gold == frozenset({("kings", moved)})
    assert candidates.query == "when did the kings move"
    with pytest.raises(ValueError, match="q2: no labelled view"):
        question_candidates("q2", [])


def test_first_gold_rank_counts_the_non_gold_nodes_scored_at_least_as_high() -> None:
    scores = {("d", 1): 0.9, ("d", 2): 0.7, ("d", 3): 0.5, ("d", 4): 0.7}
    assert first_gold_rank(scores, {("d", 1)}) == 1
    assert first_gold_rank(scores, {("d", 3), ("d", 2)}) == 3  # the better gold counts: 0.9 and the 0.7 tie
    assert first_gold_rank(scores, {("d", 3)}) == 4
    assert first_gold_rank(scores, {("e", 1)}) is None


def test_questions_without_gold_are_skipped_and_an_unscored_candidate_is_an_error() -> None:
    with_gold = QuestionCandidates("q1", "q", {("d", 1): "a", ("d", 2): "b"}, frozenset({("d", 2)}))
    without = QuestionCandidates("q2", "q", {("d", 1): "a"}, frozenset())
    ranks = rank_questions("s", [with_gold, without], lambda q: {k: float(k[1]) for k in q.texts})
    assert ranks == [GoldRank("s", "q1", 1, 2)]
    with pytest.raises(ValueError, match="scorer 'lazy' left 1 candidate nodes of q1 unscored"):
        rank_questions("lazy", [with_gold], lambda q: {("d", 2): 1.0})


def test_summary_pairs_each_scorer_with_the_baseline() -> None:
    ranks = [
        GoldRank("base", "q1", 1, 10),
        GoldRank("base", "q2", 4, 10),
        GoldRank("base", "q3", 2, 10),
        GoldRank("base", "q4", 1, 10),
        GoldRank("new", "q1", 1, 10),
        GoldRank("new", "q2", 1, 10),
        GoldRank("new", "q3", 5, 10),
        GoldRank("new", "q4", 1, 10),
    ]
    base, new = summarise_ranks(ranks, baseline="base")
    assert (base.scorer, base.questions, base.first.mean, base.top_k.mean) == ("base", 4, 0.5, 0.75)
    assert base.reciprocal.mean == pytest.approx((1 + 1 / 4 + 1 / 2 + 1) / 4)
    assert base.first_vs_baseline is None
    assert (new.first.mean, new.top_k.mean) == (0.75, 0.75)
    assert new.first_vs_baseline.mean == 0.25  # q2 gained, the others level
    assert new.first_vs_baseline.low <= 0.0 <= new.first_vs_baseline.high  # 1 of 4 questions: no finding
    header, body = ranking_table([base, new])
    assert header[2:4] == ["gold ranked first", "gold in top 3"]
    assert body[0][:3] == ["base", "4", base.first.text()] and body[0][-1] == ""
    assert body[1][-1].startswith("+0.250 (")
    with pytest.raises(ValueError, match="baseline scorer 'missing'"):
        summarise_ranks(ranks, baseline="missing")
