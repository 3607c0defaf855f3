"""`router_metrics`: how well each router kind routes the views of every evaluation question (all
dev + test questions: no router trained on them) against its untrained counterpart (encoder vs
similarity on every view, LLM adapter vs base model on the first few), scored against the
gold-derived oracle's labels (core/routing/evaluation_views.py) with the routers `router_adapter`
published, with 95% bootstrap intervals over questions. A collection without dev/test questions
is scored on the routing validation fold against its teacher's labels, as the title says."""

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pyarrow as pa
from dagster_duckdb import DuckDBResource
from pydantic import Field

from rag_assets.core.answering.published import load_published
from rag_assets.core.answering.session import AnsweringSession
from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.engines.base import LLMEngine
from rag_assets.core.routing.evaluation_views import (
    EVALUATION_SPLITS,
    ViewKnobs,
    evaluation_views,
    resolve_knobs,
    trained_evaluation_splits,
    views_title,
)
from rag_assets.core.routing.held_out_routing import (
    RoutedSample,
    load_routing_samples,
    route_samples,
    route_samples_with,
    score_routed,
)
from rag_assets.core.routing.metrics import INTERVAL_LEVEL, INTERVAL_RATES, RoutingGold, RoutingScores
from rag_assets.core.routing.navigation import RoutingKnobs
from rag_assets.core.routing.samples import RoutingSample
from rag_assets.core.store.collections import replace_collection
from rag_assets.core.store.published_models import PublishedModel
from rag_assets.core.store.question_table import load_question_rows
from rag_assets.core.store.routing_tables import load_view_settings
from rag_assets.core.store.schemas import ROUTER_COUNT_COLUMNS, ROUTER_INTERVAL_COLUMNS
from rag_assets.core.store.tree_tables import load_trees
from rag_assets.defs.deployment import CATALOGUE_POOL, GPU_STEP_TAGS, TRANSIENT_RETRY
from rag_assets.defs.metadata import fenced, markdown_table, table_metadata
from rag_assets.defs.partitions import collection_partitions
from rag_assets.defs.routing.router_adapter import router_adapter
from rag_assets.defs.routing.routing_data import RoutingDataConfig
from resources.embedder import EmbedderResource
from resources.llm import BaseModelResource, LLMResource
from resources.session_models import ResourceModels
from resources.vectors import VectorStoreResource

INTERVAL_UNIT = "questions (the views of one question are resampled together: they succeed or fail together)"


class RouterMetricsConfig(dg.Config):
    max_samples: int = Field(
        default=4,
        ge=0,
        description="Views the LLM routers score (the first by subtree id, a content hash: spread over the "
        "questions); keeps CPU runs short. The encoder and similarity routers score every view.",
    )
    max_new_tokens: int = Field(default=48, ge=8, le=512, description="LLM router output tokens.")
    constrained: bool = Field(
        default=True,
        description="Decode the LLM router under each view's action grammar, as RDR2 routes (expelled/collapsed "
        "are then 0 by construction); False measures the free-running model as the paper's Table 4 does.",
    )
    # How the dev + test views are built; unset: as routing_subtrees built the training views.
    top_docs: int | None = Field(default=None, ge=1, le=50, description="Retrieved documents per question.")
    passages_per_query: int | None = Field(
        default=None, ge=1, le=500, description="First-stage passages retrieved per question."
    )
    expansion_views: int | None = Field(
        default=None, ge=0, le=10, description="Expansion views per retrieved document."
    )
    token_budget: int | None = Field(default=None, ge=64, le=32768, description="Router input per view, in tokens.")


METRIC_COLUMNS = (
    "samples",
    "ans_f1",
    "exp_pre",
    "ref_acc",
    "expelled_per_output",
    "collapsed_rate",
    "parse_failure_rate",
)
# model labels in router_metrics: the trained router of each kind, and its untrained counterpart
MODEL_LABELS = {"base": "llm, untrained", "adapter": "llm, trained", "similarity": "encoder, untrained",
                "encoder": "encoder, trained", "adapter-rank": "llm, trained, likelihood-ranked"}  # fmt: skip


