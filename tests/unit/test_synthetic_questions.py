"""Synthetic training questions from the corpus: inverse-cloze sentences, section headings and
table rows, deterministic, spread over documents, and labelled by the real oracle teacher."""

from __future__ import annotations

import pytest

from rag_assets.core.corpus.blocks import heading, paragraph, table_row
from rag_assets.core.corpus.synthetic_questions import (
    SYNTHETIC_SPLIT,
    cloze_candidates,
    heading_candidates,
    row_candidates,
    synthetic_questions,
)
from rag_assets.core.corpus.tree import build_tree
from rag_assets.core.routing.subtree import DocumentRouting
from rag_assets.core.routing.teachers import oracle_label

LONG = (
    "The kettle boils one litre of water in about three minutes on the highest setting. "
    "Limescale builds up faster in hard water areas and slows the heating element down considerably over the years. "
    "Short."
)


def trees():
    kettle = build_tree(
        "Kettle",
        [heading("Care", 1), paragraph(LONG), heading("Boiling water safely", 2), paragraph("Keep the lid shut.")],
    )
    pond = build_tree(
        "Pond", [heading("Winter", 1), paragraph(LONG.replace("kettle", "pond heater").replace("Limescale", "Algae"))]
    )
    return {"kettle": kettle.nodes, "pond": pond.nodes}


def test_cloze_takes_the_longest_bounded_sentence_and_its_node_is_gold() -> None:
    nodes = trees()["kettle"]
    [question] = cloze_candidates("kettle", nodes)
    assert question.query.startswith("Limescale builds up faster") and question.split == SYNTHETIC_SPLIT
    assert question.qid == "synthetic:cloze:kettle:2" and question.evidences == (question.query,)
    state = DocumentRouting("kettle", nodes)
    view = state.light((2,))
    assert oracle_label(state, view, question).answer_ids == (2,)  # the oracle finds the node


def test_heading_questions_name_the_section_path_and_short_headings_get_their_parent() -> None:
    nodes = trees()["kettle"]
    questions = {q.query: q for q in heading_candidates("kettle", nodes)}
    assert set(questions) == {"Care", "Boiling water safely"}
    assert questions["Boiling water safely"].section_path == ("Care", "Boiling water safely")
    state = DocumentRouting("kettle", nodes)
    view = state.light((2,))
    label = oracle_label(state, view, questions["Boiling water safely"])
    assert label.expand_ids == (3,)  # the section is collapsed: EXPAND it


def test_sampling_is_deterministic_balanced_and_validated() -> None:
    first = synthetic_questions(trees(), 3, seed="c")
    assert [q.qid for q in first] == [q.qid for q in synthetic_questions(trees(), 3, seed="c")]
    kinds = [q.extra["kind"] for q in first]
    assert kinds.count("cloze") == 2 and kinds.count("heading") == 1
    assert {q.qid.split(":")[2] for q in first if q.extra["kind"] == "cloze"} == {"kettle", "pond"}  # round robin
    assert synthetic_questions(trees(), 0) == []
    with pytest.raises(ValueError, match="unknown synthetic question kinds"):
        synthetic_questions(trees(), 2, kinds=["cloze", "riddle"])


def test_a_row_is_asked_for_its_first_headed_figure_in_the_named_document() -> None:
    statement = build_tree(
        "FORM 10-K (3M_2018_10K)",
        [
            heading("Consolidated Statement of Cash Flows", 1),
            table_row(["Purchases of property, plant and equipment", "2018: (1,577)", "2017: (1,373)"]),
            table_row(["Total", "2018: 4,000"]),  # a one-word label names nothing
            table_row(["Net cash provided by operating activities", "(1,577)", "(1,373)"]),  # no headers
            table_row(["Cash dividends paid per share", "Note: see below"]),  # no figure
        ],
    )
    nodes = statement.nodes
    [question] = row_candidates("financebench/3M_2018_10K.pdf", nodes)
    assert question.query == "What was Purchases of property, plant and equipment in 2018 in 3M 2018 10K?"
    assert question.qid == "synthetic:row:financebench/3M_2018_10K.pdf:2" and question.extra == {"kind": "row"}
    assert question.evidences == ("Purchases of property, plant and equipment | 2018: (1,577) | 2017: (1,373)",)
    state = DocumentRouting("financebench/3M_2018_10K.pdf", nodes)
    assert oracle_label(state, state.light((2,)), question).answer_ids == (2,)  # the oracle answers the row
    # rows are asked for only when chosen: the default kinds stay cloze and heading
    assert {q.extra["kind"] for q in synthetic_questions({"3m": nodes}, 6, seed="c")} <= {"cloze", "heading"}
    assert [q.extra["kind"] for q in synthetic_questions({"3m": nodes}, 6, kinds=["row"], seed="c")] == ["row"]
