"""Citations an answer rests on first; the extractive answer is the best sentence, cited at its span."""

from __future__ import annotations

import pytest

from rag_assets.core.answering.attribution import attribute, evidence_blocks
from rag_assets.core.answering.extractive import extract_answer, typed_span, units
from rag_assets.core.answering.reader_prompts import number_blocks
from rag_assets.core.answering.types import Citation

pytestmark = pytest.mark.unit

DOC = "Kettle safety guide\nThe kettle boils water.\nDescale the kettle every month with white vinegar. Never immerse the base.\nFill with at most 1.7 litres."


def cite(node_id: int, text: str) -> Citation:
    start = DOC.index(text)
    return Citation("own/kettle.md", node_id, ("Kettle safety guide",), text, start, start + len(text))


BOILS = cite(1, "The kettle boils water.")
DESCALE = cite(2, "Descale the kettle every month with white vinegar. Never immerse the base.")
FILL = cite(3, "Fill with at most 1.7 litres.")
GIVEN = [BOILS, DESCALE, FILL]
EVIDENCE = number_blocks([(c.heading_path, c.text) for c in GIVEN])


class KeywordScorer:
    """Scores a text by whether it holds a keyword: the test decides which sentence is best."""

    def __init__(self, keyword: str) -> None:
        self.keyword = keyword
        self.calls = 0

    def scores(self, query: str, texts) -> list[float]:
        self.calls += 1
        return [1.0 if self.keyword in t else 0.0 for t in texts]


def test_the_readers_markers_choose_the_citations() -> None:
    found = attribute("How full?", "At most 1.7 litres [3].", EVIDENCE, GIVEN)
    assert (found.order, found.supporting, found.method) == ((2, 0, 1), 1, "markers")
    assert sorted(evidence_blocks(EVIDENCE)) == [1, 2, 3]


def test_without_markers_the_overlapping_node_comes_first() -> None:
    found = attribute("How often should I descale it?", "every month", EVIDENCE, GIVEN)
    assert (found.order, found.supporting, found.method) == ((1, 0, 2), 1, "overlap")


def test_among_nodes_holding_the_answers_claim_the_scorer_ranks_them() -> None:
    # "kettle", what the answer says beyond the question, is in two nodes: alone they keep the order
    # given; the scorer (the collection's cross-encoder, here a keyword) puts the one it reads as
    # answering the question first
    plain = attribute("What needs descaling every month?", "the kettle", EVIDENCE, GIVEN)
    assert (plain.order, plain.supporting, plain.method) == ((0, 1, 2), 2, "overlap")
    scorer = KeywordScorer("month")
    scored = attribute("What needs descaling every month?", "the kettle", EVIDENCE, GIVEN, scorer=scorer)
    assert (scored.order, scored.supporting, scored.method, scorer.calls) == ((1, 0, 2), 2, "overlap", 1)


def test_an_answer_no_node_holds_rests_on_none_whatever_the_scorer_prefers() -> None:
    # formerly the scorer's best node was marked supporting: nothing here says "seventeen decilitres"
    scorer = KeywordScorer("litres")
    found = attribute("How much water?", "seventeen decilitres", EVIDENCE, GIVEN, scorer=scorer)
    assert (found.order, found.supporting, found.method) == ((0, 1, 2), 0, "unsupported")
    assert scorer.calls == 0


def test_an_empty_answer_rests_on_nothing() -> None:
    found = attribute("How often?", "", EVIDENCE, GIVEN, scorer=KeywordScorer("x"))
    assert (found.order, found.supporting, found.method) == ((0, 1, 2), 0, "")


def test_units_are_the_sentences_of_each_node() -> None:
    assert [u.text for u in units(GIVEN)] == [
        "The kettle boils water.",
        "Descale the kettle every month with white vinegar.",
        "Never immerse the base.",
        "Fill with at most 1.7 litres.",
    ]


