"""The evidence a router gives the reader on held-out questions, measured as the evaluation does.

Choosing a router setting (the encoder's section weight) by a proxy of what the reader gets
picked the wrong one: per-view average precision of the gold nodes preferred no smoothing, and a
pooled gold-node recall at fixed word budgets preferred a weight whose routed evidence was lower.
So the setting is judged by the measure itself, on the validation fold's real questions: retrieve
as rdr2 does, route with the candidate router through `gather_evidence`, cut each question's
evidence to the words retrieve-and-read gave it, and score the set's evidence metric (evidence
recall, section hit or passage hit: `primary_evidence_metric`). The validation questions are the
ones the thresholds are calibrated on, never the dev/test questions the report evaluates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from rag_assets.core.answering.strategies import GatheredEvidence, gather_evidence
from rag_assets.core.answering.types import Retrieve, StrategySpec
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.evaluation.scoring import evidence_scores, primary_evidence_metric
from rag_assets.core.index.retrieval import SearchHit
from rag_assets.core.routing.navigation import Router


def evidence_metrics(gathered: GatheredEvidence, question: Question) -> dict[str, float]:
    """The evidence figures of one question's gathered evidence (those its gold labels allow, as
    the report scores them) and its words."""
    cited = gathered.citations
    places = [(c.doc_id, c.pages) for c in cited]
    scores = evidence_scores(
        gathered.evidence, [c.text for c in cited], [c.heading_path for c in cited], question, places
    )
    return {"words": float(gathered.words), **scores}


@dataclass(frozen=True)
class HeldOutEvidence:
    """Held-out questions, the words retrieve-and-read gave each (the budget a routed row is cut
    to) and how to route them; `score(router)` is the mean of `metric` over the questions that
    have it, `baseline` retrieve-and-read's."""

    questions: Sequence[Question]
    budgets: Sequence[int]
    metric: str
    routed: StrategySpec
    retrieve: Retrieve
    trees: Mapping[str, Sequence[TreeNode]]
    baseline: float = 0.0

    def __post_init__(self) -> None:
        if len(self.budgets) != len(self.questions):
            raise ValueError(f"{len(self.budgets)} budgets for {len(self.questions)} questions")
        if self.routed.kind != "rdr2" or not self.routed.router:
            raise ValueError(f"strategy {self.routed.name!r} does not route with a named router")

    def score(self, router: Router, fill_order: str | None = None) -> float:
        """`router`'s mean evidence metric; `fill_order`: the budget fill's order (None: the spec's)."""
        return self.measure(router, fill_order=fill_order)[0]

    def own_choices(self, router: Router) -> tuple[float, float]:
        """`router`'s mean evidence metric on its own choices (no budget fill, still cut to each
        question's budget) and their words as a share of the budgets'."""
        return self.measure(router, fill_budget=False)

    def measure(
        self, router: Router, *, fill_budget: bool | None = None, fill_order: str | None = None
    ) -> tuple[float, float]:
        """`router`'s mean evidence metric and its words as a share of the budgets' (`fill_budget`,
        `fill_order`: None = the spec's)."""
        routed = self.routed
        if fill_budget is not None:
            routed = replace(routed, fill_budget=fill_budget)
        if fill_order is not None:
            routed = replace(routed, fill_order=fill_order)
        figures, words = self.per_question(router, routed)
        known = [f for f in figures if f is not None]
        share = words / max(sum(self.budgets), 1)
        return (sum(known) / len(known) if known else 0.0), share

    def per_question(self, router: Router, routed: StrategySpec | None = None) -> tuple[list[float | None], int]:
        """Each question's evidence metric (None where its gold labels allow none) when `routed`
        (None: the spec held) routes with `router`, and the words gathered in all."""
        gathered = gather_evidence(
            [q.query for q in self.questions],
            routed or self.routed,
            retrieve=self.retrieve,
            trees=self.trees,
            routers={(routed or self.routed).router: router},
            evidence_budgets=list(self.budgets),
        )
        figures = [evidence_metrics(g, q).get(self.metric) for g, q in zip(gathered, self.questions)]
        return figures, sum(g.words for g in gathered)


def remembered(retrieve: Retrieve) -> Retrieve:
    """`retrieve` with its results kept per call (the index is pinned while a router is judged)."""
    seen: dict[tuple, Sequence[SearchHit]] = {}

    def search_once(query: str, mode: str, k: int, **options: object) -> Sequence[SearchHit]:
        key = (query, mode, k, tuple(sorted((name, repr(value)) for name, value in options.items())))
        if key not in seen:
            seen[key] = retrieve(query, mode, k, **options)
        return seen[key]

    return search_once


def held_out_evidence(
    questions: Sequence[Question],
    *,
    baseline: StrategySpec,
    routed: StrategySpec,
    retrieve: Retrieve,
    trees: Mapping[str, Sequence[TreeNode]],
    choose_metric: Callable[[Iterable[str]], str | None] = primary_evidence_metric,
) -> HeldOutEvidence | None:
    """Gather `baseline`'s (retrieve-and-read's) evidence for `questions` once: its words are the
    budgets, and the evidence metric is the one `choose_metric` picks (the set's primary one by
    default) among those the questions' gold labels allow. None when no question has a gold label
    any evidence metric can score."""
    if not questions:
        return None
    retrieve = remembered(retrieve)  # every weight judged routes the same questions: search once
    gathered = gather_evidence([q.query for q in questions], baseline, retrieve=retrieve, trees=trees)
    figures = [evidence_metrics(g, q) for g, q in zip(gathered, questions)]
    metric = choose_metric({name for f in figures for name in f if name != "words"})
    if metric is None:
        return None
    values = [f[metric] for f in figures if metric in f]
    baseline = sum(values) / len(values)
    return HeldOutEvidence(questions, [g.words for g in gathered], metric, routed, retrieve, trees, baseline)
