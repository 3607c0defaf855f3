"""The report's answer-forms section: each extractive row against the generated row it mirrors.

`rag-hybrid-extractive` and `rdr2-extractive` answer the same questions from the same evidence as
`rag-hybrid` and `rdr2`, with the evidence's best sentence instead of the reader's text
(core/answering/extractive.py). Their own means stand in the reader-based table; this section
pairs them per question (extractive minus generated, 95% bootstrap interval, the seed systems'
helper and verdict rule) on the answer metrics and on how often the first citation is a gold
one, and says which form the collection answers with by default and on what it was chosen
(core/answering/default_form.py: the routers' validation questions, never these).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from rag_assets.core.evaluation.seed_systems import LABELS, SeedComparison

# extractive row -> the generated row with the same strategy and evidence
FORM_BASES = {"rag-hybrid-extractive": "rag-hybrid", "rdr2-extractive": "rdr2"}
FORM_METRICS = ("em", "f1", "rouge_l", "first_cite_gold")
FORMS_TITLE = "Answer forms: extractive against generated"


@dataclass(frozen=True, slots=True)
class AnswerForms:
    """The paired comparisons and the collection's default form (with how it was chosen)."""

    comparisons: list[SeedComparison] = field(default_factory=list)
    default_form: str = ""  # '' where `answers` published none
    choice: Mapping[str, object] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "default": self.default_form,
            "choice": dict(self.choice),
            "paired": [c.as_dict() for c in self.comparisons],
        }


def default_form_line(default_form: str, choice: Mapping[str, object]) -> str:
    """How the collection's default form was chosen, in a sentence."""
    if not default_form:
        return (
            "The collection's default form was not measured (`answers` has not published one): answers are generated."
        )
    questions = int(choice.get("questions", 0) or 0)
    if not questions:
        return f"The collection answers **{default_form}** by default: no validation question with a gold answer to choose by."
    metric = LABELS.get(str(choice.get("metric")), str(choice.get("metric")))
    return (
        f"The collection answers **{default_form}** by default, chosen on {questions} validation questions "
        f"(train split, never the questions above): {metric} generated {float(choice.get('generated', 0)):.3f}, "
        f"extractive {float(choice.get('extractive', 0)):.3f}; extractive is chosen only when its paired "
        "interval lies above 0."
    )


def forms_section(forms: AnswerForms) -> list[tuple[str, list[str], list[list[str]], str, str]]:
    """(title, header, rows, no plot, footnote), or nothing when no extractive row was answered."""
    comparisons = forms.comparisons
    if not comparisons:
        return []
    metrics = [m for m in FORM_METRICS if any(m in c.differences for c in comparisons)]
    header = ["extractive row", "generated row", "questions", *(f"Δ {LABELS[m]} (95% CI)" for m in metrics), "verdict"]
    rows = [
        [
            c.system,
            c.base,
            str(c.questions),
            *(c.differences[m].text(signed=True) if m in c.differences else "" for m in metrics),
            c.verdict,
        ]
        for c in comparisons
    ]
    footnote = (
        "Δ: extractive minus generated on the questions both answered, 95% percentile bootstrap interval of "
        "the paired per-question difference; both read the same evidence. "
        + default_form_line(forms.default_form, forms.choice)
    )
    return [(FORMS_TITLE, header, rows, "", footnote)]
