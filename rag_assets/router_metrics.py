"""`router_metrics`: how well each router kind routes the validation fold against its untrained
counterpart (encoder vs similarity on every validation subtree, LLM adapter vs base model on a
few), scored against the teacher's labels with the routers `router_adapter` published."""

from collections.abc import Sequence
from pathlib import Path

import dagster as dg
import pyarrow as pa
from dagster_duckdb import DuckDBResource
from pydantic import Field

from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.engines.base import LLMEngine
from rag_assets.core.routing.encoder_training import load_encoder_router
from rag_assets.core.routing.held_out_routing import (
    RoutedSample,
    load_routing_samples,
    route_samples,
    route_samples_with,
    score_routed,
)
from rag_assets.core.routing.likelihood_router import LikelihoodRouter, engine_can_score
from rag_assets.core.routing.metrics import INTERVAL_LEVEL, RoutingScores
from rag_assets.core.routing.navigation import RoutingKnobs
from rag_assets.core.routing.samples import RoutingSample
from rag_assets.core.routing.scoring_router import ScoringRouter
from rag_assets.core.store.collections import replace_collection
from rag_assets.core.store.router_registry import AdapterRecord
from rag_assets.core.store.tree_tables import load_trees
from rag_assets.deployment import CATALOGUE_POOL, GPU_STEP_TAGS, TRANSIENT_RETRY
from rag_assets.metadata import fenced, markdown_table, table_metadata
from rag_assets.partitions import collection_partitions
from rag_assets.router import router_adapter, upstream_routers
from resources.embedder import EmbedderResource
from resources.llm import LLMResource


class RouterMetricsConfig(dg.Config):
    max_samples: int = Field(
        default=4,
        ge=0,
        description="Validation subtrees the LLM routers score (first by subtree id); keeps CPU runs short. "
        "The encoder and similarity routers score every validation subtree.",
    )
    max_new_tokens: int = Field(default=48, ge=8, le=512, description="LLM router output tokens.")
    constrained: bool = Field(
        default=True,
        description="Decode the LLM router under each view's action grammar, as RDR2 routes (expelled/collapsed "
        "are then 0 by construction); False measures the free-running model as the paper's Table 4 does.",
    )


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
    header = [
        "model",
        "router",
        "samples",
        "ANS-F1",
        f"ANS-F1 {INTERVAL_LEVEL:.0%} interval",
        "ANS-F1 views (gold answers)",
        "EXP-PRE",
        "EXPAND lines",
        "REF-ACC",
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
                f"{s.ans_f1:.3f}",
                s.ans_f1_interval,
                f"{s.answer_views} ({s.gold_answer_views})",
                f"{s.exp_pre:.3f}",
                s.expand_lines,
                f"{s.ref_acc:.3f}",
                s.refusal_views,
                *(f"{getattr(s, c):.3f}" for c in ("expelled_per_output", "collapsed_rate", "parse_failure_rate")),
            )
            for model, s in scores.items()
        ],
    )


def route_with_llm(
    engine: LLMEngine,
    adapter: AdapterRecord | None,
    samples: Sequence[RoutingSample],
    trees: dict[str, Sequence[TreeNode]],
    config: RouterMetricsConfig,
) -> dict[str, list[RoutedSample]]:
    """The base model's routing of `samples` and, with a trained adapter, the adapter's (generated,
    and ranked by likelihood where the engine can score)."""
    options = {"max_new_tokens": config.max_new_tokens, "constrained": config.constrained}
    routed = {"base": route_samples(engine, samples, trees, **options)}
    if adapter is not None:
        routed["adapter"] = route_samples(engine, samples, trees, adapter=adapter.adapter_id, **options)
        if engine_can_score(engine):  # the same adapter, its actions ranked by likelihood
            routed["adapter-rank"] = route_samples_with(
                LikelihoodRouter(engine), samples, trees, RoutingKnobs(adapter=adapter.adapter_id)
            )
    return routed


