"""A citation supports an answer when it holds what the answer asserts: hand-labelled cases."""

from __future__ import annotations

import pytest

from rag_assets.core.answering.attribution import attribute
from rag_assets.core.answering.reader_prompts import number_blocks
from rag_assets.core.answering.support import claim_of
from rag_assets.core.answering.types import Citation

pytestmark = pytest.mark.unit

PASS_NODE = "pass is a null operation -- when it is executed, nothing happens."
PASS_Q = "What does the pass statement do?"
KETTLE = "Fill the kettle with at most 1.7 litres of water. Never immerse the base in water."
PROFIT = "Operating profit was 1,577 million in 2018."


@pytest.mark.parametrize(
    ("question", "answer", "text", "supports"),
    [
        # shares only the question's words ("pass", "statement"): no support
        (PASS_Q, "The pass statement is used to pass a value to a function", PASS_NODE, False),
        (PASS_Q, "It is a null operation; nothing happens when it executes", PASS_NODE, True),
        # numbers: one the node does not say is no support; a thousands separator is no difference
        ("How much water goes into the kettle?", "At most 1.7 litres", KETTLE, True),
        ("How much water goes into the kettle?", "At most 17 litres", KETTLE, False),
        ("What was the operating profit in 2018?", "1577 million", PROFIT, True),
        ("What was the operating profit in 2018?", "1,757 million", PROFIT, False),
        # negation: the node forbids what the answer tells to do, or the answer denies what it says
        ("What should be done with the base?", "Immerse the base in water", KETTLE, False),
        ("What should be done with the base?", "Do not immerse the base in water", KETTLE, True),
        ("What should be done with the base?", "The base can't be immersed in water", KETTLE, True),
        ("Does pass do anything?", "It is not a null operation", PASS_NODE, False),
        # a bare yes/no: the question's claim must be in the node; its polarity is not read
        ("Is pass a null operation?", "Yes.", PASS_NODE, True),
        ("Is pass a null operation?", "No", PASS_NODE, True),
        ("Is the kettle dishwasher safe?", "Yes", PASS_NODE, False),
    ],
)
def test_support_is_the_answers_content_not_the_questions_words(
    question: str, answer: str, text: str, supports: bool
) -> None:
    assert claim_of(question, answer).supported_by(text) is supports


def cite(node_id: int, text: str) -> Citation:
    return Citation("py/pass", node_id, ("pass",), text, 0, len(text))


GIVEN = [
    cite(0, "The pass statement is a statement of the language."),
    cite(1, PASS_NODE),
    cite(2, "Functions receive values as arguments."),
]
EVIDENCE = number_blocks([(c.heading_path, c.text) for c in GIVEN])


def test_the_pass_statement_answer_that_says_something_else_rests_on_nothing() -> None:
    wrong = attribute(PASS_Q, "The pass statement is used to pass a value to a function", EVIDENCE, GIVEN)
    # "value" and "function" are in the third node only as "values" / "Functions": 2 of 3 claim words
    assert (wrong.order, wrong.supporting, wrong.method) == ((2, 0, 1), 1, "overlap")
    right = attribute(PASS_Q, "It is a null operation; nothing happens when it executes", EVIDENCE, GIVEN)
    assert (right.order, right.supporting, right.method) == ((1, 0, 2), 1, "overlap")
    alone = attribute(PASS_Q, "The pass statement is used to pass a value to a function", EVIDENCE, GIVEN[:2])
    assert (alone.order, alone.supporting, alone.method) == ((0, 1), 0, "unsupported")


def test_a_marker_counts_only_where_its_block_holds_the_claim() -> None:
    marked = attribute(PASS_Q, "A null operation: nothing happens [2].", EVIDENCE, GIVEN)
    assert (marked.order, marked.supporting, marked.method) == ((1, 0, 2), 1, "markers")
    # the reader marked the first block, which says none of it: the node that does is found instead
    misplaced = attribute(PASS_Q, "A null operation: nothing happens [1].", EVIDENCE, GIVEN)
    assert (misplaced.order, misplaced.supporting, misplaced.method) == ((1, 0, 2), 1, "overlap")
    nowhere = attribute(PASS_Q, "It raises an error [1].", EVIDENCE, GIVEN)
    assert (nowhere.supporting, nowhere.method) == (0, "unsupported")


def test_a_name_in_code_is_claimed_as_written() -> None:
    question = "What is the name of the method called to create a new instance of a class before __init__?"
    new = "__new__() is called to create a new instance of class cls."
    # "new" is the question's word; "__new__" is the answer
    assert claim_of(question, "It is called `__new__`").supported_by(new)
    assert not claim_of(question, "It is called `__init_subclass__`").supported_by(new)
    # "sort()" names the method even though the question says "sorts"
    sorts = "sort(*, key=None, reverse=False): this method sorts the list in place."
    assert claim_of("Which method of a list sorts the list in place?", "list.sort()").supported_by(sorts)
    assert not claim_of("Which method of a list sorts the list in place?", "sorted()").supported_by(sorts)


def test_only_the_nodes_holding_nearly_the_most_of_the_claim_support() -> None:
    given = [
        cite(0, "A null operation."),  # half of the claim
        cite(1, PASS_NODE),  # all of it
    ]
    evidence = number_blocks([(c.heading_path, c.text) for c in given])
    found = attribute(PASS_Q, "A null operation: nothing happens when it is executed", evidence, given)
    assert (found.order, found.supporting) == ((1, 0), 1)


def test_a_supporting_citation_is_right_when_it_is_a_gold_node() -> None:
    from rag_assets.core.corpus.question_sets import Question
    from rag_assets.core.evaluation.supporting_precision import has_gold_node, is_gold_node

    short = Question("q1", PASS_Q, answers=("null operation",), gold_doc="pass")
    assert has_gold_node(short) and is_gold_node(short, cite(1, PASS_NODE))
    assert not is_gold_node(short, cite(0, GIVEN[0].text))  # the gold document, not the answer
    assert not is_gold_node(short, Citation("py/calls", 1, ("calls",), PASS_NODE, 0, 1))  # another document
    assert not has_gold_node(Question("q2", "Is pass a statement?", answers=("yes",), gold_doc="pass"))
    assert not has_gold_node(Question("q3", PASS_Q, answers=("null operation",)))  # no gold document
    lines = Question("q4", PASS_Q, answers=("it does nothing",), evidences=(PASS_NODE,), gold_doc="pass")
    assert is_gold_node(lines, cite(1, PASS_NODE)) and not is_gold_node(lines, cite(0, "A null operation."))
