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
The generation-side rows `contregen`, `disco` and `disco-no-structure` (rag_assets/generation.py)
answer the first `generation_max_questions` questions and store their intermediate structures.

The retrieval-side rows: `rag-hybrid-rerank` (hybrid + the trained `passage_reranker`
in one LanceDB query), `rag-hybrid-rewrite` (hybrid on the LLM's rewrite of the question: with a
135M model it may hurt, and this row says by how much), `dota` (rewrite -> namespace routing over
every collection of the index -> hybrid + rerank -> aggregate the top passages -> read), and the
reorderings of the evidence: `rag-hybrid-edges` (edges-first), `rag-hybrid+r4` and `rdr2+r4` (the
learned `reorder_policy`), and `rdr2-rerank` (RDR2 whose first stage is hybrid + the trained
reranker: the documents routed and their lit nodes come from the reranked passages). A row whose
trained piece is missing is skipped with a note.
"""

import dataclasses
import time
from collections import Counter
from pathlib import Path

import dagster as dg
from dagster_duckdb import DuckDBResource

from rag_assets.core.answering.strategies import run_strategy
from rag_assets.core.answering.types import GENERATION_KINDS, AnswerOutcome, RetrievalExtras, StrategySpec
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.engines.base import LLMEngine
from rag_assets.core.engines.cache import CachingEngine
from rag_assets.core.index.embedding import Embedder
from rag_assets.core.index.namespace_routing import QueryNamespaces
from rag_assets.core.index.reranking.folders import load_passage_reranker
from rag_assets.core.index.retrieval import search
from rag_assets.core.lineage import AnswerRecord, answer_versions, build_record, index_version, store_answers, utc_now
from rag_assets.core.routing.encoder_training import load_encoder_router
from rag_assets.core.routing.likelihood_router import LikelihoodRouter, engine_can_score
from rag_assets.core.routing.navigation import Router
from rag_assets.core.routing.scoring_router import HitNodesRouter, OracleRouter, ScoringRouter
from rag_assets.core.routing.teachers import SimilarityThresholds
from rag_assets.core.store.publication import index_pairing
from rag_assets.core.store.question_table import load_question_rows
from rag_assets.core.store.router_registry import AdapterRecord
from rag_assets.core.store.tree_tables import load_trees
from rag_assets.deployment import CATALOGUE_POOL, GPU_STEP_TAGS, TRANSIENT_RETRY
from rag_assets.generation import generation_metadata
from rag_assets.metadata import counter_table, markdown_table
from rag_assets.namespaces import namespace_router, upstream_namespace_router
from rag_assets.partitions import collection_partitions
from rag_assets.reorder import reorder_policy, upstream_reorder_policy
from rag_assets.reranker import passage_reranker, upstream_reranker
from rag_assets.router import router_adapter, upstream_routers
from rag_assets.router_metrics import router_metrics
from rag_assets.strategy_config import BUDGET_SOURCE, AnswersConfig, answer_style, strategy_specs
from resources.embedder import EmbedderResource
from resources.llm import LLMResource
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


@dataclasses.dataclass(frozen=True)
class TrainedPieces:
    """What the rows that need a trained piece read: the routers `router_adapter` published, the
    passage reranker, the namespace router and the reorder policy (None when missing)."""

    published: dict[str, AdapterRecord]
    similarity_thresholds: SimilarityThresholds
    reranker_path: Path | None
    namespaces: object | None
    policy: object | None


def runnable_strategies(
    config: AnswersConfig, pieces: TrainedPieces, piece_notes: dict[str, str], notes: list[str]
) -> list[str]:
    """The configured strategies whose trained pieces exist (a note for each one skipped)."""
    adapter = pieces.published.get("llm")
    specs = strategy_specs(config, "short", adapter.adapter_id if adapter else None)
    wanted = [name for name in specs if name in config.strategies]
    # the rows that would route with the trained LLM adapter if there were one (rdr2-base never does)
    probe = "<adapter>"
    wants_adapter = [n for n, s in strategy_specs(config, "short", probe).items() if n in wanted and s.adapter == probe]
    if adapter is None and wants_adapter:
        notes.append("no trained LLM router adapter: LLM-routed rows route with the base model (as rdr2-base)")
    for missing, needs, note in (
        ("encoder" not in pieces.published, lambda s: s.router == "encoder", "no trained encoder router"),
        (pieces.reranker_path is None, lambda s: s.rerank, piece_notes["reranker"]),
        (pieces.namespaces is None, lambda s: s.route_namespaces, piece_notes["namespaces"]),
        (pieces.policy is None, lambda s: s.reorder == "learned", piece_notes["policy"]),
    ):
        skipped = [n for n in wanted if missing and needs(specs[n])]
        if skipped:
            notes.append(f"{note}: {', '.join(skipped)} not run")
            wanted = [n for n in wanted if n not in skipped]
    if config.evidence_budget and BUDGET_SOURCE not in wanted:
        notes.append(f"{BUDGET_SOURCE} not among the strategies: rdr2's evidence is not budgeted")
    return wanted


def evaluation_routers(
    model: Embedder,
    questions: list[Question],
    thresholds: SimilarityThresholds,
    published: dict[str, AdapterRecord],
    engine: LLMEngine | None,
) -> dict[str, Router]:
    """Every non-generating router kind a strategy may name: the untrained similarity scorer, the
    oracle ceiling (from `questions`' gold labels), the hit-nodes floor, the trained encoder when
    published and, when `engine` can score continuations, the likelihood-ranked LLM."""
    routers: dict[str, Router] = {
        "similarity": ScoringRouter(model, thresholds, kind="similarity", contextual=False),
        "oracle": OracleRouter(questions),
        "hit-nodes": HitNodesRouter(),
    }
    if engine is not None and engine_can_score(engine):
        routers["llm-rank"] = LikelihoodRouter(engine)
    if "encoder" in published:
        routers["encoder"] = load_encoder_router(Path(published["encoder"].path), device=model.device)
    return routers


Outcomes = dict[tuple[str, str, int], tuple[StrategySpec, list[AnswerOutcome]]]


@dataclasses.dataclass
class StrategyRuns:
    """Runs strategies over the questions, each distinct setting once (rdr2 and rdr2-encoder, a
    grid point equal to rdr2 share their answers), budgeted rows reading the budget source's words."""

    config: AnswersConfig
    queries: list[str]
    run_strategy_kwargs: dict
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
        result = run_strategy(asked, spec, evidence_budgets=budgets, **self.run_strategy_kwargs)
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
    outcomes: Outcomes,
    questions: list[Question],
    *,
    collection: str,
    run_id: str,
    index_info: dict | None,
    engine: LLMEngine,
    embedder_id: str,
    router_ids: dict[str, str],
    reranker_id: str | None,
    policy_id: str | None,
) -> list[AnswerRecord]:
    """One lineage record per (strategy run, question): its versions (index, router, reader,
    embedder, retrieval side) and the knobs it ran with."""
    created = utc_now()
    records: list[AnswerRecord] = []
    for (_name, grid, value), (spec, results) in outcomes.items():
        router_id = router_ids.get("encoder") if spec.router == "encoder" else spec.adapter
        router_model = None
        if spec.kind == "rdr2":
            router_model = {
                "llm": f"{engine.model_id}+{spec.adapter}" if spec.adapter else engine.model_id,
                "llm-rank": f"{engine.model_id}+{spec.adapter} (ranked)" if spec.adapter else engine.model_id,
                "encoder": router_id,
                "similarity": embedder_id,
            }.get(spec.router, spec.router)
        for question, outcome in zip(questions, results):
            versions = answer_versions(
                con,
                collection,
                outcome,
                index=index_info,
                adapter_id=router_id,
                router_model=router_model,
                reader_model=engine.model_id,
                embedder=embedder_id,
            )
            if outcome.retrieval:  # the query searched (and its rewrite), namespaces, order
                versions["retrieval"] = outcome.retrieval
                if spec.rerank and reranker_id is not None:
                    versions["retrieval"]["reranker"] = reranker_id
                if spec.reorder == "learned" and policy_id is not None:
                    versions["retrieval"]["reorder_policy"] = policy_id
            records.append(
                build_record(
                    outcome,
                    spec,
                    collection=collection,
                    source=SOURCE,
                    versions=versions,
                    run_id=run_id,
                    qid=question.qid,
                    grid=grid,
                    grid_value=value,
                    created_at=created,
                )
            )
    return records


