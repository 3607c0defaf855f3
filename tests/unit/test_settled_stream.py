"""The streamed text of an answer is the stored text: only settled sentences are streamed."""

from __future__ import annotations

import pytest

from rag_assets.core.answering import echo
from rag_assets.core.answering.answer_ending import complete_answer
from rag_assets.core.answering.echo import settle_answer
from rag_assets.serving.streaming import SettledStream

pytestmark = pytest.mark.unit


def stream_of(pieces: list[str], output_tokens: int, max_new_tokens: int) -> tuple[str, str, bool]:
    """(what was streamed, what is stored, finish's verdict) for a reader's raw pieces."""
    sent: list[str] = []
    stream = SettledStream(sent.append)
    for piece in pieces:
        stream.feed(piece)
    stored = settle_answer(complete_answer("".join(pieces), output_tokens, max_new_tokens)).text
    consistent = stream.finish(stored)
    return "".join(sent), stored, consistent


def test_a_clause_cut_by_the_token_limit_is_never_streamed() -> None:
    pieces = ["Context", " managers", " (see Context", " Managers).", " This", " allows", ' common "try"']
    streamed, stored, consistent = stream_of(pieces, output_tokens=32, max_new_tokens=32)
    assert stored == "Context managers (see Context Managers)."
    assert streamed == stored and consistent


def test_an_echo_is_never_streamed() -> None:
    pieces = ["Every month.", "\nQuestion:", " How often", " should I descale?"]
    streamed, stored, consistent = stream_of(pieces, output_tokens=12, max_new_tokens=32)
    assert streamed == stored == "Every month." and consistent


def test_an_answer_without_a_sentence_end_arrives_whole_at_the_end() -> None:
    sent: list[str] = []
    stream = SettledStream(sent.append)
    for piece in ["The answer is:", " 9", " bar"]:
        stream.feed(piece)
    assert sent == []  # nothing settled before the end
    assert stream.finish("9 bar") and sent == ["9 bar"]


def test_finish_says_when_the_stream_is_not_the_stored_answer() -> None:
    sent: list[str] = []
    stream = SettledStream(sent.append)
    stream.feed("Every month. ")
    assert not stream.finish("Once a year.")


def _words(text: str, times: int) -> list[str]:
    """`text` said `times` times in a row, as a reader streams it: one piece per word."""
    said = " ".join([text] * times).split(" ")
    return [said[0], *(" " + word for word in said[1:])]


# A loop (a phrase said LOOP_REPEATS = 3 times or more in a row) is cut after its first saying
# (core/answering/degenerate.py `cut_loop`): what is stored is that first saying, and that is all
# that is streamed. Numbering with nothing in it is no answer at all: stored empty.
LOOPS = [
    (["Every month.", " Every month.", " Every month.", " Every month."], "Every month."),
    (
        ["Descale it.", " Rinse it.", " Descale it.", " Rinse it.", " Descale it.", " Rinse it."],
        "Descale it. Rinse it.",
    ),
    (["1.", " 1.", " 1.", " 2.", " 3.", " 4."], ""),
    *(
        (_words(sentence, times), sentence)
        for sentence in ("Every month.", "Use the red button.", "Descale it. Rinse it.")
        for times in (3, 4, 7)
    ),
]


def _assert_loop_cut(pieces: list[str], expected: str) -> None:
    streamed, stored, consistent = stream_of(pieces, output_tokens=12, max_new_tokens=32)
    assert stored == expected
    assert streamed == expected and consistent


@pytest.mark.parametrize(("pieces", "expected"), LOOPS)
def test_a_loop_is_never_streamed(pieces: list[str], expected: str) -> None:
    _assert_loop_cut(pieces, expected)


@pytest.mark.parametrize(("pieces", "expected"), [case for case in LOOPS if case[1]])
def test_the_loop_test_fails_for_a_cutter_that_keeps_nothing(
    pieces: list[str], expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the stored text and the stream both settle through echo.settle_answer, which cuts with cut_loop
    monkeypatch.setattr(echo, "cut_loop", lambda text: "")
    with pytest.raises(AssertionError):
        _assert_loop_cut(pieces, expected)


def test_a_sentence_said_twice_then_left_is_streamed_whole() -> None:
    pieces = ["Yes.", " Yes.", " The form is VAT1."]
    streamed, stored, consistent = stream_of(pieces, output_tokens=12, max_new_tokens=32)
    assert streamed == stored == "Yes. Yes. The form is VAT1." and consistent
