"""Evidence without the reader: retrieve-and-read against RDR2 with every router kind, on every
evaluation question, with 95% bootstrap intervals and paired differences.

What the reader would see is measured directly (passage hit, evidence recall, section hit, words:
`held_out_evidence.evidence_metrics`), so no reader call is made and every dev + test question
can be evaluated in seconds each. Each router kind is measured twice:

- budget filled (`rdr2-<kind>`): routed evidence cut to the words rag-hybrid gave the same
  question, the unused words filled with the router's best-scored unselected nodes, so quality is
  compared at equal length;
- own choices (`rdr2-<kind> own`): the same cap, no fill: only the nodes the router answered
  with, which is what RDR2 claims is the more precise evidence (fewer words, same or better hit).

Intervals are percentile bootstraps of the mean over questions (`routing.metrics.mean_interval`,
fixed seed); a paired difference is the bootstrap of the per-question difference against the
baseline, over the questions where both have the metric, so a difference whose interval lies
above 0 is a win on these questions, not a coincidence of which questions each row scored.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rag_assets.core.answering.strategies import gather_evidence
from rag_assets.core.answering.types import Retrieve, StrategySpec
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.evaluation.held_out_evidence import evidence_metrics, remembered
from rag_assets.core.evaluation.scoring import same_document
from rag_assets.core.routing.metrics import mean_interval
from rag_assets.core.routing.navigation import Router

# Router kinds measured by default: the trained encoder, its untrained counterpart, the floor
# (the retrieved passages' own nodes) and the gold-aware ceiling. The LLM kinds generate (or
# score) every view with the reader-sized model: asked for by name.
DEFAULT_KINDS = ("encoder", "similarity", "hit-nodes", "oracle")
LLM_KINDS = ("llm", "llm-rank")
EVIDENCE_KINDS = (*DEFAULT_KINDS, *LLM_KINDS)
QUALITY_METRICS = ("passage_hit", "evidence_recall", "section_hit", "page_hit")
OWN_SUFFIX = " own"
SINGLE_SUFFIX = " (single store)"  # searched and routed within the question's own document
NAMED_SUFFIX = " (named documents)"  # searched and routed within the documents the question's file names name
ALL_SUFFIX = " (all documents)"  # searched and routed in every document: no steer by the cards


@dataclass(frozen=True, slots=True)
class StoreScope:
    """Where each question is searched (and so routed): `documents` (qid -> doc ids; a question
    absent from it is searched in the whole store unless `only_scoped`), rows named with `suffix`."""

    documents: Mapping[str, Sequence[str]]
    suffix: str
    only_scoped: bool

    @classmethod
    def single_store(cls, documents: Mapping[str, Sequence[str]]) -> StoreScope:
        """Each question within its own document; questions without one are left out."""
        return cls(documents, SINGLE_SUFFIX, True)

    @classmethod
    def named(cls, documents: Mapping[str, Sequence[str]]) -> StoreScope:
        """Each question within the documents it names; one that names none, in the whole store."""
        return cls(documents, NAMED_SUFFIX, False)

    @classmethod
    def every_document(cls) -> StoreScope:
        """Each question in the whole store, whatever the documents' cards say (searched unsteered)."""
        return cls({}, ALL_SUFFIX, False)


@dataclass(frozen=True, slots=True)
class EvidenceRow:
    """One question's evidence under one strategy: the metrics its gold labels allow, its words and
    its share of the strategy's batch seconds."""

    strategy: str
    router: str  # '' for retrieve-and-read
    filled: bool  # budget filled (False: the router's own choices, or no router)
    qid: str
    metrics: dict[str, float]  # the QUALITY_METRICS the question's gold labels allow
    words: int
    seconds: float


