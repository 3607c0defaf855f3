"""The views router_metrics scores: dev/test questions' views built as the training views are,
labelled by the oracle; the knobs they are built with; the title that says what they are."""

from __future__ import annotations

import pytest

from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.index.retrieval import SearchHit
from rag_assets.core.routing.evaluation_views import (
    ViewKnobs,
    evaluation_views,
    resolve_knobs,
    trained_evaluation_splits,
    views_title,
)
from rag_assets.core.routing.metrics import RoutingGold
from rag_assets.core.routing.subtree import word_count
from tests.unit.phone_manual import phone_nodes

PHONE = phone_nodes()  # 2 charging, 4 Display > 5 dark mode, 6 Sound > 7 ringtone
QUESTIONS = [
    Question("d1", "How long do I charge the battery?", ("3 hours",), split="dev"),
    Question("t1", "What saves the battery?", ("dark mode",), split="test"),
    Question("d2", "Is the phone waterproof?", split="dev"),  # no gold: the oracle cannot label it
]
# what the passage search finds for each question: the charging paragraph, for both
HIT_NODES = {"How long do I charge the battery?": (2,), "What saves the battery?": (2,)}


def test_views_are_built_as_training_views_and_labelled_by_the_oracle() -> None:
    asked: list[tuple[str, int]] = []

    def retrieve(query: str, k: int) -> list[SearchHit]:
        asked.append((query, k))
        return [SearchHit(1, 0.9, "p1", "phone", "tiny", HIT_NODES[query], (), (), "")]

    built = evaluation_views(QUESTIONS, retrieve, {"phone": PHONE}, ViewKnobs(3, 7, 1, 512), word_count)
    assert asked == [(QUESTIONS[0].query, 7), (QUESTIONS[1].query, 7)]  # k = passages_per_query
    assert built.split_of == {"d1": "dev", "t1": "test"} and built.questions == 2
    assert built.without_gold == ["d2"]
    views = {(s.qid, s.view): (s.visible_ids, g) for s, g in built.views}
    assert views == {
        # the charging paragraph answers d1; the expansion view (Display, the first other heading) refuses
        ("d1", "initial"): ((2,), RoutingGold(frozenset({2}), frozenset())),
        ("d1", "expand:4"): ((5,), RoutingGold(frozenset(), frozenset())),
        # t1's gold (dark mode, node 5) is under the collapsed Display heading: EXPAND it, then ANSWER
        ("t1", "initial"): ((2,), RoutingGold(frozenset(), frozenset({4}))),
        ("t1", "expand:4"): ((5,), RoutingGold(frozenset({5}), frozenset())),
    }
    ids = [s.subtree_id for s, _ in built.views]
    assert ids == sorted(ids)  # by subtree id: the first few views the LLM routes span the questions


def test_knobs_come_from_config_then_routing_subtrees_then_defaults() -> None:
    knobs, sources = resolve_knobs(
        {"top_docs": 5, "passages_per_query": None, "expansion_views": None, "token_budget": None},
        {"passages_per_query": 20, "expansion_views": 0, "questions": 42},
        {"top_docs": 3, "passages_per_query": 10, "expansion_views": 1, "token_budget": 512},
    )
    assert knobs == ViewKnobs(top_docs=5, passages_per_query=20, expansion_views=0, token_budget=512)
    assert sources == {
        "top_docs": "config",
        "passages_per_query": "routing_subtrees",
        "expansion_views": "routing_subtrees",
        "token_budget": "default",
    }


def test_splits_the_routers_trained_on_are_not_evaluation_views() -> None:
    assert trained_evaluation_splits("train") == []
    assert trained_evaluation_splits("train, dev") == ["dev"]


@pytest.mark.parametrize(
    ("views", "questions", "dev_test", "llm_views", "title"),
    [
        (114, 19, True, 4, "Router on all 114 dev+test views (19 questions); the LLM kinds on the first 4"),
        (114, 19, True, 114, "Router on all 114 dev+test views (19 questions)"),
        (28, 6, False, None, "Router on the validation fold (28 views of 6 train questions)"),
        (31, 0, False, 20, "Router on the validation fold (31 views); the LLM kinds on the first 20"),
    ],
)
def test_views_title(views: int, questions: int, dev_test: bool, llm_views: int | None, title: str) -> None:
    assert views_title(views, questions, dev_test, llm_views) == title
