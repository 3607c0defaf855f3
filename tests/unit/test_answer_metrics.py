"""Answer metrics on hand-made cases with exact expected values."""

from __future__ import annotations

import pytest

from rag_assets.core.answer_metrics import (
    contains_answer,
    normalize_answer,
    rouge_l,
    token_f1,
    word_count,
    yes_no_correct,
)


def test_normalisation_strips_case_punctuation_articles_and_spaces() -> None:
    assert normalize_answer("  The  Quick, brown FOX!  ") == "quick brown fox"
    assert normalize_answer("April 25 , 2018") == "april 25 2018"


def test_containment_is_word_boundary_aware() -> None:
    assert contains_answer("Season 2 started on April 25, 2018.", ["April 25 , 2018"])
    assert not contains_answer("There were 100 episodes", ["10"])
    assert contains_answer("There were 10 episodes", ["7", "10"])
    assert not contains_answer("anything", ["", "  "])


def test_token_f1_exact_values() -> None:
    assert token_f1("the cat sat", ["a cat sat down"]) == pytest.approx(0.8)  # p=1, r=2/3
    assert token_f1("dog", ["cat"]) == 0.0
    assert token_f1("", [""]) == 1.0
    assert token_f1("cat sat on mat", ["mat", "cat sat on mat"]) == 1.0


def test_yes_no_accuracy_only_applies_to_yes_no_gold() -> None:
    assert yes_no_correct("Yes, you can apply.", ["yes"]) is True
    assert yes_no_correct("No.", ["yes"]) is False
    assert yes_no_correct("Maybe", ["no"]) is False
    assert yes_no_correct("Yes", ["within 10 days"]) is None


def test_rouge_l_and_length() -> None:
    assert rouge_l("plug in the cable", ["Plug in the cable and wait."]) == pytest.approx(0.8)
    assert rouge_l("", ["x"]) == 0.0
    assert word_count(" a  b c ") == 3