def _metrics_markdown(scores: dict[str, RoutingScores]) -> str:
    interval = f"{INTERVAL_LEVEL:.0%} interval"
    header = [
        "model",
        "router",
        "views",
        "questions",
        "ANS-F1",
        f"ANS-F1 {interval}",
        "ANS-F1 views (gold answers)",
        "EXP-PRE",
        f"EXP-PRE {interval}",
        "EXPAND lines",
        "REF-ACC",
        f"REF-ACC {interval}",
        "gold refusals",
        "expelled/output",
        "collapsed",
        "parse failures",
    ]
    return markdown_table(
        header,
        [
            (
                model,
                MODEL_LABELS.get(model, model),
                s.samples,
                s.questions,
                f"{s.ans_f1:.3f}",
                s.interval("ans_f1"),
                f"{s.answer_views} ({s.gold_answer_views})",
                f"{s.exp_pre:.3f}",
                s.interval("exp_pre"),
                s.expand_lines,
                f"{s.ref_acc:.3f}",
                s.interval("ref_acc"),
                s.refusal_views,
                *(f"{getattr(s, c):.3f}" for c in ("expelled_per_output", "collapsed_rate", "parse_failure_rate")),
            )
            for model, s in scores.items()
        ],
    )


def _view_settings(
    config: RouterMetricsConfig, recorded: tuple[str, dict[str, int]] | None
) -> tuple[ViewKnobs, str, str]:
    """(the knobs the dev + test views are built with, the split the routers' training views came
    from, where the knobs came from): config, else what routing_subtrees last built its views with
    (`routing_view_settings`), else RoutingDataConfig's defaults."""
    defaults = RoutingDataConfig()
    names = ViewKnobs.__dataclass_fields__
    split, built_with = recorded or (defaults.split, {})
    knobs, sources = resolve_knobs(
        {name: getattr(config, name) for name in names},
        {name: value for name, value in built_with.items() if name in names},
        {name: getattr(defaults, name) for name in names},
    )
    source = ", ".join(f"{name}={getattr(knobs, name)} ({sources[name]})" for name in names)
    return knobs, split, source


def route_with_llm(
    session: AnsweringSession,
    samples: Sequence[RoutingSample],
    trees: dict[str, Sequence[TreeNode]],
    config: RouterMetricsConfig,
) -> dict[str, list[RoutedSample]]:
    """The base model's routing of `samples` and, with a trained adapter, the adapter's (generated,
    and ranked by likelihood where the engine can score)."""
    options = {"max_new_tokens": config.max_new_tokens, "constrained": config.constrained}
    engine, adapter = session.engine, session.published.llm_adapter
    routed = {"base": route_samples(engine, samples, trees, **options)}
    if adapter is not None:
        routed["adapter"] = route_samples(engine, samples, trees, adapter=adapter, **options)
        if session.can_rank():  # the same adapter, its actions ranked by likelihood
            routed["adapter-rank"] = route_samples_with(
                session.router("llm-rank"), samples, trees, RoutingKnobs(adapter=adapter)
            )
    return routed


def _scored_views(
    context: dg.AssetExecutionContext,
    config: RouterMetricsConfig,
    catalogue: DuckDBResource,
    session: AnsweringSession,
    base_model: BaseModelResource,
) -> tuple[list[tuple[RoutingSample, RoutingGold]], dict[str, list[TreeNode]], dict[str, str], bool, list[str]]:
    """(views with their gold, doc id -> tree nodes, qid -> split, whether they are the dev + test
    views, notes): every dev + test question's views with the oracle's labels, or, when the
    collection has none (or the routers trained on them), the routing validation fold with its
    teacher's labels."""
    collection = context.partition_key
    with catalogue.get_connection() as con:
        recorded = load_view_settings(con, collection)
    knobs, training_split, source = _view_settings(config, recorded)
    trained_on = trained_evaluation_splits(training_split)
    notes: list[str] = []
    with catalogue.get_connection() as con:
        questions = [] if trained_on else load_question_rows(con, collection, ",".join(EVALUATION_SPLITS))
        if questions:
            trees = {d: n for d, (n, _) in load_trees(con, collection).items()}
        else:
            fold = load_routing_samples(con, collection, fold="validation")
            trees = {
                d: n for d, (n, _) in load_trees(con, collection, doc_ids=sorted({s.doc_id for s, _ in fold})).items()
            }
    if trained_on:
        notes.append(
            f"the routers trained on {'+'.join(trained_on)} (routing_subtrees split {training_split!r}): scored on "
            "the validation fold instead, against the teacher's labels"
        )
    elif not questions:
        notes.append("no dev/test questions: scored on the validation fold, against the teacher's labels")
    if not questions:
        return fold, trees, {s.qid: "train (validation fold)" for s, _ in fold}, False, notes
    built = evaluation_views(
        questions,
        lambda query, k: session.retrieve(query, "hybrid", k),
        trees,
        knobs,
        base_model.token_counter(),
    )
    notes.append(f"views built as routing_subtrees builds them: {source}")
    if built.without_gold:
        notes.append(
            f"{len(built.without_gold)} dev/test questions without gold (answers, evidence or section) left out: "
            + ", ".join(built.without_gold[:5])
        )
    return built.views, trees, built.split_of, True, notes


