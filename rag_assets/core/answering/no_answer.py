"""Questions the documents do not answer: said so, instead of answered from unrelated evidence.

Retrieval always returns something. Asked "How do I bake sourdough bread?", a collection of gov.uk
guidance gives the reader pages on land registration and tax payments, and the small reader
answers anyway (with garbage, or with the best sentence of that evidence, which reads as a
confident wrong answer). So an answer is kept only when some sentence of its evidence is close
to the question: its *relevance* is the best similarity the embedder gives a sentence, list item
or table row of the evidence for the question (not the trained passage reranker that picks
extractive answers: it learnt from the train questions, the floor's own validation questions
among them, and scores them higher than new ones). Below the collection's *floor* the answer is
`NOT_FOUND_ANSWER`, with the evidence kept as evidence also given (none of it supports), and the
reader is not asked (core/answering/strategy_runner.py): what it would stream is never taken back.

The floor is measured, never guessed, from two sides: it lies below the relevance of most
questions the documents answer (the `ANSWERED_QUANTILE` quantile of the routers' validation
questions; never dev or test) and above that of most questions no such collection answers (the
`OFF_TOPIC_QUANTILE` quantile of the packaged everyday questions, `data/off_topic_questions.txt`:
baking, pets, knots), the lower of the two. The validation side alone sets it too high: the
passage reranker and the routers learnt from train questions, so their evidence for them is
closer than for new ones (on conditionalqa the validation questions' tenth quantile was 0.57, the
dev + test questions' 0.53); the off-topic side alone could exceed everything for a collection
about baking. It is recorded, with the embedder it was measured with, beside the collection's
default answer form; a floor measured with another embedder is not applied (scores of two models
are not on one scale). With fewer than `MIN_QUESTIONS` validation questions nothing is measured
and every answer is kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources

import numpy as np

from rag_assets.core.answering.extractive import units
from rag_assets.core.answering.types import AnswerOutcome, Citation, PairScorer

NOT_FOUND_ANSWER = "The documents do not answer this question."
ANSWERED_QUANTILE = 0.1  # a tenth of the answered validation questions may fall below the floor
OFF_TOPIC_QUANTILE = 0.95  # and a twentieth of the off-topic questions above it
MIN_QUESTIONS = 3  # the off-topic side sets the floor on the real sets; the answered side caps it


def _packaged_lines(name: str) -> list[str]:
    text = resources.files("rag_assets.data").joinpath(name).read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def off_topic_questions() -> list[str]:
    """The packaged everyday questions the floor is held above."""
    return _packaged_lines("off_topic_questions.txt")


def noise_questions() -> list[str]:
    """The packaged nonsense (keyboard mashes, non-words; benchmarks/noise_questions.py made
    them) no collection answers: what the term rule (core/answering/known_terms.py) is tested on."""
    return _packaged_lines("noise_questions.txt")


@dataclass(frozen=True, slots=True)
class RelevanceFloor:
    value: float
    scorer: str  # the model whose scores `value` is on
    questions: int  # validation questions it was measured on

    def details(self) -> dict[str, object]:
        return {
            "relevance_floor": round(self.value, 4),
            "relevance_scorer": self.scorer,
            "relevance_questions": self.questions,
        }

    @classmethod
    def from_details(cls, details: Mapping[str, object]) -> RelevanceFloor | None:
        """The floor recorded in a published default form's details (None: none measured)."""
        if "relevance_floor" not in details:
            return None
        return cls(
            float(details["relevance_floor"]), str(details["relevance_scorer"]), int(details["relevance_questions"])
        )

    def note(self, relevance: float | None) -> str:
        """Why an answer below this floor says it is not found."""
        best = "no sentence" if relevance is None else f"its best sentence scores {relevance:.2f}"
        return (
            f"not found: the evidence given does not answer the question ({best}; the collection's floor is "
            f"{self.value:.2f}, set between {self.questions} validation questions and everyday ones it does not answer)"
        )


def evidence_relevance(question: str, citations: Sequence[Citation], scorer: PairScorer) -> float | None:
    """The best score `scorer` gives a sentence of the cited evidence for `question` (None: no evidence)."""
    found = units(citations)
    if not found:
        return None
    return max(scorer.scores(question, [u.text for u in found]))


def calibrate_floor(
    answered: Sequence[float | None], off_topic: Sequence[float | None], scorer: str
) -> RelevanceFloor | None:
    """The lower of the `ANSWERED_QUANTILE` quantile of the answered questions' relevance and the
    `OFF_TOPIC_QUANTILE` quantile of the off-topic ones' (None: too few answered questions)."""
    kept = [r for r in answered if r is not None]
    if len(kept) < MIN_QUESTIONS:
        return None
    value = float(np.quantile(kept, ANSWERED_QUANTILE))
    away = [r for r in off_topic if r is not None]
    if away:
        value = min(value, float(np.quantile(away, OFF_TOPIC_QUANTILE)))
    return RelevanceFloor(value, scorer, len(kept))


def below_floor(relevance: float | None, floor: float) -> bool:
    """Whether evidence of `relevance` (None: no evidence at all) answers nothing under `floor`."""
    return relevance is None or relevance < floor


def not_found(outcome: AnswerOutcome, relevance: float | None, note: str = "") -> AnswerOutcome:
    """`outcome` (its evidence kept) answered `NOT_FOUND_ANSWER`, no citation supporting it;
    `note`: why, where the relevance floor is not the reason."""
    outcome.answer, outcome.relevance, outcome.not_found = NOT_FOUND_ANSWER, relevance, True
    outcome.supporting, outcome.attribution, outcome.not_found_note = 0, "", note
    return outcome
