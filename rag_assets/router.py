"""`router_adapter`: LoRA fine-tuning of the router on the teacher's actions (train fold), and
`router_metrics`: base model vs the latest adapter on the validation fold."""

from pathlib import Path

import dagster as dg
import pyarrow as pa
from dagster_duckdb import DuckDBResource

from rag_assets.core.catalogue import load_trees, replace_collection
from rag_assets.core.router_io import routing_messages
from rag_assets.core.router_metrics import RoutingScores
from rag_assets.core.router_training import LoraSettings, TrainingExample, train_lora
from rag_assets.core.routing_data import (
    latest_adapter,
    load_routing_samples,
    record_adapter,
    route_samples,
    score_routed,
)
from rag_assets.metadata import fenced, line_plot_markdown, markdown_table
from rag_assets.partitions import collection_partitions
from resources.llm import BaseModelResource, LLMResource


class RouterTrainingConfig(dg.Config):
    rank: int = 8  # the paper's r=8, alpha=16
    alpha: int = 16
    dropout: float = 0.05
    target_modules: list[str] = ["q_proj", "k_proj", "v_proj", "o_proj"]
    learning_rate: float = 2e-4
    epochs: int = 1
    max_steps: int = 6  # bounds CPU time (about 30 s a step on 2 cores; `make run` within 20 min); 0 = whole epochs
    batch_size: int = 4
    max_length: int = 1024


@dg.asset(
    partitions_def=collection_partitions,
    deps=["routing_actions"],
    group_name="router",
    kinds={"pytorch", "python"},
    description="LoRA adapter (peft) trained on the routing actions' train fold with the exact chat "
    "prompt used at inference, loss on the target tokens only; published atomically under a content id.",
)
def router_adapter(
    context: dg.AssetExecutionContext,
    config: RouterTrainingConfig,
    catalogue: DuckDBResource,
    base_model: BaseModelResource,
) -> dg.MaterializeResult:
    collection = context.partition_key
    with catalogue.get_connection() as con:
        rows = con.execute(
            "SELECT s.query, s.rendered, a.target FROM routing_actions a JOIN routing_subtrees s "
            "USING (collection, subtree_id) WHERE a.collection = ? AND a.fold = 'train' AND a.kind <> 'failed' "
            "ORDER BY a.subtree_id",
            [collection],
        ).fetchall()
    if not rows:
        context.log.warning(f"{collection}: no training routing actions (no train questions?); no adapter trained")
        return dg.MaterializeResult(metadata={"trained": False, "reason": "no training routing actions"})
    examples = [TrainingExample(routing_messages(query, rendered), target) for query, rendered, target in rows]
    settings = LoraSettings(
        rank=config.rank,
        alpha=config.alpha,
        dropout=config.dropout,
        target_modules=list(config.target_modules),
        learning_rate=config.learning_rate,
        epochs=config.epochs,
        max_steps=config.max_steps,
        batch_size=config.batch_size,
        max_length=config.max_length,
    )

    def log_step(step: int, total: int, loss: float) -> None:
        if step == 1 or step == total or step % 10 == 0:
            context.log.info(f"step {step}/{total} loss {loss:.4f}")

    model_path = base_model.path()
    result = train_lora(
        model_path, examples, base_model.adapters_dir(), settings, device=base_model.device, on_step=log_step
    )
    with catalogue.get_connection() as con:  # the router_metrics asset (and answers) read the newest row
        record_adapter(con, collection, result.adapter_id, str(result.adapter_dir), str(model_path))
    return dg.MaterializeResult(
        data_version=dg.DataVersion(result.adapter_id),
        metadata={
            "trained": True,
            "adapter_id": result.adapter_id,
            "path": str(result.adapter_dir),
            "examples": result.trained_examples,
            "steps": result.steps,
            "seconds_per_step": round(result.seconds_per_step, 3),
            "device": result.device,
            "dtype": result.dtype,
            "first_loss": round(result.losses[0], 4),
            "last_loss": round(result.losses[-1], 4),
            "loss_curve": dg.MetadataValue.md(
                line_plot_markdown(result.losses, title="training loss", xlabel="step", ylabel="loss")
            ),
        },
    )


