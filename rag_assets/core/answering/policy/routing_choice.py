"""rdr2's routing settings, learned per collection: first-stage passages, documents routed and the
scoring router's expand threshold, chosen on the collection's train-split questions.

Why per collection: what routing needs differs by corpus (a filing question names one of a
company's filings and its figures sit in a statement the router must open; a Wikipedia question's
answer sits in the article the first passages already hit), and the global defaults were sized for
`make run` on the built-in corpus. Why on train questions only: the report scores dev and test;
a setting chosen on them would be fitted to what it is judged on.

The rule (`choose_routing`), from each candidate's per-question evidence metric (the set's primary
one, at retrieve-and-read's words, as the report measures rdr2):
- the best candidate by mean on every measured question (a tie keeps the earlier candidate: the
  default first, then the cheaper);
- it replaces the default only when it is better beyond noise on those questions (the 95% paired
  interval of best - default lies above 0) AND the choice holds up out of sample: cross-fitted over
  `FOLDS` folds (each fold's setting chosen on the other folds, scored on the fold), the pooled
  gain over the default is above 0. The best of a grid on few questions is partly luck; the
  cross-fitted gain is what the choice earns on questions it was not chosen on.
- fewer than `MIN_QUESTIONS` measured questions keep the default.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rag_assets.core.answering.types import StrategySpec
from rag_assets.core.routing.metrics import mean_interval

MIN_QUESTIONS = 10  # fewer measured questions than this keep the default settings
FOLDS = 5
PASSAGES = (20, 50)  # first-stage passages grouped into the routed documents
DOCUMENTS = (1, 2, 3)  # documents routed
# the scoring router's expand threshold: its calibrated one, and lower (more headings opened: a
# statement heading scores 0.04-0.49 against a metric question where the calibrated one is 0.575)
EXPAND_OFFSETS = (0.0, -0.1, -0.2)


@dataclass(frozen=True, slots=True)
class RoutingSetting:
    """One candidate: rdr2's first-stage passages, documents routed and expand threshold (None:
    the router's calibrated one)."""

    passages_per_query: int
    documents: int
    expand_threshold: float | None = None

    @property
    def label(self) -> str:
        expand = "calibrated" if self.expand_threshold is None else f"{self.expand_threshold:.3f}"
        return f"passages {self.passages_per_query}, documents {self.documents}, expand {expand}"

    def as_dict(self) -> dict[str, object]:
        return {
            "passages_per_query": self.passages_per_query,
            "documents": self.documents,
            "expand_threshold": self.expand_threshold,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> RoutingSetting:
        expand = data.get("expand_threshold")
        return cls(int(data["passages_per_query"]), int(data["documents"]), None if expand is None else float(expand))

    @classmethod
    def of(cls, spec: StrategySpec) -> RoutingSetting:
        return cls(spec.passages_per_query, spec.top_k, spec.expand_threshold)

    def applied(self, spec: StrategySpec, router: str) -> StrategySpec:
        """`spec` routing with this setting; the expand threshold only where `spec` routes with
        `router` (the kind it was measured with: another router's scores are on another scale)."""
        if spec.kind != "rdr2":
            return spec
        expand = self.expand_threshold if spec.router == router else spec.expand_threshold
        return dataclasses.replace(
            spec, passages_per_query=self.passages_per_query, top_k=self.documents, expand_threshold=expand
        )


def candidate_settings(default: RoutingSetting, calibrated_expand: float | None) -> list[RoutingSetting]:
    """The grid, the default first (ties keep it), then cheaper before dearer. Without a calibrated
    threshold (a router that writes its actions) the expand axis is left out."""
    offsets = EXPAND_OFFSETS if calibrated_expand is not None else (0.0,)
    grid = [default]
    for passages in PASSAGES:
        for documents in DOCUMENTS:
            for offset in offsets:
                expand = None if offset == 0 else round(float(calibrated_expand) + offset, 4)
                setting = RoutingSetting(passages, documents, expand)
                if setting not in grid:
                    grid.append(setting)
    return grid


@dataclass(frozen=True, slots=True)
class RoutingChoice:
    """The settings published for a collection's rdr2 asks, with what they were chosen on."""

    setting: RoutingSetting
    default: RoutingSetting
    router: str  # the router kind the grid was measured with
    metric: str  # the evidence metric compared ('' when nothing was measured)
    questions: int  # train-split questions measured
    means: tuple[tuple[RoutingSetting, float], ...] = ()  # every candidate's mean, grid order
    interval: tuple[float, float] | None = None  # 95% paired interval of best - default, all questions
    cross_fitted: tuple[float, float, float] | None = None  # pooled out-of-fold gain: mean, low, high

    @property
    def learned(self) -> bool:
        return self.setting != self.default

    def apply(self, spec: StrategySpec) -> StrategySpec:
        """`spec` routing with the learned setting; unchanged where the defaults stand (a spec
        configured otherwise, e.g. the `answers` config's top_k, keeps its own values)."""
        return self.setting.applied(spec, self.router) if self.learned else spec

    @property
    def reason(self) -> str:
        if not self.questions:
            return "the defaults: no train question with an evidence label measured the settings"
        best = max(self.means, key=lambda pair: pair[1]) if self.means else (self.setting, 0.0)
        default_mean = dict(self.means).get(self.default, 0.0)
        measured = f"{self.metric} on {self.questions} train questions: the default {default_mean:.3f}"
        if self.learned:
            gain = self.cross_fitted[0] if self.cross_fitted else 0.0
            return f"learned for the collection: {measured}, these {best[1]:.3f}, cross-fitted gain {gain:+.3f}"
        if self.questions < MIN_QUESTIONS:
            return f"the defaults: {measured}; too few questions to learn settings"
        if best[0] == self.default:
            return f"the defaults: {measured}, no candidate better"
        gain = f", cross-fitted gain {self.cross_fitted[0]:+.3f}" if self.cross_fitted else ""
        return f"the defaults: {measured}, the best ({best[0].label}) {best[1]:.3f}, not better beyond noise{gain}"

    def details(self) -> dict[str, object]:
        return {
            "setting": self.setting.as_dict(),
            "default": self.default.as_dict(),
            "router": self.router,
            "metric": self.metric,
            "questions": self.questions,
            "means": [{**s.as_dict(), "mean": round(m, 4)} for s, m in self.means],
            **({"interval": [round(v, 4) for v in self.interval]} if self.interval else {}),
            **({"cross_fitted": [round(v, 4) for v in self.cross_fitted]} if self.cross_fitted else {}),
        }

    @classmethod
    def from_details(cls, details: Mapping[str, object]) -> RoutingChoice:
        interval, crossed = details.get("interval"), details.get("cross_fitted")
        return cls(
            RoutingSetting.from_dict(details["setting"]),
            RoutingSetting.from_dict(details["default"]),
            str(details["router"]),
            str(details.get("metric", "")),
            int(details.get("questions", 0)),
            tuple((RoutingSetting.from_dict(m), float(m["mean"])) for m in details.get("means", ())),
            (float(interval[0]), float(interval[1])) if interval else None,
            tuple(float(v) for v in crossed) if crossed else None,
        )


def fold_of(qid: str, folds: int = FOLDS, salt: str = "routing-fold") -> int:
    """A question's fold: a hash of its id (with `salt`, so two uses fold apart), so adding
    questions moves no old one."""
    return int(hashlib.sha256(f"{salt}:{qid}".encode()).hexdigest()[:8], 16) % folds


def _best(scores: Mapping[RoutingSetting, Sequence[float]], rows: Sequence[int]) -> tuple[RoutingSetting, float]:
    """The candidate with the highest mean over `rows` (the first of equals: grid order)."""
    best, best_mean = None, float("-inf")
    for setting, values in scores.items():
        mean = sum(values[i] for i in rows) / len(rows)
        if mean > best_mean + 1e-12:
            best, best_mean = setting, mean
    return best, best_mean


def choose_routing(
    scores: Mapping[RoutingSetting, Sequence[float]], qids: Sequence[str], *, router: str, metric: str
) -> RoutingChoice:
    """The published settings from each candidate's per-question metric (`scores`, parallel to
    `qids`; the first key is the default), by the module's rule."""
    default = next(iter(scores))
    if any(len(values) != len(qids) for values in scores.values()):
        raise ValueError(f"every candidate needs one score per question ({len(qids)})")
    if not qids:
        return RoutingChoice(default, default, router, metric, 0)
    everyone = range(len(qids))
    means = tuple((s, sum(v) / len(v)) for s, v in scores.items())
    best, _ = _best(scores, everyone)
    interval = mean_interval([b - d for b, d in zip(scores[best], scores[default])]) if best != default else None
    crossed = _cross_fitted(scores, default, qids)
    adopt = earned(len(qids), interval, crossed)
    return RoutingChoice(best if adopt else default, default, router, metric, len(qids), means, interval, crossed)


def earned(
    questions: int, interval: tuple[float, float] | None, cross_fitted: tuple[float, float, float] | None
) -> bool:
    """The rule's evidence for replacing the defaults: enough questions, the paired interval of
    best - default above 0, and a positive cross-fitted gain."""
    return (
        questions >= MIN_QUESTIONS
        and interval is not None
        and interval[0] > 0
        and cross_fitted is not None
        and cross_fitted[0] > 0
    )


def _cross_fitted(
    scores: Mapping[RoutingSetting, Sequence[float]], default: RoutingSetting, qids: Sequence[str]
) -> tuple[float, float, float] | None:
    """Each fold's questions scored with the setting the other folds choose, minus the default's:
    the pooled gain with its 95% interval (None when the questions fill fewer than two folds)."""
    folds = [fold_of(q) for q in qids]
    if len(set(folds)) < 2:
        return None
    gains = [0.0] * len(qids)
    for fold in set(folds):
        chosen, _ = _best(scores, [i for i, f in enumerate(folds) if f != fold])
        for i, f in enumerate(folds):
            if f == fold:
                gains[i] = scores[chosen][i] - scores[default][i]
    low, high = mean_interval(gains)
    return sum(gains) / len(gains), low, high


def routing_note(spec: StrategySpec, learned: RoutingChoice | None) -> str:
    """How rdr2 routes under `spec` (with `learned` applied) and why, in words (metadata)."""
    label = RoutingSetting.of(spec).label
    if learned is None:
        return f"{label}, as configured (learned routing off, or `answer_policy` never measured it)"
    return f"{label} ({learned.reason})" if learned.learned else f"{label}, as configured ({learned.reason})"


def routing_grid(choice: RoutingChoice) -> tuple[list[str], list[list[str]]]:
    """Every candidate's mean metric on the train questions (header, rows), the published and the
    default settings marked."""
    rows = [
        [
            setting.label,
            f"{mean:.3f}",
            "published" if setting == choice.setting else "default" if setting == choice.default else "",
        ]
        for setting, mean in choice.means
    ]
    return ["setting", f"{choice.metric} ({choice.questions} train questions)", ""], rows


def routing_problems(choice: RoutingChoice | None) -> list[str]:
    """What is wrong with published routing settings (empty: nothing; None, an older policy
    without them, is not wrong: asks route with the defaults): a setting no candidate measured, or
    settings other than the defaults without the rule's evidence for them."""
    if choice is None:
        return []
    problems = []
    measured = {setting for setting, _ in choice.means} | {choice.default}
    if choice.setting not in measured:
        problems.append(f"rdr2's published routing ({choice.setting.label}) is not a measured candidate")
    elif choice.learned and not earned(choice.questions, choice.interval, choice.cross_fitted):
        problems.append("rdr2's routing settings differ from the defaults without beating them")
    return problems
