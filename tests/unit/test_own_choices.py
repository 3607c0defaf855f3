"""The encoder router's own-choice rule: which nodes a margin answers, which (weight, margin) the
calibration keeps, and its record in router.json."""

from __future__ import annotations

import pytest

from rag_assets.core.routing.own_choices import (
    OwnChoiceCalibration,
    OwnChoices,
    OwnChoiceTrial,
    margin_answers,
    own_choices_from_record,
    pick_own_choices,
)


def test_a_margin_answers_every_node_within_it_of_the_questions_best() -> None:
    scores = {3: 0.71, 4: 0.64, 7: 0.62, 9: 0.30}
    assert margin_answers(scores, best=0.71, margin=0.08) == [3, 4]
    assert margin_answers(scores, best=0.71, margin=0.1) == [3, 4, 7]
    assert margin_answers(scores, best=0.71, margin=0.0) == [3]
    # the question's best came from another document: this one only answers what is close to it
    assert margin_answers(scores, best=0.90, margin=0.2) == [3]
    assert margin_answers(scores, best=0.90, margin=0.1) == []


def test_the_fewest_words_reaching_the_baseline_within_the_target_win() -> None:
    trials = [
        OwnChoiceTrial(3.0, 0.05, evidence=0.70, words_share=0.41),
        OwnChoiceTrial(3.0, 0.08, evidence=0.83, words_share=0.59),
        OwnChoiceTrial(4.0, 0.06, evidence=0.80, words_share=0.49),
        OwnChoiceTrial(4.0, 0.08, evidence=0.84, words_share=0.61),  # beyond the target
    ]
    assert pick_own_choices(trials, baseline=0.79, word_target=0.6, objective="fewest_words") == trials[2]
    # none reaches the baseline: the best figure within the target
    assert pick_own_choices(trials, baseline=0.9, word_target=0.6, objective="fewest_words") == trials[1]
    # a tie on words and figure goes to the smaller weight, then margin
    tied = [
        OwnChoiceTrial(6.0, 0.05, 0.8, 0.5),
        OwnChoiceTrial(4.0, 0.07, 0.8, 0.5),
        OwnChoiceTrial(4.0, 0.06, 0.8, 0.5),
    ]
    assert pick_own_choices(tied, baseline=0.7, word_target=0.6, objective="fewest_words") == tied[2]
    assert pick_own_choices(tied, baseline=0.7, word_target=0.6) == tied[2]  # and by the default objective
    assert pick_own_choices(trials, baseline=0.5, word_target=0.3, objective="fewest_words") is None


def test_the_default_objective_keeps_the_best_figure_under_the_word_target() -> None:
    trials = [
        OwnChoiceTrial(3.0, 0.0, evidence=0.80, words_share=0.26),  # already reaches the baseline
        OwnChoiceTrial(3.0, 0.02, evidence=0.86, words_share=0.44),
        OwnChoiceTrial(4.0, 0.03, evidence=0.86, words_share=0.52),  # as good, more words
        OwnChoiceTrial(4.0, 0.05, evidence=0.90, words_share=0.64),  # beyond the target
    ]
    # the first trial already ties the baseline on these few questions; the words it leaves unused
    # bought evidence there, so the default keeps the best figure (and of equal ones the fewer words)
    assert pick_own_choices(trials, baseline=0.8, word_target=0.6) == trials[1]
    assert pick_own_choices(trials, baseline=0.8, word_target=0.6, objective="fewest_words") == trials[0]
    assert pick_own_choices(trials, baseline=0.8, word_target=0.2) is None
    with pytest.raises(ValueError, match="objective must be one of"):
        pick_own_choices(trials, baseline=0.8, word_target=0.6, objective="most_words")


def test_the_chosen_rule_survives_router_json() -> None:
    calibration = OwnChoiceCalibration(
        OwnChoices(margin=0.06, section_weight=4.0),
        metric="evidence_recall",
        baseline=0.79312,
        word_target=0.6,
        questions=23,
        trials=[OwnChoiceTrial(4.0, 0.06, 0.7959, 0.4912)],
    )
    record = calibration.record()
    assert record["chosen"] == {"margin": 0.06, "section_weight": 4.0}
    assert record["baseline"] == 0.7931
    assert record["objective"] == "best_within"
    assert record["trials"] == [{"section_weight": 4.0, "margin": 0.06, "evidence": 0.7959, "words_share": 0.4912}]
    assert own_choices_from_record({"own_choices": record}) == OwnChoices(0.06, 4.0)
    # routers published before the rule (or trained without held-out questions) keep the threshold
    assert own_choices_from_record({}) is None
    assert own_choices_from_record({"own_choices": None}) is None
    unchosen = OwnChoiceCalibration(None, "passage_hit", 0.5, 0.6, 4).record()
    assert own_choices_from_record({"own_choices": unchosen}) is None


def test_a_negative_margin_or_weight_is_refused() -> None:
    with pytest.raises(ValueError, match="margin >= 0"):
        OwnChoices(margin=-0.1, section_weight=1.0)
    with pytest.raises(ValueError, match="section_weight >= 0"):
        OwnChoices(margin=0.1, section_weight=-1.0)
