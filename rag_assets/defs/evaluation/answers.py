"""`answers`: every strategy's answers to the evaluation questions, with their lineage.

Strategies (labels in `answers.strategy`): no-retrieval; retrieve-and-read with dense and with
hybrid search (rag-dense, rag-hybrid); RDR2 routed by each router kind — `rdr2` (the default kind,
`router`), `rdr2-encoder` and `rdr2-llm` (the trained routers `router_adapter` published in this
lineage), `rdr2-llm-rank` (the trained LLM's actions ranked by likelihood, not generated), `rdr2-similarity` (the untrained encoder), `rdr2-base` (the untrained LLM), and the
bounds `rdr2-oracle` (gold-aware ceiling) and `rdr2-hit-nodes` (the retrieved passages' nodes,
the floor); `rdr2-free` is `rdr2` without the evidence budget; ablations of the default router
rdr2-no-expand, rdr2-no-refuse, rdr2-no-structure. Every rdr2 row except `rdr2-free` gives the
reader at most the words rag-hybrid gave it for the same question (`evidence_budget`), so
evidence recall is compared at equal length. Test-time scaling rows re-run rdr2 over a grid of
expand iterations and of top-k documents. Strategies whose settings are identical (rdr2 and
rdr2-encoder, a grid point equal to rdr2) are computed once and stored under each label.
The generation-side rows `contregen`, `disco` and `disco-no-structure` (rag_assets/defs/evaluation/generation_config.py)
answer the first `generation_max_questions` questions and store their intermediate structures.

The retrieval-side rows: `rag-hybrid-rerank` (hybrid + the trained `passage_reranker`
in one LanceDB query), `rag-hybrid-rewrite` (hybrid on the LLM's rewrite of the question: with a
135M model it may hurt, and this row says by how much), `dota` (rewrite -> namespace routing over
every collection of the index -> hybrid + rerank -> aggregate the top passages -> read), and the
reorderings of the evidence: `rag-hybrid-edges` (edges-first), `rag-hybrid+r4` and `rdr2+r4` (the
learned `reorder_policy`), and `rdr2-rerank` (RDR2 whose first stage is hybrid + the trained
reranker: the documents routed and their lit nodes come from the reranked passages). A row whose
trained piece is missing is skipped with a note.

`rag-hybrid-extractive` and `rdr2-extractive` answer with the best sentence of the same evidence
(core/answering/extractive.py), no reader call. Every row is held to the relevance floor the
`answer_policy` asset published (upstream), as an ask is. For the collections `single_store`
names, rag-hybrid and rdr2 (generated and extractive) also answer each question within its own
document only, stored as '... (single store)' (core/evaluation/single_store_answers.py).
"""

import dataclasses
import time
from collections import Counter
from collections.abc import Sequence

import dagster as dg
from dagster_duckdb import DuckDBResource

from rag_assets.core.answering.policy.catalogue import BUDGET_SOURCE, answer_style, strategy_specs
from rag_assets.core.answering.policy.routing_choice import routing_note
from rag_assets.core.answering.policy.sessions import open_session
from rag_assets.core.answering.published import PublishedCollection
from rag_assets.core.answering.session import AnsweringSession
from rag_assets.core.answering.types import GENERATION_KINDS, AnswerOutcome, StrategySpec
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.engines.cache import CachingEngine
from rag_assets.core.evaluation.single_store_answers import SingleStoreRun, single_store_answers
from rag_assets.core.lineage import AnswerRecord, store_answers, utc_now
from rag_assets.core.store.question_table import load_question_rows
from rag_assets.defs.deployment import CATALOGUE_POOL, GPU_STEP_TAGS, TRANSIENT_RETRY
from rag_assets.defs.evaluation.answer_policy import answer_policy
from rag_assets.defs.evaluation.generation_config import generation_metadata
from rag_assets.defs.evaluation.strategy_config import AnswersConfig
from rag_assets.defs.index.namespace_router import namespace_router
from rag_assets.defs.index.passage_reranker import passage_reranker
from rag_assets.defs.metadata import counter_table, markdown_table
from rag_assets.defs.partitions import collection_partitions
from rag_assets.defs.routing.reorder_policy import reorder_policy
from rag_assets.defs.routing.router_adapter import router_adapter
from rag_assets.defs.routing.router_metrics import router_metrics
from rag_assets.events.served_answers import record_answers
from resources.embedder import EmbedderResource
from resources.llm import LLMResource
from resources.session_models import ResourceModels
from resources.vectors import VectorStoreResource

