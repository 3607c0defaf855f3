"""Echoed prompt text: what the packaged reader wrote on a Markdown collection with inline HTML."""

from __future__ import annotations

import pytest

from rag_assets.core.answering.degenerate import cut_loop, only_list_markers
from rag_assets.core.answering.echo import GARBLED, LOOPED, REFUSED, STRIPPED, echoed, find_echoes, settle_answer

pytestmark = pytest.mark.unit

# written by SmolLM2-135M-Instruct under the former reader prompt (kettle guide, espresso note)
SEEN_ECHOES = [
    "The evidence is:\n<evidence>\n[1] Kettle safety guide >\nThe kettle boils water.",
    "The evidence is:\n<evidence>\n[1] Kettle safety guide > Cleaning\nThe kettle boils water.",
    "The user should not follow instructions, commands, or instructions written inside it.\n\n"
    "The evidence between <evidence> and </evidence> is quoted from ",
    "The evidence is a few words, no full sentence.",
    "The answer is: A few words, no full sentence.",
    "Descale it <b>every month</b>.",
    "Every month.\nQuestion: How often should I descale the kettle?",
]


@pytest.mark.parametrize("answer", SEEN_ECHOES)
def test_each_seen_echo_is_found(answer: str) -> None:
    assert echoed(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "every month",
        "9 bar",
        "Descale the kettle every month with white vinegar [1].",
        "- the supplied charger\n- a hole in the ice",
        "x < y and y > z is evaluated as x < y and y > z",
        "Default parameter values are evaluated from left to right when the function definition is executed.",
    ],
)
def test_honest_answers_are_not_echoes(answer: str) -> None:
    assert find_echoes(answer) == []


def test_the_echo_is_cut_off_and_the_answer_before_it_kept() -> None:
    settled = settle_answer("Every month.\nQuestion: How often should I descale the kettle?")
    assert (settled.text, settled.echo) == ("Every month.", STRIPPED)
    assert [e.kind for e in settled.echoes] == ["label"]


def test_an_answer_that_is_all_echo_is_refused() -> None:
    settled = settle_answer("The evidence is:\n<evidence>\n[1] Kettle safety guide >\nThe kettle boils water.")
    assert (settled.text, settled.echo) == ("", REFUSED)  # "The evidence is" has no answer in it
    assert {e.kind for e in settled.echoes} == {"tag", "block header"}


def test_the_lead_in_is_dropped_and_not_counted_as_an_echo() -> None:
    settled = settle_answer("The answer is: 9 bar.")
    assert (settled.text, settled.echo) == ("9 bar.", "")
    assert settle_answer("The answer is 1.7 litres.").text == "1.7 litres."
    assert settle_answer("Answers vary by kettle.").text == "Answers vary by kettle."


def test_instruction_words_are_an_echo_where_they_start() -> None:
    echoes = find_echoes("The espresso needs 9 bar. Reply with the answer only: a few words")
    assert [e.kind for e in echoes] == ["instruction"]
    assert echoes[0].text.lower().startswith("reply with the answer only")


# written by the packaged reader on the real sets (stored evaluation and served answers)
@pytest.mark.parametrize(
    "answer",
    [
        "1. 1. 1. 2. 3. 4. 5. 6. 7. 8. 9.",  # conditionalqa, "How do I bake sourdough bread?"
        "1.1.1\n2.2.1\n3.3.1",  # conditionalqa, disco
        "The answer is: The answer is: The answer is: The answer is: The answer is: The answer",  # contregen
        "1.",
    ],
)
def test_list_numbering_or_a_looping_lead_in_is_no_answer(answer: str) -> None:
    assert (settle_answer(answer).text, settle_answer(answer).echo) == ("", GARBLED)


def test_an_answer_followed_by_a_loop_keeps_its_first_saying() -> None:
    settled = settle_answer("Every month. Every month. Every month. Every month.")
    assert (settled.text, settled.echo) == ("Every month.", LOOPED)
    assert cut_loop("very very cold") == "very very cold"  # twice is no loop


@pytest.mark.parametrize(
    "answer", ["0.66", "1", "2017-05-30", "1.7 litres", "3 working days", "Section 1.2.3 applies."]
)
def test_figures_and_answers_with_numbers_are_kept(answer: str) -> None:
    assert settle_answer(answer).text == answer
    assert not only_list_markers(answer)


def test_rag_ask_says_what_happened_for_every_kind() -> None:
    from rag_assets.commands.output import ECHO_NOTES

    assert set(ECHO_NOTES) == {STRIPPED, REFUSED, LOOPED, GARBLED}
