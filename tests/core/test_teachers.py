"""The oracle teacher on hand-built subtrees with exact expected actions."""

from __future__ import annotations

from rag_assets.core.blocks import heading, paragraph
from rag_assets.core.router_io import parse_router_output
from rag_assets.core.subtree import DocumentRouting
from rag_assets.core.teachers import oracle_teacher
from rag_assets.core.tree import build_tree


def doc() -> DocumentRouting:
    tree = build_tree("Phone", [
        heading("Getting started", 1),                 # 1
        paragraph("Charge the battery for 3 hours."),   # 2
        heading("Settings", 1),                        # 3
        heading("Display", 2),                         # 4
        paragraph("Dark mode saves the battery."),     # 5
        heading("Sound", 2),                           # 6
        paragraph("Set the ringtone volume."),         # 7
    ])
    return DocumentRouting("phone", tree.nodes)


def test_visible_answer_is_answered_and_hidden_one_expanded() -> None:
    d = doc()
    view = d.light([2])
    label = oracle_teacher(d, view, answers=["3 hours"])
    assert (label.answer_ids, label.expand_ids) == ((2,), ())
    assert label.target == "[ANSWER] 2: Charge the battery for 3"
    label = oracle_teacher(d, view, answers=["dark mode"])
    assert (label.answer_ids, label.expand_ids, label.target) == ((), (4,), "[EXPAND] 4: Display")
    assert parse_router_output(label.target, view).expand_ids == (4,)


def test_evidence_lines_section_paths_and_refusal() -> None:
    d = doc()
    view = d.light([2])
    by_evidence = oracle_teacher(d, view, evidences=["<p>Set the ringtone volume.</p>"])
    assert by_evidence.expand_ids == (6,)
    by_path = oracle_teacher(d, view, section_path=["Settings", "Sound"])
    assert (by_path.answer_ids, by_path.expand_ids) == ((), (6,))
    expanded = d.expand(6)
    assert oracle_teacher(d, expanded, section_path=["Settings", "Sound"]).answer_ids == (7,)
    nothing = oracle_teacher(d, view, answers=["bluetooth"])
    assert nothing.target == "Cannot answer" and parse_router_output(nothing.target, view).refused