class RouterMetricsConfig(dg.Config):
    max_samples: int = 12  # validation subtrees scored (first by subtree id); keeps CPU runs short
    max_new_tokens: int = 48
    # Decode under each view's action grammar, as RDR2 routes (expelled/collapsed are then 0 by
    # construction); False measures the free-running model as the paper's Table 4 does.
    constrained: bool = True


METRIC_COLUMNS = (
    "samples",
    "ans_f1",
    "exp_pre",
    "ref_acc",
    "expelled_per_output",
    "collapsed_rate",
    "parse_failure_rate",
)


def _metrics_markdown(scores: dict[str, RoutingScores]) -> str:
    header = ["model", "samples", "ANS-F1", "EXP-PRE", "REF-ACC", "expelled/output", "collapsed", "parse failures"]
    return markdown_table(
        header,
        [(model, s.samples, *(f"{getattr(s, c):.3f}" for c in METRIC_COLUMNS[1:])) for model, s in scores.items()],
    )


@dg.asset(
    partitions_def=collection_partitions,
    deps=["router_adapter", "routing_actions"],
    group_name="router",
    kinds={"pytorch", "duckdb"},
    description="Routing quality on the validation fold's subtrees against the teacher's labels "
    "(ANS-F1, EXP-PRE, REF-ACC, expelled ids per output, collapsed and parse-failure rates): the "
    "base model vs the collection's latest adapter, one batched engine call per model.",
)
def router_metrics(
    context: dg.AssetExecutionContext, config: RouterMetricsConfig, catalogue: DuckDBResource, llm: LLMResource
) -> dg.MaterializeResult:
    collection = context.partition_key
    with catalogue.get_connection() as con:
        pairs = load_routing_samples(con, collection, fold="validation", limit=max(config.max_samples, 0))
        adapter = latest_adapter(con, collection)
        trees = {
            d: n for d, (n, _) in load_trees(con, collection, doc_ids=sorted({s.doc_id for s, _ in pairs})).items()
        }
    samples, golds = [s for s, _ in pairs], [g for _, g in pairs]
    if adapter is not None and not (Path(adapter.path) / "adapter_config.json").is_file():
        context.log.warning(
            f"{collection}: adapter {adapter.adapter_id} is gone from {adapter.path}; scoring the base only"
        )
        adapter = None
    if not samples:
        context.log.warning(f"{collection}: no validation routing samples; nothing to score")
    # The model is loaded only when there is something to route.
    engine = llm.engine({adapter.adapter_id: Path(adapter.path)} if adapter else None) if samples else None
    if adapter is not None and Path(adapter.base_model).resolve() != llm.model_path().resolve():
        context.log.warning(
            f"adapter {adapter.adapter_id} was trained on {adapter.base_model}, the llm resource "
            f"serves {llm.model_path()}: the comparison assumes the same base model"
        )
    routed = {
        "base": route_samples(
            engine, samples, trees, max_new_tokens=config.max_new_tokens, constrained=config.constrained
        )
        if engine
        else []
    }
    if adapter is not None and engine is not None:
        routed["adapter"] = route_samples(
            engine,
            samples,
            trees,
            adapter=adapter.adapter_id,
            max_new_tokens=config.max_new_tokens,
            constrained=config.constrained,
        )
    scores = {model: score_routed(out, golds) for model, out in routed.items()}
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
        "adapter_id": adapter.adapter_id if adapter else "none",
        "router_model": engine.model_id if engine else llm.model_path().name,
        "decoding": "constrained to each view's action grammar" if config.constrained else "free",
        "metrics": dg.MetadataValue.md(_metrics_markdown(scores)),
    }
    for model, s in scores.items():
        metadata.update({f"{model}/ans_f1": s.ans_f1, f"{model}/exp_pre": s.exp_pre, f"{model}/ref_acc": s.ref_acc})
    if samples:
        examples = [
            f"**{samples[0].query}** (gold: answer {sorted(golds[0].answer_ids)}, expand {sorted(golds[0].expand_ids)})"
        ]
        examples += [f"{model}:\n" + fenced(out[0].output or "(empty)", max_lines=8) for model, out in routed.items()]
        metadata["example"] = dg.MetadataValue.md("\n\n".join(examples))
    return dg.MaterializeResult(metadata=metadata)