def test_the_extractive_answer_is_the_best_sentence_cited_at_its_span() -> None:
    answer = extract_answer("How often should I descale the kettle?", GIVEN, KeywordScorer("month"), short=False)
    assert answer.answer == "Descale the kettle every month with white vinegar."
    first = answer.citations[0]
    assert (first.node_id, first.text) == (2, answer.answer)
    assert DOC[first.span_start : first.span_end] == answer.answer  # the span is the document's own text
    assert [c.node_id for c in answer.citations[1:]] == [1, 3] and answer.supporting == 1


def test_a_short_extractive_answer_is_still_the_whole_sentence_a_quote() -> None:
    answer = extract_answer("How often should I descale the kettle?", GIVEN, KeywordScorer("month"), short=True)
    assert answer.answer == "Descale the kettle every month with white vinegar."
    assert answer.citations[0].text == answer.answer
    sentence = "A good espresso needs about 9 bar of pressure."
    start, end = typed_span("How much pressure does espresso need?", sentence)
    assert sentence[start:end] == "9 bar"  # "how much": the figure and its unit


@pytest.mark.parametrize(
    ("question", "sentence", "span"),
    [
        (
            "when did season 2 of handmaid's tale start",
            "The second season premiered on April 25, 2018, with two episodes.",
            "April 25, 2018",
        ),
        ("how many episodes in season 1 of handmades tale", "The first season consisted of 10 episodes.", "10"),
        (
            "who has made the most shots in the nba",
            "The leader is Kareem Abdul-Jabbar with 15,837.",
            "Kareem Abdul-Jabbar",
        ),
        # the year the question names is not the answer; the figure of that year's column is
        (
            "What is the FY2018 capital expenditure amount (in USD millions) for 3M?",
            "Purchases of property, plant and equipment | 2018: (1,577) | 2017: (1,373)",
            "(1,577)",
        ),
        ("how many points did he score", "He scored 1,577 points in 2018.", "1,577"),
        # a date's day is no count; a capitalised number word is no name
        (
            "how many episodes of season two of the handmaids tale are there",
            "On May 3, 2017, the series was renewed for 13 episodes.",
            "13",
        ),
        (
            "who has the most super bowl losses in nfl history",
            "Three franchises lost five, the New England Patriots among them.",
            "New England Patriots",
        ),
    ],
)
def test_a_typed_span_is_the_kind_of_thing_the_question_asks_for(question: str, sentence: str, span: str) -> None:
    start, end = typed_span(question, sentence)
    assert sentence[start:end] == span


def test_a_who_question_is_answered_from_the_best_sentence_that_names_someone() -> None:
    """The best-scored sentence is about the topic but names nobody; the next one names the cook."""
    doc = "Jem is seen explaining many things to Scout. Calpurnia, the family's cook, looks after Jem and Scout."
    given = [Citation("own/novel.md", 1, ("Novel",), doc, 0, len(doc))]

    class TopicScorer:
        def scores(self, query: str, texts) -> list[float]:
            return [2.0 if "explaining" in t else 1.0 for t in texts]

    answer = extract_answer("who takes care of jem and scout", given, TopicScorer(), short=True)
    assert answer.answer == "Calpurnia, the family's cook, looks after Jem and Scout."
    assert answer.citations[0].text == answer.answer
    # a whole-sentence answer keeps the best-scored sentence; a question of no kind too
    assert extract_answer("who takes care of jem and scout", given, TopicScorer(), short=False).answer == (
        "Jem is seen explaining many things to Scout."
    )
    why = extract_answer("why does jem explain things", given, TopicScorer(), short=True)
    assert why.citations[0].text == "Jem is seen explaining many things to Scout."


def test_a_question_of_no_known_kind_or_a_sentence_without_one_falls_back() -> None:
    assert typed_span("why is the sky blue", "Light scatters in the air.") is None
    assert typed_span("when was it built", "It was built long ago.") is None


def test_no_evidence_no_extractive_answer() -> None:
    answer = extract_answer("How often?", [], KeywordScorer("x"), short=False)
    assert (answer.answer, answer.citations, answer.supporting) == ("", [], 0)


