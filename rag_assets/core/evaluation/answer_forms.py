"""The report's answer-forms section: each extractive row against the generated row it mirrors.

`rag-hybrid-extractive` and `rdr2-extractive` answer the same questions from the same evidence as
`rag-hybrid` and `rdr2`, with the evidence's best sentence instead of the reader's text
(core/answering/extractive.py). Their own means stand in the reader-based table; this section
pairs them per question (extractive minus generated, 95% bootstrap interval, the seed systems'
helper and verdict rule) on the answer metrics and on how often the first citation is a gold
one, and says which form the collection answers with by default and on what it was chosen
(core/answering/policy/default_form.py: the routers' validation questions, never these).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rag_assets.core.answering.policy.default_form import DEFAULT_FORM, FormChoice
from rag_assets.core.evaluation.seed_systems import LABELS, SeedComparison

# extractive row -> the generated row with the same strategy and evidence
FORM_BASES = {"rag-hybrid-extractive": "rag-hybrid", "rdr2-extractive": "rdr2"}
FORM_METRICS = ("right", "f1", "rouge_l", "first_cite_gold")
FORMS_TITLE = "Answer forms: extractive against generated"


@dataclass(frozen=True, slots=True)
class AnswerForms:
    """The paired comparisons and the collection's published default form (None: not measured)."""

    comparisons: list[SeedComparison] = field(default_factory=list)
    choice: FormChoice | None = None

    def as_dict(self) -> dict:
        return {
            "default": self.choice.form if self.choice else "",
            "choice": self.choice.details() if self.choice else {},
            "paired": [c.as_dict() for c in self.comparisons],
        }


def default_form_line(choice: FormChoice | None) -> str:
    """How the collection's default form was chosen, in a sentence (the words an answer's note uses)."""
    if choice is None:
        return (
            f"The collection's default form was not measured (`answer_policy` has not run): answers are {DEFAULT_FORM}."
        )
    return (
        f"The collection answers **{choice.form}** by default: {choice.reason} "
        "(validation questions: train split, never the questions above)."
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
        "the paired per-question difference; both read the same evidence. " + default_form_line(forms.choice)
    )
    return [(FORMS_TITLE, header, rows, "", footnote)]