@dg.asset(
    pool=CATALOGUE_POOL,
    retry_policy=TRANSIENT_RETRY,
    op_tags=GPU_STEP_TAGS,
    partitions_def=collection_partitions,
    deps=[router_adapter, "routing_actions"],
    group_name="routing",
    kinds={"pytorch", "duckdb"},
    metadata=table_metadata("router_metrics"),
    description="Routing quality on the validation fold's subtrees against the teacher's labels "
    "(ANS-F1, EXP-PRE, REF-ACC, expelled ids per output, collapsed and parse-failure rates) for each router "
    "kind and its untrained counterpart: encoder vs similarity (every validation subtree), LLM adapter vs "
    "base model (one batched engine call per model).",
)
def router_metrics(
    context: dg.AssetExecutionContext,
    config: RouterMetricsConfig,
    catalogue: DuckDBResource,
    embedder: EmbedderResource,
    llm: LLMResource,
) -> dg.MaterializeResult:
    collection = context.partition_key
    with catalogue.get_connection() as con:
        pairs = load_routing_samples(con, collection, fold="validation")
        routers, thresholds, notes = upstream_routers(context, con)
        trees = {
            d: n for d, (n, _) in load_trees(con, collection, doc_ids=sorted({s.doc_id for s, _ in pairs})).items()
        }
    for note in notes:
        context.log.warning(f"{collection}: {note}")
    samples, golds = [s for s, _ in pairs], [g for _, g in pairs]
    if not samples:
        context.log.warning(f"{collection}: no validation routing samples; nothing to score")
    routed: dict[str, list] = {}
    if samples:
        routed["similarity"] = route_samples_with(
            ScoringRouter(embedder.get(), thresholds, kind="similarity", contextual=False), samples, trees
        )
        if "encoder" in routers:
            # scored per view against the teacher's per-view labels: the encoder's per-view rule
            # (the thresholds calibrated for ANS-F1), not its own-choice rule, which answers by a
            # margin under the question's best node across documents and is chosen for evidence
            # at a word target (measured by `evidence_evaluation`)
            encoder = load_encoder_router(Path(routers["encoder"].path)).with_own_choices(None)
            routed["encoder"] = route_samples_with(encoder, samples, trees)
    llm_samples = samples[: max(config.max_samples, 0)]
    adapter = routers.get("llm")
    if adapter is not None and Path(adapter.base_model).resolve() != llm.model_path().resolve():
        context.log.warning(
            f"adapter {adapter.adapter_id} was trained on {adapter.base_model}, the llm resource "
            f"serves {llm.model_path()}: the comparison assumes the same base model"
        )
    # The LLM is loaded only when it has something to route.
    engine = llm.engine({adapter.adapter_id: Path(adapter.path)} if adapter else None) if llm_samples else None
    if engine is not None:
        routed |= route_with_llm(engine, adapter, llm_samples, trees, config)
    scores = {model: score_routed(out, golds[: len(out)]) for model, out in routed.items()}
    table = pa.table(
        {
            "collection": [collection] * len(scores),
            "model": list(scores),
            **{
                c: pa.array([getattr(s, c) for s in scores.values()], pa.int32() if c == "samples" else pa.float64())
                for c in METRIC_COLUMNS
            },
        }
    )
    with catalogue.get_connection() as con:
        replace_collection(con, collection, {"router_metrics": table})
    metadata: dict[str, object] = {
        "dagster/row_count": len(scores),
        "samples": len(samples),
        "llm_samples": len(llm_samples),
        "adapter_id": adapter.adapter_id if adapter else "none",
        "encoder_adapter_id": routers["encoder"].adapter_id if "encoder" in routers else "none",
        "router_model": engine.model_id if engine else llm.model_path().name,
        "decoding": "constrained to each view's action grammar" if config.constrained else "free",
        "metrics": dg.MetadataValue.md(_metrics_markdown(scores)),
        "notes": dg.MetadataValue.md("\n".join(f"- {n}" for n in notes) or "none"),
    }
    for model, s in scores.items():
        metadata.update(
            {
                f"{model}/ans_f1": s.ans_f1,
                f"{model}/ans_f1_interval": s.ans_f1_interval,
                f"{model}/ans_f1_views": s.answer_views,
                f"{model}/exp_pre": s.exp_pre,
                f"{model}/ref_acc": s.ref_acc,
            }
        )
    if samples:
        examples = [
            f"**{samples[0].query}** (gold: answer {sorted(golds[0].answer_ids)}, expand {sorted(golds[0].expand_ids)})"
        ]
        examples += [f"{model}:\n" + fenced(out[0].output or "(empty)", max_lines=8) for model, out in routed.items()]
        metadata["example"] = dg.MetadataValue.md("\n\n".join(examples))
    return dg.MaterializeResult(metadata=metadata)
