"""Each collection's default answer form: a quote of the evidence (extractive) unless the reader's
own answer (generated) is measurably right more often.

Both forms answer the routers' validation questions (train-split questions, never dev or test)
with the strategy an ask runs by default. An answer is *right* when it contains a normalised gold
answer, or, for a yes/no gold answer, when its verdict matches (`answer_metrics.answer_right`; a
quote that says neither yes nor no is not right there); anything else is not right, a "not found"
included. Token F1 is not the measure: against short gold answers it favours a short wrong phrase
over a right sentence. The reader becomes the default only when the 95% paired bootstrap interval
of (generated right - extractive right) lies above 0 on at least `MIN_QUESTIONS_FOR_READER`
questions; a tie, a difference within noise or no
question to measure on keeps the quote, which a person can check against its citation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rag_assets.core.answer_metrics import answer_right
from rag_assets.core.answering.no_answer import RelevanceFloor
from rag_assets.core.answering.types import AnswerOutcome
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.routing.metrics import mean_interval

DEFAULT_FORM = "extractive"  # where nothing was measured, or the reader is not better beyond noise
# fewer questions than this never make the reader the default: a bootstrap of 3 agreeing pairs is
# a point, not evidence (the reader right on 4 of 4 where the quote is wrong would be p = 0.0625
# by a sign test)
MIN_QUESTIONS_FOR_READER = 5
MEASURE = "right"  # the share of answers holding the gold answer (yes/no: the right verdict)


@dataclass(frozen=True, slots=True)
class FormChoice:
    form: str
    generated_right: int  # validation questions the reader's answer got right
    extractive_right: int  # ... the quote got right
    questions: int  # validation questions with a gold answer
    interval: tuple[float, float] | None = None  # 95% interval of (generated - extractive) right share
    floor: RelevanceFloor | None = None  # measured on the same questions (core/answering/no_answer.py)

    def details(self) -> dict[str, object]:
        return {
            "measure": MEASURE,
            "questions": self.questions,
            "generated_right": self.generated_right,
            "extractive_right": self.extractive_right,
            **({"interval": [round(v, 4) for v in self.interval]} if self.interval else {}),
            **(self.floor.details() if self.floor is not None else {}),
        }

    @classmethod
    def from_details(cls, form: str, details: dict) -> FormChoice:
        """The choice recorded with the published policy (`details()` read back)."""
        interval = details.get("interval")
        return cls(
            form,
            int(details.get("generated_right", 0)),
            int(details.get("extractive_right", 0)),
            int(details.get("questions", 0)),
            (float(interval[0]), float(interval[1])) if interval else None,
            RelevanceFloor.from_details(details),
        )

    @property
    def reason(self) -> str:
        """Why this form is the default, in words a person reads beside an answer."""
        if not self.questions:
            return "a quote of the evidence: no validation question with a gold answer measured the reader"
        counts = (
            f"on {self.questions} validation questions the reader's answer was right {self.generated_right} times, "
            f"the quote {self.extractive_right}"
        )
        if self.form == "generated":
            return f"the reader's answer: {counts}, more often beyond noise"
        if self.questions < MIN_QUESTIONS_FOR_READER:
            return f"a quote of the evidence: {counts}; too few to make the reader the default"
        return f"a quote of the evidence: {counts}; the reader is not right more often beyond noise"

    @property
    def note(self) -> str:
        floor = "no relevance floor" if self.floor is None else f"relevance floor {self.floor.value:.3f}"
        return f"{self.form} ({self.reason}); {floor}"


def choose_form(
    questions: Sequence[Question], generated: Sequence[AnswerOutcome], extractive: Sequence[AnswerOutcome]
) -> FormChoice:
    """The default form for answers like these (see the module's rule)."""
    pairs = []
    for question, gen, ext in zip(questions, generated, extractive):
        gen_right, ext_right = answer_right(gen.answer, question.answers), answer_right(ext.answer, question.answers)
        if gen_right is None or ext_right is None:
            continue
        pairs.append((float(gen_right), float(ext_right)))
    if not pairs:
        return FormChoice(DEFAULT_FORM, 0, 0, 0)
    gen_right, ext_right = (np.asarray(column) for column in zip(*pairs))
    # the report's own interval of a mean (the paired differences per question)
    interval = mean_interval(list(gen_right - ext_right))
    form = "generated" if interval[0] > 0 and len(pairs) >= MIN_QUESTIONS_FOR_READER else DEFAULT_FORM
    return FormChoice(form, int(gen_right.sum()), int(ext_right.sum()), len(pairs), interval)


def policy_problems(choice: FormChoice | None) -> list[str]:
    """What is wrong with a published choice (empty: nothing): missing, counts out of range, or
    the reader made the default without being right more often beyond noise."""
    if choice is None:
        return ["no answer policy is published"]
    problems = []
    if choice.form not in ("generated", "extractive"):
        problems.append(f"default form {choice.form!r} is neither generated nor extractive")
    if not (0 <= choice.generated_right <= choice.questions and 0 <= choice.extractive_right <= choice.questions):
        problems.append(
            f"right counts {choice.generated_right} / {choice.extractive_right} out of 0..{choice.questions} questions"
        )
    if choice.form == "generated" and (
        choice.interval is None or choice.interval[0] <= 0 or choice.questions < MIN_QUESTIONS_FOR_READER
    ):
        problems.append("the reader's answer is the default without being right more often beyond noise")
    return problems
