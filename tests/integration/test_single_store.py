"""The single store: each question searched and routed within its own document only (the
FinanceBench setting beside the shared store), and the named documents: within the documents the
question names; on a real LanceDB index of the conftest corpus."""

from __future__ import annotations

import pytest

from rag_assets.core.answering.types import StrategySpec
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.evaluation.evidence import (
    NAMED_SUFFIX,
    SINGLE_SUFFIX,
    StoreScope,
    evidence_problems,
    measure_evidence,
    own_documents,
    summarise_evidence,
)
from rag_assets.core.index.document_names import DocumentNames
from rag_assets.core.index.embedding import Embedder
from rag_assets.core.routing.scoring_router import HitNodesRouter
from tests.integration.tiny_index import indexed_tiny_corpus

pytestmark = pytest.mark.integration

HYBRID = StrategySpec("rag-hybrid", "rag", top_k=3)
ROUTED = StrategySpec("rdr2", "rdr2", top_k=2, passages_per_query=10, expand_iterations=1, router="hit-nodes")
TEA = "How hot should the water be for green tea?"
QUESTIONS = [
    Question("tea", TEA, answers=("80 C",), gold_doc="kettle.md"),
    # the same question said to be about the pond page: within that page there is no answer
    Question("tea-pond", TEA + " (pond)", answers=("80 C",), gold_doc="pond"),
    Question("unknown", "What does the pass statement do?", answers=("null operation",)),
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory):
    return indexed_tiny_corpus(
        tmp_path_factory.mktemp("corpus"), tmp_path_factory.mktemp("lance"), Embedder(progress=False)
    )


def test_own_documents_by_file_name_with_or_without_extension(corpus) -> None:
    _, trees = corpus
    assert own_documents(QUESTIONS, list(trees)) == {"tea": ["tiny/kettle.md"], "tea-pond": ["tiny/pond.html"]}


def test_single_store_searches_each_question_within_its_document(corpus) -> None:
    retrieve, trees = corpus
    common = {"baseline": HYBRID, "routed": ROUTED, "kinds": ["hit-nodes"], "routers": {"hit-nodes": HitNodesRouter()}}
    shared = measure_evidence(QUESTIONS, retrieve=retrieve, trees=trees, **common)
    single = measure_evidence(
        QUESTIONS,
        retrieve=retrieve,
        trees=trees,
        scope=StoreScope.single_store(own_documents(QUESTIONS, list(trees))),
        **common,
    )
    assert {r.strategy for r in single} == {
        "rag-hybrid" + SINGLE_SUFFIX,
        "rdr2-hit-nodes" + SINGLE_SUFFIX,
        "rdr2-hit-nodes own" + SINGLE_SUFFIX,
    }
    assert {r.qid for r in single} == {"tea", "tea-pond"}  # a question without its document is not asked

    assert hit(shared, "rag-hybrid", "tea-pond") == 1.0  # the shared store finds the kettle's answer
    assert hit(single, "rag-hybrid" + SINGLE_SUFFIX, "tea-pond") == 0.0  # the pond page alone cannot
    assert hit(single, "rag-hybrid" + SINGLE_SUFFIX, "tea") == 1.0
    assert hit(single, "rdr2-hit-nodes" + SINGLE_SUFFIX, "tea") == 1.0


def test_named_documents_search_where_the_question_names_and_elsewhere_the_whole_store(corpus) -> None:
    retrieve, trees = corpus
    common = {"baseline": HYBRID, "routed": ROUTED, "kinds": ["hit-nodes"], "routers": {"hit-nodes": HitNodesRouter()}}
    names = DocumentNames(trees)
    named = {q.qid: names.named_in(q.query) for q in QUESTIONS}
    assert named == {"tea": [], "tea-pond": ["tiny/pond.html"], "unknown": ["tiny/pass.txt"]}
    shared = measure_evidence(QUESTIONS, retrieve=retrieve, trees=trees, **common)
    rows = measure_evidence(QUESTIONS, retrieve=retrieve, trees=trees, scope=StoreScope.named(named), **common)
    assert {r.qid for r in rows} == {"tea", "tea-pond", "unknown"}  # naming none: the whole store
    assert hit(rows, "rag-hybrid" + NAMED_SUFFIX, "tea") == 1.0
    assert hit(rows, "rag-hybrid" + NAMED_SUFFIX, "tea-pond") == 0.0  # within the pond page only
    assert hit(rows, "rag-hybrid" + NAMED_SUFFIX, "unknown") == 1.0  # pass.txt holds the answer
    every = shared + rows
    assert evidence_problems(every) == []
    summary = summarise_evidence(every)
    # a named row is compared with rag-hybrid within the named documents; that row with the whole store's
    assert summary.differences["rdr2-hit-nodes" + NAMED_SUFFIX]["words"].n == 3
    assert summary.differences["rag-hybrid" + NAMED_SUFFIX]["passage_hit"].mean == pytest.approx(-1 / 3)


def hit(rows, strategy: str, qid: str) -> float:
    return next(r.metrics["passage_hit"] for r in rows if r.strategy == strategy and r.qid == qid)