SOURCE = "evaluation"


def pick_questions(con, collection: str, split: str) -> tuple[list[Question], str, str | None]:
    """The questions of `split`, else of dev, else all; with the split used and a note on fallback."""
    for candidate in dict.fromkeys([split, "dev", ""]):
        questions = load_question_rows(con, collection, candidate or None)
        if questions:
            used = candidate or "all"
            note = None if candidate == split else f"split {split!r} has no questions: evaluated on {used!r}"
            return questions, used, note
    return [], split, f"collection {collection!r} has no questions: nothing to evaluate"


def runnable_specs(
    config: AnswersConfig, specs: dict[str, StrategySpec], session: AnsweringSession, notes: list[str]
) -> dict[str, StrategySpec]:
    """The configured strategies whose trained pieces were published (a note for each one skipped)."""
    wanted = {name: spec for name, spec in specs.items() if name in config.strategies}
    if session.published.llm_adapter is None and any(s.kind == "rdr2" and s.router == "llm" for s in wanted.values()):
        notes.append("no trained LLM router adapter: LLM-routed rows route with the base model (as rdr2-base)")
    skipped: dict[str, list[str]] = {}
    for name, spec in wanted.items():
        reason = session.missing_piece(spec)
        if reason:
            skipped.setdefault(reason, []).append(name)
    notes.extend(f"{reason}: {', '.join(names)} not run" for reason, names in skipped.items())
    if config.evidence_budget and BUDGET_SOURCE not in wanted:
        notes.append(f"{BUDGET_SOURCE} not among the strategies: rdr2's evidence is not budgeted")
    return {name: spec for name, spec in wanted.items() if not any(name in names for names in skipped.values())}


Outcomes = dict[tuple[str, str, int], tuple[StrategySpec, list[AnswerOutcome]]]


@dataclasses.dataclass
class StrategyRuns:
    """Runs strategies over the questions, each distinct setting once (rdr2 and rdr2-encoder, a
    grid point equal to rdr2 share their answers), budgeted rows reading the budget source's words."""

    config: AnswersConfig
    queries: list[str]
    session: AnsweringSession
    log: object
    outcomes: Outcomes = dataclasses.field(default_factory=dict)
    timings: list[tuple[str, float]] = dataclasses.field(default_factory=list)
    computed: dict[StrategySpec, list[AnswerOutcome]] = dataclasses.field(default_factory=dict)

    def run(self, spec: StrategySpec, label_suffix: str = "") -> list[AnswerOutcome]:
        key = dataclasses.replace(spec, name="")  # same settings, same answers: computed once
        if key in self.computed:
            return self.computed[key]
        budgets = None
        if spec.evidence_budget_from:
            source = self.outcomes.get((spec.evidence_budget_from, "", -1))
            budgets = [o.evidence_words for o in source[1]] if source else None
        started = time.perf_counter()
        asked = self.queries
        if spec.kind in GENERATION_KINDS and self.config.generation_max_questions:
            asked = asked[: self.config.generation_max_questions]  # the expensive rows: capped
        result = self.session.run(asked, spec, evidence_budgets=budgets)
        label = f"{spec.name} {label_suffix}".strip()
        self.timings.append((label, time.perf_counter() - started))
        self.log.info(f"{label}: {len(asked)} questions in {self.timings[-1][1]:.1f}s ({spec.knobs()})")
        self.computed[key] = result
        return result

    def run_all(self, specs: dict[str, StrategySpec], main: StrategySpec) -> Outcomes:
        """Every spec (the budget's source first, then back in config order) and the scaling grids."""
        for name in sorted(specs, key=lambda n: n != BUDGET_SOURCE):
            self.outcomes[(name, "", -1)] = (specs[name], self.run(specs[name]))
        self.outcomes = {(name, "", -1): self.outcomes[(name, "", -1)] for name in specs}
        for grid, values in (("expand_iterations", self.config.expand_grid), ("top_k", self.config.top_k_grid)):
            for value in dict.fromkeys(values):
                spec = dataclasses.replace(main, **{grid: value})
                self.outcomes[("rdr2", grid, value)] = (spec, self.run(spec, f"@ {grid}={value}"))
        return self.outcomes


