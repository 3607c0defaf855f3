"""The answer-aware oracle teacher: a visible content node containing a gold answer or gold
evidence -> ANSWER; a collapsed heading with such a node among its unseen content -> EXPAND; for
section-path gold (e-manuals), content under the gold path -> ANSWER and headings on it with
unseen content -> EXPAND; nothing -> refuse."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag_assets.core.answer_metrics import contains_answer, normalize_answer
from rag_assets.core.questions import Question
from rag_assets.core.subtree import DocumentRouting, SubtreeView
from rag_assets.core.teachers.label import TeacherLabel, make_label
from rag_assets.core.tree import CONTENT

_TAG = re.compile(r"<[^>]+>")


def _evidence_texts(evidences: Sequence[str]) -> list[str]:
    return [t for t in (normalize_answer(_TAG.sub(" ", e)) for e in evidences) if t]


def oracle_teacher(
    doc: DocumentRouting,
    view: SubtreeView,
    *,
    answers: Sequence[str] = (),
    evidences: Sequence[str] = (),
    section_path: Sequence[str] = (),
) -> TeacherLabel:
    evidence = _evidence_texts(evidences)
    path = [normalize_answer(p) for p in section_path]

    def is_gold(node_id: int) -> bool:
        node = doc.nodes[node_id]
        if node.kind != CONTENT:
            return False
        if answers and contains_answer(node.text, answers):
            return True
        text = normalize_answer(node.text)
        if any(e == text or (len(e) > 20 and e in text) for e in evidence):
            return True
        return bool(path) and [normalize_answer(h) for h in node.heading_path[1 : 1 + len(path)]] == path

    answer_ids = sorted(n for n in view.visible_content_ids if is_gold(n))
    expand_ids = sorted(
        h
        for h in view.collapsed_heading_ids
        if any(is_gold(c) for c, heading in doc.section.items() if heading == h and c not in doc.seen)
    )
    return make_label(
        doc, answer_ids, expand_ids, f"gold answer/evidence/path matches: {answer_ids} {expand_ids}", "oracle"
    )


def oracle_label(doc: DocumentRouting, view: SubtreeView, question: Question) -> TeacherLabel:
    return oracle_teacher(
        doc, view, answers=question.answers, evidences=question.evidences, section_path=question.section_path
    )
