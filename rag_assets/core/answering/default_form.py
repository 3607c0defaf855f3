"""Each collection's default answer form (generated or extractive): the measured better one.

Both forms answer the routers' validation questions (real questions of the routing data's
validation fold: train-split questions, never dev or test) with the strategy `rag ask` runs by
default; the form whose answers score higher on the question set's primary answer metric (token F1
for short gold answers, ROUGE-L for long ones) becomes the collection's default, recorded with its
published models. Extractive replaces the generated answer only when it is better beyond noise:
the 95% paired bootstrap interval of (extractive - generated) lies above 0. A few validation
questions rarely show that (on the built-in corpus 6 validation questions favoured extractive
while dev+test favoured generated), so a tie or a difference within noise keeps the reader's
answer. Without validation questions with gold answers nothing is measured and answers stay
generated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rag_assets.core.answering.no_answer import RelevanceFloor
from rag_assets.core.answering.types import AnswerOutcome
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.evaluation.scoring import answer_metrics

DEFAULT_FORM = "generated"  # where nothing was measured
BOOTSTRAP_RESAMPLES = 2000


@dataclass(frozen=True, slots=True)
class FormChoice:
    form: str
    metric: str  # f1 | rouge_l | '' (nothing measured)
    generated: float
    extractive: float
    questions: int  # validation questions with gold answers
    floor: RelevanceFloor | None = None  # measured on the same questions (core/answering/no_answer.py)

    def details(self) -> dict[str, object]:
        return {
            "metric": self.metric,
            "generated": round(self.generated, 4),
            "extractive": round(self.extractive, 4),
            "questions": self.questions,
            **(self.floor.details() if self.floor is not None else {}),
        }

    @property
    def note(self) -> str:
        floor = "no relevance floor" if self.floor is None else f"relevance floor {self.floor.value:.3f}"
        if not self.metric:
            return f"{self.form}: no validation question with a gold answer to choose by; {floor}"
        return (
            f"{self.form}: the better form on {self.questions} validation questions "
            f"({self.metric} generated {self.generated:.3f}, extractive {self.extractive:.3f}); {floor}"
        )


def _primary(metrics: dict[str, float]) -> tuple[str, float] | None:
    for name in ("f1", "rouge_l"):
        if name in metrics:
            return name, metrics[name]
    return None


def choose_form(
    questions: Sequence[Question], generated: Sequence[AnswerOutcome], extractive: Sequence[AnswerOutcome]
) -> FormChoice:
    """The form whose answers to `questions` score higher (extractive on a tie)."""
    scores: dict[str, dict[str, list[float]]] = {}
    for question, gen, ext in zip(questions, generated, extractive):
        pair = (
            _primary(answer_metrics(gen.answer, question.answers)),
            _primary(answer_metrics(ext.answer, question.answers)),
        )
        if pair[0] is None or pair[1] is None:
            continue
        metric = pair[0][0]
        scores.setdefault(metric, {"generated": [], "extractive": []})
        scores[metric]["generated"].append(pair[0][1])
        scores[metric]["extractive"].append(pair[1][1])
    if not scores:
        return FormChoice(DEFAULT_FORM, "", 0.0, 0.0, 0)
    metric = max(scores, key=lambda m: len(scores[m]["generated"]))  # the set's own kind of answer
    gen, ext = (float(np.mean(scores[metric][form])) for form in ("generated", "extractive"))
    better = extractive_better_beyond_noise(scores[metric]["extractive"], scores[metric]["generated"])
    return FormChoice("extractive" if better else "generated", metric, gen, ext, len(scores[metric]["generated"]))


def extractive_better_beyond_noise(extractive: Sequence[float], generated: Sequence[float]) -> bool:
    """Whether the 95% paired bootstrap interval of the mean (extractive - generated) lies above 0."""
    differences = np.asarray(extractive, dtype=float) - np.asarray(generated, dtype=float)
    rng = np.random.default_rng(0)  # the same choice for the same scores
    resampled = differences[rng.integers(0, len(differences), size=(BOOTSTRAP_RESAMPLES, len(differences)))]
    return bool(np.percentile(resampled.mean(axis=1), 2.5) > 0)
