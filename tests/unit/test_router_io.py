"""The router output parser: exact decisions, and hypothesis fuzzing that it never trusts an id."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from rag_assets.core.corpus.blocks import heading, paragraph
from rag_assets.core.corpus.tree import build_tree
from rag_assets.core.routing.action_format import (
    ACTION_REGEX,
    MAX_ACTIONS,
    REFUSAL,
    RouterDecision,
    format_actions,
    parse_router_output,
    routing_messages,
    view_action_regex,
)
from rag_assets.core.routing.subtree import DocumentRouting


def view():
    tree = build_tree(
        "Kettle",
        [
            heading("Filling", 1),
            paragraph("Fill with water up to the mark."),
            heading("Boiling", 1),
            paragraph("Press the switch."),
        ],
    )
    return DocumentRouting("d", tree.nodes).light([2])  # 2 visible; heading 3 collapsed


def decide(text: str) -> RouterDecision:
    return parse_router_output(text, view())


def test_valid_actions() -> None:
    d = decide("[ANSWER] 2: fill with   WATER up\n[EXPAND] 3: Boiling")
    assert (d.answer_ids, d.expand_ids, d.refused, d.expelled, d.collapsed) == ((2,), (3,), False, 0, False)
    assert decide("1. [answer] 2\n- [Expand] 3 - boiling").answer_ids == (2,)


def test_invalid_ids_and_words_are_expelled() -> None:
    d = decide(
        "\n".join(
            [
                "[ANSWER] 1: Filling",  # a heading is not content
                "[ANSWER] 4: Press",  # content never shown
                "[EXPAND] 2: Fill with",  # content is not a heading
                "[EXPAND] 1: Filling",  # heading whose content was shown
                "[ANSWER] 2: press the lid",  # words do not match node 2
                "[ANSWER] 999999999999: x",  # out of range
            ]
        )
    )
    assert (d.answer_ids, d.expand_ids, d.expelled, d.collapsed, d.refused) == ((), (), 6, True, False)


def test_refusals_garbage_and_mixtures() -> None:
    assert decide("Cannot answer.") == RouterDecision(refused=True)
    garbage = decide("I think the kettle is nice")
    assert garbage.collapsed and not garbage.refused and garbage.expelled == 0
    assert decide("").collapsed
    mixed = decide("Cannot answer\n[ANSWER] 2: Fill")
    assert mixed.answer_ids == (2,) and mixed.refused and not mixed.collapsed


def test_targets_round_trip_and_match_the_constrained_grammar() -> None:
    target = format_actions([(2, "Fill with water up to the mark.")], [(3, "Boiling")])
    assert target == "[ANSWER] 2: Fill with water up to\n[EXPAND] 3: Boiling"
    assert decide(target) == RouterDecision(answer_ids=(2,), expand_ids=(3,))
    assert re.fullmatch(ACTION_REGEX, target + "\n") and re.fullmatch(ACTION_REGEX, REFUSAL)
    assert format_actions([], []) == REFUSAL
    messages = routing_messages("q?", "0: Kettle", allow_expand=False)
    assert messages[0]["role"] == "system" and "Do not use [EXPAND]" in messages[0]["content"]
    assert messages[1]["content"].startswith("Question: q?")


def test_the_per_view_grammar_allows_exactly_the_valid_actions() -> None:
    grammar = view_action_regex(view())
    ok = [
        "[ANSWER] 2: Fill with water up to",
        "[EXPAND] 3: Boiling",
        "[ANSWER] 2: Fill with water up to\n[EXPAND] 3: Boiling\n",
        REFUSAL,
    ]
    bad = [
        "[ANSWER] 1: Filling",
        "[ANSWER] 4: Press the switch.",
        "[EXPAND] 2: Fill with water up to",
        "[EXPAND] 1: Filling",
        "[ANSWER] 2: press the lid",
        "[ANSWER] 2",
        "Cannot answer because",
        "I think [ANSWER] 2: Fill with water up to",
        "\n".join(["[EXPAND] 3: Boiling"] * (MAX_ACTIONS + 1)),
    ]
    assert all(re.fullmatch(grammar, text) for text in ok)
    assert not any(re.fullmatch(grammar, text) for text in bad)
    for text in ok:  # whatever the grammar lets through, the parser takes in full
        d = decide(text)
        assert d.expelled == 0 and not d.collapsed
    strict = view_action_regex(view(), allow_expand=False, allow_refuse=False)
    assert re.fullmatch(strict, "[ANSWER] 2: Fill with water up to")
    assert not re.fullmatch(strict, "[EXPAND] 3: Boiling") and not re.fullmatch(strict, REFUSAL)


def test_the_grammar_escapes_node_text_and_falls_back_to_refusal() -> None:
    tree = build_tree("Syntax", [heading("Calls", 1), paragraph("f(*args, **kw) | [x]+{y}? $1.0 \\ a/b ^ end")])
    routing = DocumentRouting("s", tree.nodes)
    grammar = view_action_regex(routing.light([2]))
    target = format_actions([(2, tree.nodes[2].text)], [])
    assert re.fullmatch(grammar, target) and not re.fullmatch(grammar, "[ANSWER] 2: f(args, kw) | [x]+{y}?")
    nothing = routing.light([])  # nothing lit, nothing to expand: refusal is the only output
    assert not nothing.visible_content_ids and not nothing.collapsed_heading_ids
    assert view_action_regex(nothing, allow_expand=False, allow_refuse=False) == REFUSAL


_lines = st.one_of(
    st.text(max_size=40),
    st.builds(
        lambda k, i, w: f"[{k}] {i}: {w}",
        st.sampled_from(["ANSWER", "EXPAND", "answer"]),
        st.integers(-5, 10),
        st.sampled_from(["", "Fill", "Boiling", "Kettle", "x y"]),
    ),
    st.just("[ANSWER] 0: Kettle"),
    st.just("Cannot answer"),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_lines, max_size=8).map("\n".join))
def test_fuzzed_outputs_never_raise_and_never_leak_an_id(text: str) -> None:
    v = view()
    d = parse_router_output(text, v)
    assert set(d.answer_ids) <= v.visible_content_ids
    assert set(d.expand_ids) <= v.collapsed_heading_ids


# Lines whose fate in `view()` is known by hand (node 2 is the visible "Fill with water up to the
# mark.", heading 3 "Boiling" is collapsed, heading 1 "Filling" had its content shown, node 4 never
# shown): each valid line selects one node, each invalid one is one expelled action.
VALID_ANSWERS = {"[ANSWER] 2: Fill with water": 2, "[answer] 2": 2, "- [ANSWER] 2 - fill WITH": 2}
VALID_EXPANDS = {"[EXPAND] 3: Boiling": 3, "1. [expand] 3": 3}
INVALID = [
    "[ANSWER] 1: Filling",  # a heading is not content
    "[ANSWER] 3: Boiling",  # nor is a collapsed heading
    "[ANSWER] 4: Press",  # content never shown
    "[EXPAND] 2: Fill",  # content is not a heading
    "[EXPAND] 1: Filling",  # a heading whose content was shown
    "[EXPAND] 3: Kettle",  # words of another node
    "[ANSWER] 2: press the lid",  # words that do not match node 2
    "[ANSWER] 0: Kettle",  # the title
    "[ANSWER] 7: x y",  # past the last node
    "[ANSWER] 999999999999: x",  # an id too long to be one
]
# Text that is neither an action (no "[") nor a refusal (no "cannot"): ignored, never expelled.
_prose = st.text(max_size=40).filter(lambda t: "[" not in t and not re.search("cannot", t, re.IGNORECASE))
_labelled = st.one_of(
    st.sampled_from(sorted(VALID_ANSWERS)).map(lambda line: ("answer", line)),
    st.sampled_from(sorted(VALID_EXPANDS)).map(lambda line: ("expand", line)),
    st.sampled_from(INVALID).map(lambda line: ("invalid", line)),
    st.just(("refusal", "Cannot answer")),
    _prose.map(lambda text: ("prose", text)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_labelled, max_size=8))
def test_fuzzed_outputs_expel_exactly_the_invalid_action_lines(lines: list[tuple[str, str]]) -> None:
    d = decide("\n".join(text for _, text in lines))
    kinds = [kind for kind, _ in lines]
    assert d.expelled == kinds.count("invalid"), lines
    assert set(d.answer_ids) == {VALID_ANSWERS[text] for kind, text in lines if kind == "answer"}, lines
    assert set(d.expand_ids) == {VALID_EXPANDS[text] for kind, text in lines if kind == "expand"}, lines
    assert d.refused == ("refusal" in kinds), lines
    assert d.collapsed == (not {"answer", "expand", "refusal"} & set(kinds)), lines