@dg.asset(
    pool=CATALOGUE_POOL,
    retry_policy=TRANSIENT_RETRY,
    op_tags=GPU_STEP_TAGS,
    partitions_def=collection_partitions,
    deps=[router_adapter, "routing_actions", "passage_index", "questions"],
    group_name="routing",
    kinds={"pytorch", "duckdb"},
    metadata=table_metadata("router_metrics"),
    description="Routing quality on the views of every dev + test question (no router trained on them), "
    "built as routing_subtrees builds the training views and labelled by the gold-derived oracle: ANS-F1, "
    "EXP-PRE and REF-ACC with 95% bootstrap intervals over questions, expelled ids per output, collapsed and "
    "parse-failure rates, for each router kind and its untrained counterpart: encoder vs similarity (every "
    "view), LLM adapter vs base model (the first max_samples views, one batched engine call per model). "
    "Without dev/test questions: the routing validation fold against its teacher's labels.",
)
def router_metrics(
    context: dg.AssetExecutionContext,
    config: RouterMetricsConfig,
    catalogue: DuckDBResource,
    embedder: EmbedderResource,
    vectors: VectorStoreResource,
    base_model: BaseModelResource,
    llm: LLMResource,
) -> dg.MaterializeResult:
    started = time.perf_counter()
    collection = context.partition_key
    with catalogue.get_connection() as con:
        published = load_published(con, collection)  # the index version the views search, the routers
    # the session searches the passages for the views, and builds the routers scored on them
    session = AnsweringSession(published, ResourceModels(embedder, vectors, llm), {})
    pairs, trees, split_of, dev_test, notes = _scored_views(context, config, catalogue, session, base_model)
    routers = published.routers
    notes = [*published.router_notes, *notes]
    for note in notes:
        context.log.warning(f"{collection}: {note}")
    samples, golds = [s for s, _ in pairs], [g for _, g in pairs]
    if not samples:
        context.log.warning(f"{collection}: no routing views; nothing to score")
    routed = _route_with_encoders(session, routers, samples, trees)
    llm_samples = samples[: max(config.max_samples, 0)]
    adapter = routers.get("llm")
    _warn_on_other_base_model(context, adapter, llm)
    # The LLM is loaded only when it has something to route.
    engine = session.engine if llm_samples else None
    if engine is not None:
        routed |= route_with_llm(session, llm_samples, trees, config)
    scores = {model: score_routed(out, golds[: len(out)]) for model, out in routed.items()}
    with catalogue.get_connection() as con:
        replace_collection(con, collection, {"router_metrics": _metrics_table(collection, scores, dev_test)})
    run = _ScoredRun(samples, golds, split_of, dev_test, notes, llm_samples, routed, scores)
    metadata = _metrics_metadata(config, run, routers, engine, llm)
    metadata["seconds"] = round(time.perf_counter() - started, 1)
    return dg.MaterializeResult(metadata=metadata)


@dataclass(frozen=True)
class _ScoredRun:
    """What one `router_metrics` run scored: the views, their golds and questions, each router's outputs
    and scores."""

    samples: list[RoutingSample]
    golds: list[RoutingGold]
    split_of: dict[str, str]
    dev_test: bool
    notes: list[str]
    llm_samples: list[RoutingSample]
    routed: dict[str, list[RoutedSample]]
    scores: dict[str, RoutingScores]


def _route_with_encoders(
    session: AnsweringSession,
    routers: Mapping[str, PublishedModel],
    samples: list[RoutingSample],
    trees: dict[str, list[TreeNode]],
) -> dict[str, list[RoutedSample]]:
    """The views routed by the similarity router and, when published, the trained encoder."""
    routed: dict[str, list] = {}
    if samples:
        routed["similarity"] = route_samples_with(session.router("similarity"), samples, trees)
        if "encoder" in routers:
            # scored per view against the per-view labels: the encoder's per-view rule (the
            # thresholds calibrated for ANS-F1), not its own-choice rule, which answers by a margin
            # under the question's best node across documents and is chosen for evidence at a
            # word target (measured by `evidence_evaluation`)
            encoder = session.router("encoder").with_own_choices(None)
            routed["encoder"] = route_samples_with(encoder, samples, trees)
    return routed