def test_the_first_citation_is_gold_when_it_holds_the_answer_a_gold_line_or_lies_in_the_gold_section() -> None:
    from rag_assets.core.corpus.question_sets import Question
    from rag_assets.core.evaluation.scoring import first_citation_gold

    short = Question("q1", "How often?", answers=("every month",))
    assert first_citation_gold([DESCALE.text, BOILS.text], ["Guide > Cleaning", "Guide"], short) == 1.0
    assert first_citation_gold([BOILS.text, DESCALE.text], ["Guide", "Guide > Cleaning"], short) == 0.0
    assert first_citation_gold([], [], short) == 0.0
    lines = Question("q2", "May I?", answers=("yes",), evidences=("Fill with at most 1.7 litres.",))
    assert first_citation_gold([FILL.text], ["Guide > Filling"], lines) == 1.0
    section = Question("q3", "How to fill?", answers=("yes",), section_path=("Filling",))
    assert first_citation_gold([FILL.text], ["Guide > Filling"], section) == 1.0
    assert first_citation_gold([FILL.text], ["Guide > Cleaning"], section) == 0.0
    assert first_citation_gold([FILL.text], ["Guide"], Question("q4", "Yes?", answers=("yes",))) is None


def test_the_default_form_is_a_quote_unless_the_reader_is_right_more_often_beyond_noise() -> None:
    from rag_assets.core.answering.policy.default_form import choose_form
    from rag_assets.core.answering.types import AnswerOutcome
    from rag_assets.core.corpus.question_sets import Question

    def outcome(answer: str) -> AnswerOutcome:
        return AnswerOutcome("q", answer, "", 0, [], [], [], 0, 0, 0, 0, 1, 0.0, 0, 0)

    month = Question("v1", "How often?", answers=("every month",))
    # token F1 would prefer the short wrong phrase "every year" (F1 0.5) to the right sentence (F1 0.4);
    # right-or-not counts the sentence that holds the gold answer
    sentence = "Descale the machine every month with the supplied liquid."
    choice = choose_form([month], [outcome("every year")], [outcome(sentence)])
    assert (choice.form, choice.generated_right, choice.extractive_right, choice.questions) == ("extractive", 0, 1, 1)
    # a yes/no gold is right only with the right verdict; a quote that says neither is not right
    may = Question("v2", "May I fill it with hot water?", answers=("no",))
    choice = choose_form([may], [outcome("No, use cold water.")], [outcome("Fill it with cold water only.")])
    assert (choice.generated_right, choice.extractive_right) == (1, 0)
    # the reader right on all 8, the quote on none: beyond noise, the reader is the default
    eight = [Question(f"v{i}", "How often?", answers=("every month",)) for i in range(8)]
    reader_better = choose_form(eight, [outcome("every month")] * 8, [outcome("daily")] * 8)
    assert reader_better.form == "generated" and reader_better.interval[0] > 0
    assert "more often beyond noise" in reader_better.reason
    # right on 5 of 6 against 4 of 6: better on average, within noise -> the quote stays the default
    six = eight[:6]
    within_noise = choose_form(
        six, [outcome("every month")] * 5 + [outcome("x")], [outcome("every month")] * 4 + [outcome("x")] * 2
    )
    assert (within_noise.generated_right, within_noise.extractive_right, within_noise.form) == (5, 4, "extractive")
    assert within_noise.reason == (
        "a quote of the evidence: on 6 validation questions the reader's answer was right 5 times, the quote 4; "
        "the reader is not right more often beyond noise"
    )
    # right on 3 of 3 against none: a point, not evidence; too few questions to trust the reader
    three = choose_form(eight[:3], [outcome("every month")] * 3, [outcome("daily")] * 3)
    assert three.form == "extractive" and three.reason.endswith("too few to make the reader the default")
    nothing = choose_form([], [], [])
    assert nothing.form == "extractive" and "no validation question" in nothing.reason
