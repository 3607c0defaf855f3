"""The validating parsers of ConTReGen and Disco-RAG: well-formed output is read, anything else is
counted and never trusted; hypothesis feeds garbage through each of them."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from rag_assets.core.answering.generation.parsers import (
    parse_blueprint,
    parse_discourse,
    parse_finding,
    parse_rhetorical,
    parse_subqueries,
)
from rag_assets.core.answering.generation.prompts import (
    BLUEPRINT_MAX_STEPS,
    DISCOURSE_RELATIONS,
    RHETORICAL_RELATIONS,
    blueprint_regex,
    decompose_regex,
    discourse_regex,
)

PARENT = "How do I fill and boil the kettle?"
GARBAGE = st.one_of(
    st.text(max_size=400),
    st.lists(
        st.one_of(
            st.text(max_size=60),
            st.sampled_from(["1. ?", "- [0] x", "9 -> 9 cause", "[ANSWER] 3", "support support", "\x00\x1f", "??"]),
        ),
        max_size=12,
    ).map("\n".join),
    st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
)


def test_subqueries_are_validated_and_capped() -> None:
    text = "1. How full can the kettle be?\n2. How full can the kettle be?\nnot a question\n3. What does the light do?"
    parsed = parse_subqueries(text, PARENT, branching=2)
    assert parsed.subqueries == ("How full can the kettle be?", "What does the light do?")
    assert parsed.invalid == 2 and not parsed.fallback  # the duplicate and the prose line
    assert parse_subqueries(f"1. {PARENT}", PARENT, 2).fallback  # the parent again is no decomposition
    assert parse_subqueries("1. How do I set up the new speaker?", PARENT, 2).fallback  # the prompt's example
    assert parse_subqueries("1. Why?\n2. x", PARENT, 2).fallback  # too short
    assert parse_subqueries("1. A?\n2. B ok now?\n3. C is third?", PARENT, 1).subqueries == ("B ok now?",)


def test_discourse_relations_form_a_tree_over_known_labels() -> None:
    parsed = parse_discourse("2 -> 1 elaboration\n3 -> 3 cause\n3 -> 1 magic\n4 -> 2 contrast\n2 -> 1 cause", 4)
    assert parsed.relations == {2: (1, "elaboration"), 4: (2, "contrast")}
    assert parsed.invalid == 3 and parsed.missing == 1 and not parsed.fallback
    assert parse_discourse("", 3).fallback and parse_discourse("", 3).missing == 2


def test_rhetorical_labels_and_blueprints() -> None:
    assert parse_rhetorical("Support") == "support" and parse_rhetorical("support.") == "support"
    assert parse_rhetorical("they support each other") is None and parse_rhetorical("") is None
    plan = parse_blueprint("- [2] the temperature for green tea\n- [4] nothing\n[1]\n- [1] fill to MAX", 3)
    assert plan.steps == ((2, "the temperature for green tea"), (1, "fill to MAX")) and plan.invalid == 2
    assert parse_blueprint("plan: read everything", 3).fallback


def test_findings_separate_irrelevant_from_unusable() -> None:
    assert parse_finding("Nothing relevant.").irrelevant and not parse_finding("Nothing relevant.").invalid
    assert parse_finding("").invalid and parse_finding("!!! ... ???").invalid
    ok = parse_finding("  Fill  the kettle to at most 1.7 litres. ")
    assert ok.text == "Fill the kettle to at most 1.7 litres." and not ok.invalid and not ok.irrelevant


def test_the_grammars_accept_what_the_parsers_accept() -> None:
    """Constrained decoding and validation agree: an output the regex allows parses in full."""
    two = "1. How full can the kettle be?\n2. What does the light mean?"
    assert re.fullmatch(decompose_regex(2), two) and len(parse_subqueries(two, PARENT, 2).subqueries) == 2
    relations = "2 -> 1 elaboration\n3 -> 1 condition"
    assert re.fullmatch(discourse_regex(3), relations) and parse_discourse(relations, 3).missing == 0
    assert not re.fullmatch(discourse_regex(3), "2 -> 2 elaboration\n3 -> 1 condition")
    plan = "- [1] the MAX mark\n- [3] the switch"
    assert re.fullmatch(blueprint_regex(3), plan) and parse_blueprint(plan, 3).invalid == 0
    assert not re.fullmatch(blueprint_regex(2), "- [3] the switch")


@settings(max_examples=150, deadline=None)
@given(GARBAGE, st.integers(1, 4), st.integers(0, 8))
def test_garbage_never_breaks_a_parser_nor_gets_trusted(text: str, branching: int, units: int) -> None:
    sub = parse_subqueries(text, PARENT, branching)
    assert len(sub.subqueries) <= branching and all(q.endswith("?") for q in sub.subqueries)
    assert sub.fallback == (not sub.subqueries) and sub.invalid >= 0

    tree = parse_discourse(text, units)
    for unit, (parent, relation) in tree.relations.items():
        assert 2 <= unit <= units and 1 <= parent < unit and relation in DISCOURSE_RELATIONS
    assert tree.missing == max(units - 1, 0) - len(tree.relations) >= 0

    assert parse_rhetorical(text) in (*RHETORICAL_RELATIONS, None)

    plan = parse_blueprint(text, units)
    assert len(plan.steps) <= BLUEPRINT_MAX_STEPS and all(1 <= n <= units for n, _ in plan.steps)
    assert plan.fallback == (not plan.steps)

    finding = parse_finding(text)
    assert not (finding.invalid and finding.text) and len(finding.text) <= 1200
