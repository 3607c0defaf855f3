"""Teachers that label Retrieval SubTrees with router actions.

`oracle_teacher` (answer-aware, new): a visible content node containing a gold answer or gold
evidence -> ANSWER; a collapsed heading with such a node among its unseen content -> EXPAND; for
section-path gold (e-manuals), content under the gold path -> ANSWER and headings on it with
unseen content -> EXPAND; nothing -> refuse. Its output is in the router grammar, so it trains
the router directly.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag_assets.core.answer_metrics import contains_answer, normalize_answer
from rag_assets.core.router_io import format_actions
from rag_assets.core.subtree import DocumentRouting, SubtreeView
from rag_assets.core.tree import CONTENT

_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True, slots=True)
class TeacherLabel:
    answer_ids: tuple[int, ...]
    expand_ids: tuple[int, ...]
    target: str  # in the router's output grammar
    raw: str  # what the teacher produced before formatting (kept for audit)


def _evidence_texts(evidences: Sequence[str]) -> list[str]:
    return [t for t in (normalize_answer(_TAG.sub(" ", e)) for e in evidences) if t]


def oracle_teacher(doc: DocumentRouting, view: SubtreeView, *, answers: Sequence[str] = (),
                   evidences: Sequence[str] = (), section_path: Sequence[str] = ()) -> TeacherLabel:
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
        return bool(path) and [normalize_answer(h) for h in node.heading_path[1:1 + len(path)]] == path

    answer_ids = sorted(n for n in view.visible_content_ids if is_gold(n))
    expand_ids = sorted(
        h for h in view.collapsed_heading_ids
        if any(is_gold(c) for c, heading in doc.section.items() if heading == h and c not in doc.seen)
    )
    target = format_actions([(n, doc.nodes[n].text) for n in answer_ids], [(h, doc.nodes[h].text) for h in expand_ids])
    return TeacherLabel(tuple(answer_ids), tuple(expand_ids), target, raw=f"gold answer/evidence/path matches: {answer_ids} {expand_ids}")