def _warn_on_other_base_model(
    context: dg.AssetExecutionContext, adapter: PublishedModel | None, llm: LLMResource
) -> None:
    """Warn when the LLM adapter was trained on another base model than the llm resource serves."""
    trained_on = Path(str(adapter.details.get("base_model", ""))) if adapter is not None else None
    if trained_on is not None and trained_on.resolve() != llm.model_path().resolve():
        context.log.warning(
            f"adapter {adapter.model_id} was trained on {trained_on}, the llm resource "
            f"serves {llm.model_path()}: the comparison assumes the same base model"
        )


def _metrics_table(collection: str, scores: dict[str, RoutingScores], dev_test: bool) -> pa.Table:
    """The `router_metrics` rows: one per router kind scored."""
    return pa.table(
        {
            "collection": [collection] * len(scores),
            "model": list(scores),
            "questions": pa.array([s.questions for s in scores.values()], pa.int32()),
            "dev_test": pa.array([dev_test] * len(scores), pa.bool_()),
            **{
                c: pa.array([getattr(s, c) for s in scores.values()], pa.int32() if c == "samples" else pa.float64())
                for c in (*METRIC_COLUMNS, *ROUTER_INTERVAL_COLUMNS)
            },
            # what each rate rests on: a rate over none (no EXPAND line, no gold refusal) is undefined
            **{c: pa.array([getattr(s, c) for s in scores.values()], pa.int32()) for c in ROUTER_COUNT_COLUMNS},
        }
    )


def _metrics_metadata(
    config: RouterMetricsConfig,
    run: _ScoredRun,
    routers: Mapping[str, PublishedModel],
    engine: LLMEngine | None,
    llm: LLMResource,
) -> dict[str, object]:
    """The run in the UI: its views, routers, the metrics table and each router's rates."""
    samples, split_of, dev_test, scores = run.samples, run.split_of, run.dev_test, run.scores
    adapter = routers.get("llm")
    title = views_title(len(samples), len(split_of), dev_test, len(run.llm_samples) if engine else None)
    by_split = Counter(split_of[s.qid] for s in samples)
    metadata: dict[str, object] = {
        "dagster/row_count": len(scores),
        "views_from": "dev+test questions, oracle labels" if dev_test else "validation fold, teacher labels",
        "samples": len(samples),
        "questions": len(split_of),
        "llm_samples": len(run.llm_samples),
        "questions_by_split": dg.MetadataValue.md(
            markdown_table(
                ["split", "questions", "views"],
                [(split, sum(v == split for v in split_of.values()), n) for split, n in sorted(by_split.items())],
            )
        ),
        "interval_unit": INTERVAL_UNIT,
        "adapter_id": adapter.model_id if adapter else "none",
        "encoder_adapter_id": routers["encoder"].model_id if "encoder" in routers else "none",
        "router_model": engine.model_id if engine else llm.model_path().name,
        "decoding": "constrained to each view's action grammar" if config.constrained else "free",
        "metrics": dg.MetadataValue.md(
            f"**{title}**, {INTERVAL_LEVEL:.0%} bootstrap intervals over {INTERVAL_UNIT}\n\n"
            + _metrics_markdown(scores)
        ),
        "notes": dg.MetadataValue.md("\n".join(f"- {n}" for n in run.notes) or "none"),
    }
    for model, s in scores.items():
        metadata |= {f"{model}/{rate}": getattr(s, rate) for rate in INTERVAL_RATES}
        metadata |= {f"{model}/{rate}_interval": s.interval(rate) for rate in INTERVAL_RATES}
        metadata[f"{model}/ans_f1_views"] = s.answer_views
    if samples:
        metadata["example"] = dg.MetadataValue.md(_example_markdown(run))
    return metadata


def _example_markdown(run: _ScoredRun) -> str:
    """The first view's question and gold, and each router's output on it."""
    gold = run.golds[0]
    examples = [
        f"**{run.samples[0].query}** (gold: answer {sorted(gold.answer_ids)}, expand {sorted(gold.expand_ids)})"
    ]
    examples += [f"{model}:\n" + fenced(out[0].output or "(empty)", max_lines=8) for model, out in run.routed.items()]
    return "\n\n".join(examples)
