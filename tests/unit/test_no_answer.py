"""The relevance floor: measured on questions the documents answer, recorded with the default
form, read back by the answering session, and said in the answer's note."""

from __future__ import annotations

import pytest

from rag_assets.core.answering.no_answer import MIN_QUESTIONS, RelevanceFloor, calibrate_floor, off_topic_questions
from rag_assets.core.answering.policy.default_form import FormChoice, policy_problems
from rag_assets.core.answering.published import PublishedCollection
from rag_assets.core.routing.teachers import SimilarityThresholds
from rag_assets.core.store.publication import IndexPin

pytestmark = pytest.mark.unit


def test_the_floor_lies_below_most_answered_questions_and_above_most_off_topic_ones() -> None:
    answered = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0, None]  # None: a question with no evidence
    assert calibrate_floor(answered, [], "embedder-1") == RelevanceFloor(pytest.approx(0.09), "embedder-1", 10)
    answered = [0.8, 0.75, 0.7, 0.7, 0.65, 0.6]
    off_topic = [0.2, 0.25, 0.3, 0.3, 0.35, 0.4]
    # off-topic questions reach 0.3875 (their 95% quantile), the answered ones stay above 0.625: the lower
    assert calibrate_floor(answered, off_topic, "embedder-1").value == pytest.approx(0.3875)
    # a collection about baking: the everyday questions score high, the answered ones keep the floor down
    assert calibrate_floor(answered, [0.9] * 6, "embedder-1").value == pytest.approx(0.625)
    assert calibrate_floor([0.5] * (MIN_QUESTIONS - 1), off_topic, "embedder-1") is None  # too few to measure


def test_the_packaged_off_topic_questions_are_questions() -> None:
    questions = off_topic_questions()
    assert len(questions) == 40 and all(q.endswith("?") for q in questions)


def test_the_floor_is_published_with_the_default_form_and_read_back() -> None:
    floor = RelevanceFloor(0.4412, "reranker-1", 21)
    choice = FormChoice("generated", 15, 8, 21, (0.05, 0.6), floor)
    details = choice.details()
    assert details["relevance_floor"] == 0.4412 and details["relevance_scorer"] == "reranker-1"
    assert "relevance floor 0.441" in choice.note
    published = PublishedCollection(
        "cqa",
        IndexPin("cqa", None, None, None, 0, True, ""),
        {},
        SimilarityThresholds(),
        None,
        None,
        None,
        form_choice=FormChoice.from_details("generated", details),
    )
    assert published.relevance_floor == floor and published.default_form == "generated"
    assert published.form_choice == choice
    assert FormChoice("extractive", 1, 2, 3).details().get("relevance_floor") is None


def test_a_published_policy_that_breaks_its_rule_is_caught() -> None:
    assert policy_problems(FormChoice("extractive", 1, 2, 3)) == []
    assert policy_problems(FormChoice("generated", 15, 8, 21, (0.05, 0.6))) == []
    assert policy_problems(None) == ["no answer policy is published"]
    assert policy_problems(FormChoice("generated", 3, 2, 6, (-0.2, 0.5))) == [
        "the reader's answer is the default without being right more often beyond noise"
    ]
    assert policy_problems(FormChoice("extractive", 7, 2, 6)) == ["right counts 7 / 2 out of 0..6 questions"]


def test_the_note_says_why_an_answer_is_not_found() -> None:
    floor = RelevanceFloor(0.44, "reranker-1", 21)
    assert floor.note(0.31) == (
        "not found: the evidence given does not answer the question (its best sentence scores 0.31; the "
        "collection's floor is 0.44, set between 21 validation questions and everyday ones it does not answer)"
    )
    assert "no sentence" in floor.note(None)


def test_the_one_fallback_names_what_routed_in_either_form() -> None:
    import dataclasses

    from rag_assets.core.answering.policy.catalogue import named_spec
    from rag_assets.core.answering.policy.fallback import runnable_spec

    published = PublishedCollection(
        "cqa", IndexPin("cqa", None, None, None, 0, True, ""), {}, SimilarityThresholds(), None, None, None
    )
    rdr2 = named_spec("rdr2", "short", None)
    generated = runnable_spec(rdr2, published)
    assert (generated.spec.name, generated.spec.router) == ("rdr2-similarity", "similarity")
    assert generated.note == "no trained encoder router for 'cqa': routing with the untrained encoder (similarity)"
    quoted = runnable_spec(dataclasses.replace(rdr2, name="rdr2-extractive", answer_form="extractive"), published)
    assert (quoted.spec.name, quoted.spec.router) == ("rdr2-similarity-extractive", "similarity")
    assert runnable_spec(named_spec("rag-hybrid", "short", None), published).note is None