def answer_records(
    con,
    session: AnsweringSession,
    outcomes: Outcomes,
    questions: list[Question],
    run_id: str,
    single: Sequence[SingleStoreRun] = (),
) -> list[AnswerRecord]:
    """One lineage record per (strategy run, question), with the versions the session records;
    the single store's runs after the shared store's."""
    created = utc_now()
    shared = [
        session.record(
            con,
            outcome,
            spec,
            source=SOURCE,
            run_id=run_id,
            qid=question.qid,
            grid=grid,
            grid_value=value,
            created_at=created,
        )
        for (_name, grid, value), (spec, results) in outcomes.items()
        for question, outcome in zip(questions, results)
    ]
    on_own = [
        session.record(con, outcome, run.spec, source=SOURCE, run_id=run_id, qid=question.qid, created_at=created)
        for run in single
        for question, outcome in zip(run.questions, run.outcomes, strict=True)
    ]
    return shared + on_own


@dg.asset(
    pool=CATALOGUE_POOL,
    retry_policy=TRANSIENT_RETRY,
    op_tags=GPU_STEP_TAGS,
    partitions_def=collection_partitions,
    deps=[
        "passage_index",
        "questions",
        "document_cards",
        router_adapter,
        router_metrics,
        passage_reranker,
        namespace_router,
        reorder_policy,
        answer_policy,
    ],
    group_name="evaluation",
    kinds={"python", "duckdb"},
    description="Every strategy's answers to the evaluation questions (no retrieval, retrieve-and-read "
    "dense/hybrid, RDR2 with each router kind — trained encoder and LLM routers, their untrained counterparts, "
    "the oracle ceiling and hit-nodes floor — its ablations and test-time scaling grids; ConTReGen and Disco-RAG "
    "with its ablation), each with its "
    "evidence, cited nodes, costs and versions; replaces the collection's evaluation rows atomically.",
)
def answers(
    context: dg.AssetExecutionContext,
    config: AnswersConfig,
    catalogue: DuckDBResource,
    embedder: EmbedderResource,
    vectors: VectorStoreResource,
    llm: LLMResource,
) -> dg.MaterializeResult:
    started = time.perf_counter()
    collection = context.partition_key
    with catalogue.get_connection() as con:
        questions, split, note = pick_questions(con, collection, config.split)
        if config.max_questions > 0:
            questions = questions[: config.max_questions]
        # the LanceDB version published with the passages (as `rag ask` reads it); grid points
        # repeat rdr2's prompts: replayed, their seconds charged back (core/engines/cache.py)
        models = ResourceModels(embedder, vectors, llm, replay=True)
        session = open_session(con, collection, models, gold=questions)
    published = session.published
    notes = _published_notes(published, note)
    style = answer_style(config.answer_style, questions)
    routing = config.settings().routing(published.routing_choice)  # rdr2's learned settings, unless off
    all_specs = strategy_specs(config.settings(), style, published.llm_adapter, routing=routing)
    specs = runnable_specs(config, all_specs, session, notes)
    for n in notes:
        context.log.warning(n)
    outcomes: Outcomes = {}
    runs = None
    if questions:
        specs = without_unrankable(specs, session, llm.backend, notes, context.log)
        runs = StrategyRuns(config, [q.query for q in questions], session, context.log)
        outcomes = runs.run_all(specs, all_specs["rdr2"])
    single = single_store_answers(session, questions, specs) if collection in config.single_store else []
    with catalogue.get_connection() as con:
        records = answer_records(con, session, outcomes, questions, context.run.run_id, single)
        store_answers(con, records, replace=(collection, SOURCE))
    record_answers(context.instance, records)  # each answer a `served_answers` event
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": len(records),
            "questions": len(questions),
            "split": split,
            "answer_style": style,
            "default_form": published.form_choice.note if published.form_choice else "not measured (`answer_policy`)",
            "rdr2_routing": routing_note(all_specs["rdr2"], routing),
            "strategies": dg.MetadataValue.md(counter_table("strategy", strategy_counts(records))),
            "router": config.router,
            "adapter_id": published.llm_adapter or "none (base model routes)",
            "encoder_adapter_id": published.routers["encoder"].model_id if "encoder" in published.routers else "none",
            **retrieval_metadata(outcomes, collection),
            "notes": dg.MetadataValue.md("\n".join(f"- {n}" for n in notes) or "none"),
            "seconds": round(time.perf_counter() - started, 1),
            **run_metadata(session.engine if questions else None, runs.timings if runs else []),
            **generation_metadata(
                config, {name: results for (name, grid, _), (_, results) in outcomes.items() if not grid}
            ),
            "index": dg.MetadataValue.json(published.index.index_info() if questions else {}),
            "sample": dg.MetadataValue.md(_sample_markdown(records)),
        }
    )


