"""When the reranker and the namespace router train again: the decision and the reason it gives."""

from __future__ import annotations

from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.index.retraining import TrainingData, question_key, retrain_decision, training_data

PAIRS = [(f"c/doc{i}.md#{j}", f"h{i}{j}") for i in range(10) for j in range(3)]
QUESTIONS = [question_key(Question(f"q{i}", f"question {i}", ("a",))) for i in range(20)]
SETTINGS = {"max_steps": 8, "model": "bi-encoder"}


def test_unchanged_data_keeps_the_model_and_says_so() -> None:
    data = training_data(PAIRS, QUESTIONS, SETTINGS)
    decision = retrain_decision(data, training_data(PAIRS, QUESTIONS, SETTINGS), 0.1, model="rr-1")
    assert not decision.retrain
    assert decision.reason == (
        "0 of 10 documents (0.0%) and 0 of 20 training questions (0.0%) added, changed or deleted since rr-1 "
        "was trained: within the 10% threshold; kept rr-1"
    )


def test_a_change_within_the_threshold_keeps_the_model_and_one_beyond_retrains() -> None:
    before = training_data(PAIRS, QUESTIONS, SETTINGS)
    one_doc = [(p, h + "x" if p.startswith("c/doc0.md") else h) for p, h in PAIRS]  # 1 of 10 documents
    kept = retrain_decision(before, training_data(one_doc, QUESTIONS, SETTINGS), 0.1, model="rr-1")
    assert not kept.retrain and kept.documents_changed == 1
    two_docs = [(p, h + "x" if p.startswith(("c/doc0.md", "c/doc1.md")) else h) for p, h in PAIRS]
    retrain = retrain_decision(before, training_data(two_docs, QUESTIONS, SETTINGS), 0.1, model="rr-1")
    assert retrain.retrain and retrain.reason.endswith("above the 10% threshold")
    assert retrain.metadata()["training_documents_changed"] == 2


def test_added_and_deleted_documents_and_questions_count_as_changes() -> None:
    before = training_data(PAIRS, QUESTIONS, SETTINGS)
    after = training_data([*PAIRS[3:], ("c/new.md#1", "n")], QUESTIONS[:15], SETTINGS)
    decision = retrain_decision(before, after, 0.2, model="rr-1")
    # 1 deleted + 1 added of 11 documents; 5 of 20 questions gone (25% > 20%)
    assert decision.retrain and decision.documents_changed == 2 and decision.questions_changed == 5


def test_no_model_changed_settings_or_always_retrain() -> None:
    data = training_data(PAIRS, QUESTIONS, SETTINGS)
    assert retrain_decision(None, data, 0.1, model=None).reason == "no model trained before from this data"
    other = training_data(PAIRS, QUESTIONS, {**SETTINGS, "max_steps": 9})
    assert (
        retrain_decision(data, other, 0.5, model="rr-1").reason
        == "the training settings changed since rr-1 was trained"
    )
    assert retrain_decision(data, data, 0.5, model="rr-1", always=True).retrain


def test_the_fingerprint_round_trips_through_json() -> None:
    data = training_data(PAIRS, QUESTIONS, SETTINGS)
    assert TrainingData.from_json(data.to_json()) == data
    assert TrainingData.from_json({}) is None and TrainingData.from_json(None) is None