@dataclass(frozen=True, slots=True)
class Estimate:
    """A mean over `n` questions with its 95% bootstrap interval."""

    mean: float
    low: float
    high: float
    n: int

    def text(self, *, signed: bool = False, whole: bool = False) -> str:
        """`0.708 (0.583–0.833)`; signed for differences, whole numbers for words."""
        number = "{:+.0f}" if signed and whole else "{:.0f}" if whole else "{:+.3f}" if signed else "{:.3f}"
        return f"{number.format(self.mean)} ({number.format(self.low)}–{number.format(self.high)})"

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0


def estimate(values: Sequence[float]) -> Estimate:
    low, high = mean_interval(list(values))
    mean = sum(values) / len(values) if values else 0.0
    return Estimate(mean, low, high, len(values))


def own_documents(questions: Sequence[Question], doc_ids: Sequence[str]) -> dict[str, list[str]]:
    """qid -> the doc ids of the question's own document (its `gold_doc`: a doc id or file name),
    for the questions that name one found among `doc_ids`."""
    found = {q.qid: [d for d in doc_ids if same_document(d, q.gold_doc)] for q in questions if q.gold_doc}
    return {qid: ids for qid, ids in found.items() if ids}


def within_documents(retrieve: Retrieve, documents: Mapping[str, list[str]]) -> Retrieve:
    """`retrieve` searching each query's own documents only (`documents`: query -> doc ids)."""

    def search(query: str, mode: str, k: int, **options: object) -> Sequence:
        return retrieve(query, mode, k, **{**options, "documents": documents.get(query) or None})

    return search


def routed_label(kind: str, filled: bool) -> str:
    return f"rdr2-{kind}" + ("" if filled else OWN_SUFFIX)


def measure_evidence(
    questions: Sequence[Question],
    *,
    baseline: StrategySpec,
    routed: StrategySpec,
    kinds: Sequence[str],
    routers: Mapping[str, Router],
    retrieve: Retrieve,
    trees: Mapping[str, Sequence[TreeNode]],
    engine: object | None = None,
    fills: Sequence[bool] = (True, False),
    scope: StoreScope | None = None,
) -> list[EvidenceRow]:
    """`baseline`'s evidence for every question (its words are the budgets), then `routed` with
    each router kind of `kinds`, budget filled and on its own choices (`fills`: which of the two).
    The first-stage search is done once per query and shared, so a routed row's seconds are
    routing only. `scope`: every question searched (and so routed) within the documents it gives
    (the single store, or the documents each question names), the rows named with its suffix."""
    if routed.kind != "rdr2":
        raise ValueError(f"strategy {routed.name!r} does not route: its kind is {routed.kind!r}")
    suffix = scope.suffix if scope is not None else ""
    if scope is not None:
        if scope.only_scoped:
            questions = [q for q in questions if scope.documents.get(q.qid)]
        retrieve = within_documents(retrieve, {q.query: list(scope.documents.get(q.qid, ())) for q in questions})
        baseline = dataclasses.replace(baseline, name=baseline.name + suffix)
        routed = dataclasses.replace(routed, name=routed.name + suffix)
    queries = [q.query for q in questions]
    retrieve = remembered(retrieve)
    rows: list[EvidenceRow] = []

    def measure(spec: StrategySpec, budgets: Sequence[int] | None) -> list[int]:
        started = time.perf_counter()
        gathered = gather_evidence(
            queries, spec, retrieve=retrieve, trees=trees, engine=engine, routers=routers, evidence_budgets=budgets
        )
        seconds = (time.perf_counter() - started) / max(len(queries), 1)
        for g, q in zip(gathered, questions):
            figures = evidence_metrics(g, q)
            words = int(figures.pop("words"))
            router = spec.router if spec.kind == "rdr2" else ""
            filled = spec.kind == "rdr2" and spec.fill_budget
            rows.append(EvidenceRow(spec.name, router, filled, q.qid, figures, words, seconds))
        return [g.words for g in gathered]

    budgets = measure(baseline, None)
    if routed.top_k > 0:  # search once for every router kind (rdr2 searches passages_per_query)
        for query in queries:
            retrieve(query, routed.retrieval_mode, max(routed.passages_per_query, routed.top_k))
    for kind in kinds:
        for filled in fills:
            spec = dataclasses.replace(
                routed,
                name=routed_label(kind, filled) + suffix,
                router=kind,
                adapter=routed.adapter if kind in LLM_KINDS else None,
                fill_budget=filled,
                evidence_budget_from=None,
            )
            measure(spec, budgets)
    return rows


