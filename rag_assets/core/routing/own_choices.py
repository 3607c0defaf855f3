"""The encoder router's own choices: answer every shown node scoring within a margin of the best
node of the question, the margin chosen on held-out questions at a word target.

Why not the calibrated threshold: the threshold and the answers per view are chosen for ANS-F1
(per-view F1 against the teacher's labels), which rewards answering a node or two per view. Its
own choices were far shorter than retrieve-and-read's evidence and missed most of it
(conditionalqa dev + test: evidence recall 0.385 at 12% of rag-hybrid's words, against 0.775),
while the same scores ranked the gold nodes well enough for the budget fill to beat rag-hybrid.
A fixed threshold also fails across questions: one question's nodes all score 0.4, another's
0.8. A margin under the question's best node (over all its routed documents and rounds so far)
adapts to that: a question with one clear answer gets a few nodes, a question whose evidence is
a whole list of conditions gets the list.

The scores the margin is applied to are smoothed with their section's best node
(`scoring_router.section_smoothed`) at a weight chosen with the margin: evidence comes in
sections (a condition's list items), and a heavier smoothing than the budget fill's answers a
section's items together. The budget fill keeps the router's own weight.

`choose_own_choices` tries every (section weight, margin) on held-out questions without the
budget fill (`HeldOutEvidence.own_choices`) and keeps, among those within `word_target` of
retrieve-and-read's words, the best evidence metric, then the fewest words (`pick_own_choices`,
objective `best_within`). It used to keep the fewest words that reach retrieve-and-read's metric
on those questions (`fewest_words`), and that stopped at a tie on a handful of questions: with the
7 or 8 a cross-fitted fold of nq_wiki chooses on, margin 0 tied rag-hybrid there in every fold and
then reached passage hit 0.418 in 25% of the words on the questions it never saw. The best metric
within the target keeps the words the target allows where they buy evidence on those questions.
The margins step by 0.01 up to 0.08: on nq_wiki's whole-page views one step of 0.03 took the words
from a quarter to over 60% of rag-hybrid's. Measured over every labelled question in
docs/results.md ("Every labelled question, cross-fitted").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Protocol

from rag_assets.core.routing.navigation import Router

if TYPE_CHECKING:
    from rag_assets.core.evaluation.held_out_evidence import HeldOutEvidence

WORD_TARGET = 0.6  # own choices' share of retrieve-and-read's words at most
# Cosine units under the question's best node.
MARGINS = (0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.1)
SECTION_WEIGHTS = (3.0, 4.0, 6.0)  # tried besides the router's own
OBJECTIVES = ("best_within", "fewest_words")  # how `pick_own_choices` picks; the first by default


@dataclass(frozen=True, slots=True)
class OwnChoices:
    """Answer every shown node whose score, smoothed with `section_weight`, is at least the best
    such score of the question's views so far minus `margin`."""

    margin: float
    section_weight: float

    def __post_init__(self) -> None:
        if self.margin < 0 or self.section_weight < 0:
            raise ValueError(f"own choices need margin >= 0 and section_weight >= 0, got {self}")


class AnswersByOwnChoices(Protocol):
    """A router that can answer by an own-choice rule (`scoring_router.ScoringRouter`)."""

    section_weight: float

    def with_own_choices(self, own_choices: OwnChoices | None) -> Router: ...


@dataclass(frozen=True, slots=True)
class OwnChoiceTrial:
    """One (section weight, margin) on held-out questions: their mean evidence metric without
    the budget fill and its words as a share of retrieve-and-read's."""

    section_weight: float
    margin: float
    evidence: float
    words_share: float


@dataclass(frozen=True, slots=True)
class OwnChoiceCalibration:
    chosen: OwnChoices | None  # None: no held-out question to choose on
    metric: str
    baseline: float  # retrieve-and-read's evidence metric on the same questions
    word_target: float
    questions: int
    trials: list[OwnChoiceTrial] = field(default_factory=list)
    objective: str = OBJECTIVES[0]

    def record(self) -> dict:
        """What router.json keeps (and `own_choices_from_record` reads back)."""
        return {
            "chosen": asdict(self.chosen) if self.chosen else None,
            "metric": self.metric,
            "baseline": round(self.baseline, 4),
            "word_target": self.word_target,
            "questions": self.questions,
            "objective": self.objective,
            "trials": [asdict(t) for t in self.trials],
        }


def own_choices_from_record(record: dict) -> OwnChoices | None:
    """The own-choice rule a router.json records (None for routers published before it)."""
    chosen = (record.get("own_choices") or {}).get("chosen")
    return OwnChoices(**chosen) if chosen else None


def margin_answers(scores: dict[int, float], best: float, margin: float) -> list[int]:
    """The nodes of `scores` at least `best - margin`, in id order."""
    return sorted(n for n, s in scores.items() if s >= best - margin)


def pick_own_choices(
    trials: Sequence[OwnChoiceTrial], baseline: float, word_target: float, objective: str = OBJECTIVES[0]
) -> OwnChoiceTrial | None:
    """Among trials within `word_target` of the baseline's words, by `objective`:
    `fewest_words`: the fewest words reaching the baseline's metric (then the better metric, the
    smaller weight and margin), and if none reaches it, the best metric (then fewer words);
    `best_within`: the best metric (then fewer words, the smaller weight and margin).
    None when no trial is within the target."""
    if objective not in OBJECTIVES:
        raise ValueError(f"own-choice objective must be one of {OBJECTIVES}, got {objective!r}")
    within = [t for t in trials if t.words_share <= word_target]
    reaching = [t for t in within if t.evidence >= baseline]
    if reaching and objective == "fewest_words":
        return min(reaching, key=lambda t: (t.words_share, -t.evidence, t.section_weight, t.margin))
    if within:
        return min(within, key=lambda t: (-t.evidence, t.words_share, t.section_weight, t.margin))
    return None


def choose_own_choices(
    router: AnswersByOwnChoices,
    held_out: HeldOutEvidence | None,
    *,
    word_target: float = WORD_TARGET,
    margins: Sequence[float] = MARGINS,
    section_weights: Sequence[float] = SECTION_WEIGHTS,
    objective: str = OBJECTIVES[0],
) -> OwnChoiceCalibration | None:
    """Every (section weight, margin) routed on `held_out`'s questions without the budget fill,
    the weights being the router's own and `section_weights`; the rule `pick_own_choices` keeps
    (the module docstring says why). None without held-out questions: the router keeps
    answering by its threshold."""
    if held_out is None:
        return None
    trials = []
    for weight in sorted({router.section_weight, *section_weights}):
        for margin in margins:
            evidence, share = held_out.own_choices(router.with_own_choices(OwnChoices(margin, weight)))
            trials.append(OwnChoiceTrial(weight, margin, round(evidence, 4), round(share, 4)))
    best = pick_own_choices(trials, held_out.baseline, word_target, objective)
    chosen = OwnChoices(best.margin, best.section_weight) if best else None
    return OwnChoiceCalibration(
        chosen, held_out.metric, held_out.baseline, word_target, len(held_out.questions), trials, objective
    )