def _published_notes(published: PublishedCollection, note: str | None) -> list[str]:
    """The question pick's note, the published models' notes, and the index's when inconsistent."""
    notes = [*([note] if note else []), *published.notes]
    if not published.index.consistent:
        notes.append(published.index.note)
    return notes


def _sample_markdown(records: list[AnswerRecord]) -> str:
    """The first main-run answers (no grid points), as a table with their ids (the partitions of
    `served_answers`) and cited nodes."""
    return markdown_table(
        ["answer id", "strategy", "question", "answer", "cited nodes", "evidence words"],
        [
            (
                r.answer_id,
                r.strategy,
                r.question[:80],
                r.answer[:80],
                ", ".join(f"{d}#{n}" for d, n in zip(r.cited_doc_ids, r.cited_node_ids)) or "none",
                r.evidence_words,
            )
            for r in records
            if not r.grid
        ][:8],
    )


def without_unrankable(
    specs: dict[str, StrategySpec], session: AnsweringSession, backend: str, notes: list[str], log
) -> dict[str, StrategySpec]:
    """`specs` less the likelihood-ranked rows when the engine cannot score continuations (noted)."""
    ranked = [name for name, spec in specs.items() if spec.kind == "rdr2" and spec.router == "llm-rank"]
    if not ranked or session.can_rank():
        return specs
    notes.append(f"the {backend} backend cannot score continuations: {', '.join(ranked)} not run")
    log.warning(notes[-1])
    return {name: spec for name, spec in specs.items() if name not in ranked}


def strategy_counts(records: list[AnswerRecord]) -> Counter:
    return Counter(r.strategy if not r.grid else f"rdr2 @ {r.grid}={r.grid_value}" for r in records)


def run_metadata(engine: CachingEngine | None, timings: list[tuple[str, float]]) -> dict[str, object]:
    """How much generation the cache replayed, and each strategy run's seconds."""
    return {
        "generation_cache": (
            f"{engine.hits} replayed, {engine.misses} generated ({engine.replayed_seconds:.0f} s replayed)"
        )
        if engine
        else "unused",
        "seconds_per_strategy": dg.MetadataValue.md(
            markdown_table(["strategy run", "seconds"], [(k, round(v, 1)) for k, v in timings])
        ),
    }


def retrieval_metadata(outcomes: dict, collection: str) -> dict[str, object]:
    """Per retrieval-side row: how often the rewrite was kept, the namespace accuracy (this
    collection among the routed namespaces), the share of the index searched, search seconds."""
    rows = []
    for (name, grid, _), (spec, results) in outcomes.items():
        if grid or not (spec.rewrite or spec.route_namespaces or spec.rerank):
            continue
        info = [o.retrieval for o in results]
        routed = [i for i in info if "namespaces" in i]
        rewritten = [i for i in info if "kept_original" in i]
        rows.append(
            (
                name,
                f"{sum(not i['kept_original'] for i in rewritten)}/{len(rewritten)}" if rewritten else "-",
                round(sum(collection in i["namespaces"] for i in routed) / len(routed), 3) if routed else "-",
                round(sum(i["share_searched"] for i in routed) / len(routed), 3) if routed else "-",
                round(1000 * sum(i.get("search_seconds", 0.0) for i in info) / max(len(info), 1), 1),
            )
        )
    if not rows:
        return {}
    header = ["strategy", "rewrites used", "namespace accuracy", "share of index searched", "search ms"]
    return {"retrieval_side": dg.MetadataValue.md(markdown_table(header, rows))}