@dg.asset(
    pool=CATALOGUE_POOL,
    retry_policy=TRANSIENT_RETRY,
    op_tags=GPU_STEP_TAGS,
    partitions_def=collection_partitions,
    deps=[
        "passage_index",
        "questions",
        router_adapter,
        router_metrics,
        passage_reranker,
        namespace_router,
        reorder_policy,
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
    model = embedder.get()
    with catalogue.get_connection() as con:
        # the LanceDB version published with the catalogue's passages (as `rag ask` reads it): a
        # concurrent collection's sync can never hand this run a half-written table
        pairing = index_pairing(con, collection)
        questions, split, note = pick_questions(con, collection, config.split)
        published, similarity_thresholds, router_notes = upstream_routers(context, con)
        trees = {doc_id: nodes for doc_id, (nodes, _) in load_trees(con, collection).items()}
    if config.max_questions > 0:
        questions = questions[: config.max_questions]
    index = vectors.index(model).pin(pairing.publication.version if pairing.publication else None)
    notes = ([note] if note else []) + router_notes + ([] if pairing.consistent else [pairing.describe()])
    reranker_path, note_reranker = upstream_reranker(context)
    namespaces, note_namespaces = upstream_namespace_router(context)
    policy, note_policy = upstream_reorder_policy(context)
    pieces = TrainedPieces(published, similarity_thresholds, reranker_path, namespaces, policy)
    piece_notes = {"reranker": note_reranker, "namespaces": note_namespaces, "policy": note_policy}
    wanted = runnable_strategies(config, pieces, piece_notes, notes)
    for n in notes:
        context.log.warning(n)

    adapter = published.get("llm")
    style = answer_style(config.answer_style, questions)
    all_specs = strategy_specs(config, style, adapter.adapter_id if adapter else None)
    specs = {name: all_specs[name] for name in wanted}
    outcomes: Outcomes = {}
    runs = None
    engine = None
    reranker = None
    router_ids = {kind: record.adapter_id for kind, record in published.items()}
    if questions:
        # Grid points repeat most prompts of the main rdr2 run (greedy: same output): replayed,
        # with their seconds charged back to each strategy (core/engines/cache.py).
        engine = CachingEngine(llm.engine({adapter.adapter_id: Path(adapter.path)} if adapter else None))
        routers = evaluation_routers(model, questions, similarity_thresholds, published, engine)
        ranked = [name for name, spec in specs.items() if spec.router == "llm-rank" and "llm-rank" not in routers]
        if ranked:
            notes.append(f"the {llm.backend} backend cannot score continuations: {', '.join(ranked)} not run")
            context.log.warning(notes[-1])
            specs = {name: spec for name, spec in specs.items() if name not in ranked}
        reranker = load_passage_reranker(reranker_path, device=model.device) if reranker_path else None

        def retrieve(query: str, mode: str, k: int, *, rerank: bool = False, collections: list[str] | None = None):
            # routed namespaces may name any collection of the index; otherwise this one
            return search(
                index,
                model,
                query,
                mode=mode,
                k=k,
                collections=collections or [collection],
                reranker=reranker if rerank else None,
            )

        extras = RetrievalExtras(namespaces=QueryNamespaces(namespaces, model) if namespaces else None, policy=policy)
        shared = {"retrieve": retrieve, "trees": trees, "engine": engine, "routers": routers, "extras": extras}
        runs = StrategyRuns(config, [q.query for q in questions], shared, context.log)
        outcomes = runs.run_all(specs, all_specs["rdr2"])

    with catalogue.get_connection() as con:
        index_info = index_version(index, collection) if questions else None
        records = answer_records(
            con,
            outcomes,
            questions,
            collection=collection,
            run_id=context.run.run_id,
            index_info=index_info,
            engine=engine,
            embedder_id=model.model_id,
            router_ids=router_ids,
            reranker_id=reranker.reranker_id if reranker is not None else None,
            policy_id=policy.policy_id if policy is not None else None,
        )
        store_answers(con, records, replace=(collection, SOURCE))

    per_strategy = Counter(r.strategy if not r.grid else f"rdr2 @ {r.grid}={r.grid_value}" for r in records)
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": len(records),
            "questions": len(questions),
            "split": split,
            "answer_style": style,
            "strategies": dg.MetadataValue.md(counter_table("strategy", per_strategy)),
            "router": config.router,
            "adapter_id": adapter.adapter_id if adapter else "none (base model routes)",
            "encoder_adapter_id": router_ids.get("encoder", "none"),
            **retrieval_metadata(outcomes, collection),
            "notes": dg.MetadataValue.md("\n".join(f"- {n}" for n in notes) or "none"),
            "seconds": round(time.perf_counter() - started, 1),
            **run_metadata(engine, runs.timings if runs else []),
            **generation_metadata(
                config, {name: results for (name, grid, _), (_, results) in outcomes.items() if not grid}
            ),
            "index": dg.MetadataValue.json(index_info or {}),
            "sample": dg.MetadataValue.md(
                markdown_table(
                    ["strategy", "question", "answer", "evidence words"],
                    [(r.strategy, r.question[:80], r.answer[:80], r.evidence_words) for r in records if not r.grid][:8],
                )
            ),
        }
    )


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