@dataclass(frozen=True, slots=True)
class EvidenceSummary:
    """Per strategy: each metric's mean with its interval (`words` too), the paired difference
    against the baseline, and the batch seconds per question."""

    questions: int
    baseline: str
    metrics: list[str]  # the QUALITY_METRICS some question has, in table order
    rows: dict[str, dict[str, Estimate]] = field(default_factory=dict)
    differences: dict[str, dict[str, Estimate]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def words_share(self, strategy: str) -> float:
        """The strategy's mean words as a share of the baseline's it is compared with."""
        base = self.rows.get(compared_with(strategy, self.baseline), self.rows[self.baseline])["words"].mean
        return self.rows[strategy]["words"].mean / base if base else 0.0

    def as_dict(self) -> dict:
        """What summary.json holds: numbers only (mean, low, high, n per metric)."""

        def numbers(table: Mapping[str, Mapping[str, Estimate]]) -> dict:
            return {s: {m: dataclasses.asdict(e) for m, e in values.items()} for s, values in table.items()}

        return {
            "questions": self.questions,
            "baseline": self.baseline,
            "rows": numbers(self.rows),
            "differences": numbers(self.differences),
            "seconds_per_question": dict(self.seconds),
        }


def scope_baseline(strategy: str, baseline: str) -> str:
    """The baseline a row is budgeted by and compared with: `baseline` searched in the same scope
    (a single-store row's is the single-store rag-hybrid)."""
    suffix = next((s for s in (SINGLE_SUFFIX, NAMED_SUFFIX, ALL_SUFFIX) if strategy.endswith(s)), "")
    return baseline + suffix


def compared_with(strategy: str, baseline: str) -> str:
    """What a row's paired differences are against: its scope's baseline; the scope's baseline
    itself against the whole store's (what searching in the scope gains)."""
    own = scope_baseline(strategy, baseline)
    return baseline if own == strategy else own


def summarise_evidence(rows: Sequence[EvidenceRow], baseline: str = "rag-hybrid") -> EvidenceSummary | None:
    """Means, intervals and paired differences against `baseline` in the row's own scope (None
    without rows or without the baseline's rows)."""
    by_strategy: dict[str, dict[str, EvidenceRow]] = {}
    for row in rows:
        by_strategy.setdefault(row.strategy, {})[row.qid] = row
    if baseline not in by_strategy:
        return None
    present = {m for row in rows for m in row.metrics}
    metrics = [m for m in QUALITY_METRICS if m in present]
    summary = EvidenceSummary(len({row.qid for row in rows}), baseline, metrics)
    for strategy, answered in by_strategy.items():
        values = {m: [r.metrics[m] for r in answered.values() if m in r.metrics] for m in metrics}
        summary.rows[strategy] = {m: estimate(v) for m, v in values.items() if v}
        summary.rows[strategy]["words"] = estimate([float(r.words) for r in answered.values()])
        summary.seconds[strategy] = sum(r.seconds for r in answered.values()) / len(answered)
        if strategy == baseline:
            continue
        base = by_strategy.get(compared_with(strategy, baseline), {})
        paired: dict[str, list[float]] = {m: [] for m in (*metrics, "words")}
        for qid, row in answered.items():
            other = base.get(qid)
            if other is None:
                continue
            for m in metrics:
                if m in row.metrics and m in other.metrics:
                    paired[m].append(row.metrics[m] - other.metrics[m])
            paired["words"].append(float(row.words - other.words))
        summary.differences[strategy] = {m: estimate(v) for m, v in paired.items() if v}
    return summary


METRIC_HEADERS = {
    "passage_hit": "passage hit",
    "evidence_recall": "evidence recall",
    "section_hit": "section hit",
    "page_hit": "page hit",
}


def evidence_table(summary: EvidenceSummary) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the report's evidence table: each metric with its interval, words and
    their share of the baseline's, the paired differences against the baseline, seconds."""
    header = ["strategy", *(f"{METRIC_HEADERS[m]} (95% CI)" for m in summary.metrics), "words (95% CI)"]
    header += ["words vs " + summary.baseline]
    header += [f"Δ {METRIC_HEADERS[m]} vs {summary.baseline} (95% CI)" for m in summary.metrics]
    header += ["s/question"]
    body: list[list[str]] = []
    for strategy, values in summary.rows.items():
        diffs = summary.differences.get(strategy, {})
        row = [strategy]
        row += [values[m].text() if m in values else "" for m in summary.metrics]
        row += [values["words"].text(whole=True), f"{summary.words_share(strategy):.0%}"]
        row += [diffs[m].text(signed=True) if m in diffs else "" for m in summary.metrics]
        row += [f"{summary.seconds[strategy]:.3f}"]
        body.append(row)
    return header, body


def evidence_title(summary: EvidenceSummary, split: str) -> str:
    return (
        f"Evidence without the reader: all {summary.questions} {split} questions "
        f"({summary.baseline} against RDR2 with each router kind)"
    )


def evidence_footnote(summary: EvidenceSummary) -> str:
    return (
        f"rdr2-<kind>: routed evidence cut to the words {summary.baseline} gave the same question, unused words "
        "filled with the router's best-scored unselected nodes; rdr2-<kind> own: the same cap, no fill (the "
        "router's own answer choices; the trained encoder's: every node within the margin it calibrated of the "
        "question's best node, when it has one). Intervals: 95% percentile bootstrap over questions (fixed seed); Δ: the "
        f"paired per-question difference against {summary.baseline} (a single-store or named-documents "
        f"row: against {summary.baseline} searched in the same scope; that row against the whole store's). "
        "s/question: batch seconds per question "
        "(routing only for rdr2 rows: the first-stage search is shared)."
    )


def evidence_problems(rows: Sequence[EvidenceRow], baseline: str = "rag-hybrid") -> list[str]:
    """What makes stored evidence rows untrustworthy: no baseline, a strategy missing questions
    the baseline has, a routed row over the baseline's words for a question (the cap broken), a
    metric outside [0, 1]. Scoped rows (single store, named documents, every document) are held
    to their scope's baseline."""
    by_strategy: dict[str, dict[str, EvidenceRow]] = {}
    for row in rows:
        by_strategy.setdefault(row.strategy, {})[row.qid] = row
    if baseline not in by_strategy:
        return [f"no {baseline} rows: nothing to compare against"]
    problems: list[str] = []
    for strategy, answered in by_strategy.items():
        # a scoped row is budgeted by, and covers the questions of, the baseline of its scope
        own = scope_baseline(strategy, baseline)
        if own not in by_strategy:
            problems.append(f"{strategy}: no {own} rows to compare against")
            continue
        base = by_strategy[own]
        missing = sorted(set(base) - set(answered))
        if missing:
            problems.append(f"{strategy}: {len(missing)} of {len(base)} questions missing (e.g. {missing[0]})")
        over = [q for q, r in answered.items() if r.router and q in base and r.words > base[q].words]
        if over:
            problems.append(f"{strategy}: {len(over)} questions over {own}'s words (e.g. {over[0]})")
        bad = [f"{q}.{m}={v}" for q, r in answered.items() for m, v in r.metrics.items() if not 0.0 <= v <= 1.0]
        if bad:
            problems.append(f"{strategy}: metrics outside [0, 1]: {', '.join(bad[:3])}")
    return problems
