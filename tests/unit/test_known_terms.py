"""The term rule: a question too few of whose content terms occur in the documents is not found."""

from __future__ import annotations

import pytest

from rag_assets.core.answering.known_terms import TermShare, query_terms, term_refusals, term_share
from rag_assets.core.answering.no_answer import NOT_FOUND_ANSWER, noise_questions, not_found
from rag_assets.core.answering.types import AnswerOutcome

pytestmark = pytest.mark.unit


class Vocabulary:
    """The documents' words (as the full-text index would find them), counting the lookups."""

    def __init__(self, words: str) -> None:
        self.words = set(words.split())
        self.asked: list[str] = []

    def known(self, terms) -> set[str]:
        self.asked += list(terms)
        return {t for t in terms if t in self.words}


DOCS = Vocabulary("pass statement null operation break loop raise exception assert assertionerror")


def test_the_content_terms_drop_function_words_single_letters_and_repeats() -> None:
    assert query_terms("What does the pass statement do?") == ["pass", "statement"]
    assert query_terms("what is asdf qwer") == ["asdf", "qwer"]
    assert query_terms("How is the -O option used, and why is __debug__ set?") == ["option", "debug", "set"]
    assert query_terms("zzz ZZZ zzz") == ["zzz"]
    assert query_terms("What is it?") == []


@pytest.mark.parametrize(
    ("question", "refused"),
    [
        ("asdf qwerty zxcv", True),  # no term known
        ("what is asdf qwer", True),  # real question words around noise
        ("Brounglu mepsneez pass dunzwuk", True),  # one known word among four
        ("What does the pass statement do?", False),  # every term known
        ("What does the brek statement do?", False),  # a typo: half the terms known
        ("Does Guido's assert statement raise AssertionError?", False),  # a name the documents never use
        ("What is it?", False),  # no content term: left to the relevance floor
    ],
)
def test_a_question_is_refused_when_fewer_than_half_its_terms_are_known(question: str, refused: bool) -> None:
    assert term_share(question, DOCS).refused() is refused


def test_the_note_names_the_unknown_words() -> None:
    assert term_share("asdf qwerty zxcv", DOCS).note() == (
        "not found: none of the words 'asdf', 'qwerty', 'zxcv' occurs in the documents searched"
    )
    assert term_share("what is asdfgh?", DOCS).note() == (
        "not found: the word 'asdfgh' does not occur in the documents searched"
    )
    assert TermShare(("pass", "glorp", "fnord"), frozenset({"pass"})).note() == (
        "not found: only 1 of the question's 3 words occur in the documents searched ('pass'); 'glorp', 'fnord' do not"
    )


def test_refusals_are_per_question_and_ask_nothing_without_a_lookup() -> None:
    docs = Vocabulary(" ".join(DOCS.words))
    found = term_refusals(["asdf qwerty", "What does the pass statement do?", "What is it?"], docs)
    assert [s is not None for s in found] == [True, False, False]
    assert found[0].unknown == ("asdf", "qwerty")
    assert docs.asked == ["asdf", "qwerty", "pass", "statement"]  # a question with no term asks nothing
    assert term_refusals(["asdf qwerty"], None) == [None]


def test_a_term_refusal_is_not_found_with_its_note() -> None:
    outcome = AnswerOutcome("asdf", "True", "", 0, [], [], [], 0, 0, 0, 0, 1, 0.0, 0, 0, supporting=2)
    refused = not_found(outcome, 0.4, "not found: the word 'asdf' does not occur in the documents searched")
    assert (refused.answer, refused.not_found, refused.supporting, refused.relevance) == (
        NOT_FOUND_ANSWER,
        True,
        0,
        0.4,
    )
    assert refused.not_found_note.startswith("not found: the word 'asdf'")


def test_the_packaged_noise_is_what_its_generator_writes() -> None:
    from benchmarks.noise_questions import KINDS, PER_KIND
    from benchmarks.noise_questions import noise_questions as generated

    assert noise_questions() == generated() and len(noise_questions()) == len(KINDS) * PER_KIND
    # none of it is a question a collection answers: no line ends up without a content term
    assert all(query_terms(q) for q in noise_questions())
