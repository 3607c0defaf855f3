"""What every teacher produces: a `TeacherLabel` in the router's output grammar, for a `TeacherTask`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rag_assets.core.routing.action_format import format_actions
from rag_assets.core.routing.subtree import DocumentRouting, SubtreeView

FAILED = "failed"
KINDS = ("answer", "expand", "refuse")


@dataclass(frozen=True, slots=True)
class TeacherLabel:
    answer_ids: tuple[int, ...]
    expand_ids: tuple[int, ...]
    target: str  # in the router's output grammar ("" when failed)
    raw: str  # what the teacher produced before formatting (kept for audit)
    teacher: str = "oracle"
    failed: bool = False  # unusable teacher output: kept for audit, excluded from training
    invalid_ids: int = 0  # ids the teacher proposed that the view forbids (dropped)

    @property
    def kind(self) -> str:
        """'answer' | 'expand' | 'refuse' (the paper's ANS/EXP/REF), or 'failed'."""
        if self.failed:
            return FAILED
        return "answer" if self.answer_ids else "expand" if self.expand_ids else "refuse"


@dataclass(frozen=True, slots=True)
class TeacherTask:
    """One subtree to label: the question, the document state and the view as rendered."""

    query: str
    doc: DocumentRouting
    view: SubtreeView
    rendered: str


def make_label(
    doc: DocumentRouting, answer_ids: Sequence[int], expand_ids: Sequence[int], raw: str, teacher: str, invalid: int = 0
) -> TeacherLabel:
    answers, expands = sorted(set(answer_ids)), sorted(set(expand_ids))
    target = format_actions([(n, doc.nodes[n].text) for n in answers], [(h, doc.nodes[h].text) for h in expands])
    return TeacherLabel(tuple(answers), tuple(expands), target, raw, teacher, False, invalid)
