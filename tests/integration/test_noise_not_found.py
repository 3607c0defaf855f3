"""Nonsense is said not found by what its words are to the collection: a real LanceDB index of the
built-in Python reference (its full-text side), the packaged noise questions and the built-in
corpus' own dev and test questions."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from rag_assets.core.answering.known_terms import term_share
from rag_assets.core.answering.no_answer import NOT_FOUND_ANSWER, noise_questions
from rag_assets.core.answering.strategy_runner import run_strategy
from rag_assets.core.answering.types import RetrievalExtras, StrategySpec
from rag_assets.core.corpus.question_sets import BUILTIN_PYTHON_REFERENCE_QUESTIONS, load_questions
from rag_assets.core.corpus.sources import BUILTIN_PYTHON_REFERENCE, CollectionSpec, SourceDocument, iter_collection
from rag_assets.core.corpus.tree_building import document_tree
from rag_assets.core.index.embedding import Embedder
from rag_assets.core.index.passages import cut_passages
from rag_assets.core.index.retrieval import search
from rag_assets.core.index.term_lookup import IndexTerms
from rag_assets.core.index.vector_index import PassageIndex


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """The built-in Python reference ("py") parsed into trees and indexed, as `rag run` indexes it."""
    spec = CollectionSpec("py", BUILTIN_PYTHON_REFERENCE)
    docs = [d for d in iter_collection(spec) if isinstance(d, SourceDocument)]
    trees = {d.doc_id: document_tree(d) for d in docs}
    passages = [p for d in docs for p in cut_passages(d.doc_id, trees[d.doc_id].nodes, trees[d.doc_id].text)]
    embedder = Embedder(progress=False)
    index = PassageIndex(tmp_path_factory.mktemp("lance"), embedder)
    index.sync(passages, "py")

    def retrieve(query: str, mode: str, k: int, **_: object):
        return search(index, embedder, query, mode=mode, k=k, collections=["py"])

    return SimpleNamespace(
        index=index,
        embedder=embedder,
        retrieve=retrieve,
        trees={doc_id: tree.nodes for doc_id, tree in trees.items()},
        lookup=IndexTerms(lambda: index.table, ["py"]),
    )


def test_keyboard_noise_is_not_found_and_the_note_names_its_words(reference: SimpleNamespace) -> None:
    from rag_assets.core.answering.extractive import EmbedderScorer

    spec = StrategySpec("rag-hybrid-extractive", "rag", top_k=3, answer_form="extractive")
    extras = RetrievalExtras(answer_scorer=EmbedderScorer(reference.embedder), term_lookup=reference.lookup)
    noise, real = run_strategy(
        ["asdf qwerty zxcv", "What does the pass statement do?"],
        spec,
        retrieve=reference.retrieve,
        trees=reference.trees,
        engine=None,
        extras=extras,
    )
    assert noise.not_found and noise.answer == NOT_FOUND_ANSWER and noise.supporting == 0
    assert noise.not_found_note == (
        "not found: none of the words 'asdf', 'qwerty', 'zxcv' occurs in the documents searched"
    )
    assert noise.citations  # the evidence stays, as evidence also given
    assert not real.not_found and real.answer != NOT_FOUND_ANSWER and real.not_found_note == ""


def test_the_packaged_noise_is_not_found(reference: SimpleNamespace) -> None:
    noise = noise_questions()
    refused = [q for q in noise if term_share(q, reference.lookup).refused()]
    assert len(noise) >= 200
    assert len(refused) >= 0.95 * len(noise), sorted(set(noise) - set(refused))


def test_the_built_in_corpus_own_questions_are_not_refused_by_their_words(reference: SimpleNamespace) -> None:
    questions, problems = load_questions(BUILTIN_PYTHON_REFERENCE_QUESTIONS)
    asked = [q.query for q in questions if q.split in ("dev", "test")]
    assert not problems and len(asked) >= 10
    refused = [q for q in asked if term_share(q, reference.lookup).refused()]
    assert len(refused) <= 0.05 * len(asked), refused
    # a typo or a word the documents never use leaves the question answered
    assert not term_share("What does the brek statement do?", reference.lookup).refused()
    assert not term_share("Does Guido's assert statement raise AssertionError?", reference.lookup).refused()
    assert term_share("what is asdf qwer", reference.lookup).refused()
