"""A yes or no before a quote: which questions ask for one, and how the verdict is put (the
engine here is a stand-in that returns fixed scores: the real reader's scoring is exercised in
tests/integration/test_verdict_reader.py)."""

from __future__ import annotations

import pytest

from rag_assets.core.answering.verdict import asks_yes_no, with_verdict, yes_no_verdicts
from rag_assets.core.engines.base import LLMEngine

pytestmark = pytest.mark.unit

# labelled by hand: ConditionalQA's scenario + question shape, nq_wiki's lower-case questions, manuals
YES_NO = [
    "I live in Wales and my son is 17. Can I apply for the grant?",
    "My employer has not paid me. Is that legal? I have worked there for 2 years.",
    "Do I need a licence to drive a tractor?",
    "is the great wall of china visible from space",
    "Can't I claim both benefits at once?",
    "Should I tell HMRC? I started work in May.",
]
NOT_YES_NO = [
    "when was the last time england reached the final",
    "How do I turn on the flashlight?",
    "I am 67. What pension can I claim?",
    "who is mrs farrow in to kill a mockingbird",
    "Which method of a list sorts the list in place?",
    "",
]


@pytest.mark.parametrize("question", YES_NO)
def test_questions_answered_by_yes_or_no(question: str) -> None:
    assert asks_yes_no(question)


@pytest.mark.parametrize("question", NOT_YES_NO)
def test_questions_asking_for_something_else(question: str) -> None:
    assert not asks_yes_no(question)


class FixedScores(LLMEngine):
    """Scores "Yes" and "No" as given, per chat; records the chats it was shown."""

    model_id = "fixed"

    def __init__(self, scores: list[tuple[float, float]]) -> None:
        self.scores, self.chats = scores, []

    def generate(self, batch, **kwargs):  # pragma: no cover - the verdict never generates
        raise AssertionError("a verdict is scored, never generated")

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def score_continuations(self, chats, continuations, *, adapter=None):
        self.chats += chats
        assert all(c == ["Yes", "No"] for c in continuations)
        return [list(s) for s in self.scores]


class CannotScore(FixedScores):
    def score_continuations(self, chats, continuations, *, adapter=None):
        return LLMEngine.score_continuations(self, chats, continuations)


def test_the_more_likely_start_of_the_readers_reply_is_the_verdict() -> None:
    engine = FixedScores([(-0.2, -1.5), (-2.0, -0.4)])
    verdicts = yes_no_verdicts(engine, ["Can I apply?", "Is it free?"], ["You can apply.", "It costs 5 pounds."])
    assert verdicts == ["Yes", "No"]
    # the reader's own prompt over the evidence, one chat per question
    assert "You can apply." in engine.chats[0][-1]["content"] and "Can I apply?" in engine.chats[0][-1]["content"]
    assert yes_no_verdicts(CannotScore([]), ["Can I apply?"], ["You can apply."]) == [None]


def test_the_verdict_comes_before_the_quote() -> None:
    assert with_verdict("No", "It costs 5 pounds.") == "No. It costs 5 pounds."
    assert with_verdict(None, "It costs 5 pounds.") == "It costs 5 pounds."
    assert with_verdict("Yes", "") == ""
