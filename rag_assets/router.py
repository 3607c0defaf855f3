"""`router_adapter`: LoRA fine-tuning of the router on the teacher's actions (train fold)."""

import dagster as dg
from dagster_duckdb import DuckDBResource

from rag_assets.core.router_io import routing_messages
from rag_assets.core.router_training import LoraSettings, TrainingExample, train_lora
from rag_assets.metadata import line_plot_markdown
from rag_assets.partitions import collection_partitions
from rag_assets.resources.llm import BaseModelResource


class RouterTrainingConfig(dg.Config):
    rank: int = 8  # the paper's r=8, alpha=16
    alpha: int = 16
    dropout: float = 0.05
    target_modules: list[str] = ["q_proj", "k_proj", "v_proj", "o_proj"]
    learning_rate: float = 2e-4
    epochs: int = 1
    max_steps: int = 40  # bounds CPU time; 0 = whole epochs
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
def router_adapter(context: dg.AssetExecutionContext, config: RouterTrainingConfig, catalogue: DuckDBResource,
                   base_model: BaseModelResource) -> dg.MaterializeResult:
    collection = context.partition_key
    with catalogue.get_connection() as con:
        rows = con.execute(
            "SELECT s.query, s.rendered, a.target FROM routing_actions a JOIN routing_subtrees s "
            "USING (collection, subtree_id) WHERE a.collection = ? AND a.fold = 'train' ORDER BY a.subtree_id",
            [collection]).fetchall()
    if not rows:
        context.log.warning(f"{collection}: no training routing actions (no train questions?); no adapter trained")
        return dg.MaterializeResult(metadata={"trained": False, "reason": "no training routing actions"})
    examples = [TrainingExample(routing_messages(query, rendered), target) for query, rendered, target in rows]
    settings = LoraSettings(rank=config.rank, alpha=config.alpha, dropout=config.dropout,
                            target_modules=list(config.target_modules), learning_rate=config.learning_rate,
                            epochs=config.epochs, max_steps=config.max_steps, batch_size=config.batch_size,
                            max_length=config.max_length)

    def log_step(step: int, total: int, loss: float) -> None:
        if step == 1 or step == total or step % 10 == 0:
            context.log.info(f"step {step}/{total} loss {loss:.4f}")

    result = train_lora(base_model.path(), examples, base_model.adapters_dir(), settings,
                        device=base_model.device, on_step=log_step)
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
            "loss_curve": dg.MetadataValue.md(line_plot_markdown(result.losses, title="training loss",
                                                                 xlabel="step", ylabel="loss")),
        },
    )
