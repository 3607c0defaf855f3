"""Held-out routed evidence (what the encoder's section weight is chosen by): a real LanceDB index of
the conftest corpus, the real embedder, the oracle / hit-nodes / similarity routers."""

from __future__ import annotations

import pytest

from rag_assets.core.answering.strategies import gather_evidence
from rag_assets.core.answering.types import StrategySpec
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.evaluation.held_out_evidence import HeldOutEvidence, evidence_metrics, held_out_evidence
from rag_assets.core.index.embedding import Embedder
from rag_assets.core.routing.scoring_router import HitNodesRouter, OracleRouter, ScoringRouter
from rag_assets.core.routing.teachers import SimilarityThresholds
from tests.integration.tiny_index import indexed_tiny_corpus

QUESTIONS = [
    Question("tea", "How hot should the water be for green tea?", answers=("80 C",)),
    Question("pharos", "When was the Pharos of Alexandria built?", answers=("280 BC",)),
    Question("tide", "How many high tides are there each day?", answers=("two high tides",)),
]
HYBRID = StrategySpec("rag-hybrid", "rag", top_k=5)


def routed(router: str) -> StrategySpec:
    return StrategySpec(f"rdr2-{router}", "rdr2", top_k=2, passages_per_query=20, expand_iterations=1, router=router)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder(progress=False)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder):
    return indexed_tiny_corpus(tmp_path_factory.mktemp("corpus"), tmp_path_factory.mktemp("lance"), embedder)


def test_held_out_evidence_scores_routers_at_retrieve_and_reads_words(corpus, embedder: Embedder) -> None:
    retrieve, trees = corpus
    judge = held_out_evidence(QUESTIONS, baseline=HYBRID, routed=routed("oracle"), retrieve=retrieve, trees=trees)
    assert judge is not None and judge.metric == "passage_hit"  # short answers: the passage hit
    hybrid = gather_evidence([q.query for q in QUESTIONS], HYBRID, retrieve=retrieve, trees=trees)
    assert list(judge.budgets) == [g.words for g in hybrid] and all(judge.budgets)
    baseline = sum(evidence_metrics(g, q)["passage_hit"] for g, q in zip(hybrid, QUESTIONS)) / len(QUESTIONS)
    # The oracle ceiling keeps every answer retrieve-and-read found, within its words.
    assert judge.score(OracleRouter(QUESTIONS)) >= baseline > 0
    # Other routers are judged the same way (the router is handed to the spec's router kind).
    for kind, router in (
        ("hit-nodes", HitNodesRouter()),
        ("similarity", ScoringRouter(embedder, SimilarityThresholds(), kind="similarity", contextual=False)),
    ):
        other = HeldOutEvidence(QUESTIONS, judge.budgets, judge.metric, routed(kind), retrieve, trees)
        assert 0.0 <= other.score(router) <= 1.0


def test_held_out_evidence_needs_gold_labels_and_a_routed_spec(corpus) -> None:
    retrieve, trees = corpus
    unlabelled = [Question("q", "How hot should the water be for green tea?")]
    assert (
        held_out_evidence(unlabelled, baseline=HYBRID, routed=routed("oracle"), retrieve=retrieve, trees=trees) is None
    )
    assert held_out_evidence([], baseline=HYBRID, routed=routed("oracle"), retrieve=retrieve, trees=trees) is None
    with pytest.raises(ValueError, match="2 budgets for 3 questions"):
        HeldOutEvidence(QUESTIONS, [10, 10], "passage_hit", routed("oracle"), retrieve, trees)
    with pytest.raises(ValueError, match="does not route"):
        HeldOutEvidence(QUESTIONS, [10, 10, 10], "passage_hit", HYBRID, retrieve, trees)


def test_judging_several_routers_searches_each_question_once(corpus) -> None:
    retrieve, trees = corpus
    calls: list[str] = []

    def counted(query: str, mode: str, k: int, **options: object):
        calls.append(query)
        return retrieve(query, mode, k, **options)

    judge = held_out_evidence(QUESTIONS, baseline=HYBRID, routed=routed("oracle"), retrieve=counted, trees=trees)
    assert judge is not None
    first = judge.score(OracleRouter(QUESTIONS))
    searched = len(calls)
    assert judge.score(OracleRouter(QUESTIONS)) == first and len(calls) == searched  # served from memory
