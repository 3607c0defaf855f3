"""`passage_reranker`: the collection's passage reranker, trained offline (core/index/reranking.py).

Trained on the collection's train-split questions and (by default) its synthetic questions, with
hard negatives from the published passage index's hybrid search; a stable quarter of the labelled
train questions is held out to calibrate how much the model's order counts against the
first stage (recall@5 of a gold passage on them, before and after, is in the metadata). The model
is the fine-tuned bi-encoder by default (`model: cross-encoder` trains the cross-encoder). The
model is published atomically as a versioned folder (`rr-<digest>`) under <data dir>/rerankers;
`answers` (`dota`, `rag-hybrid-rerank`) and `rag search --reranker latest` use the one this
lineage produced.
"""

from typing import Literal

import dagster as dg
from dagster_duckdb import DuckDBResource
from pydantic import Field

from rag_assets.core.index.reranking.recipe import train_collection_reranker
from rag_assets.core.index.reranking.training import RerankerSettings, RerankerTrainingResult
from rag_assets.core.index.retraining import (
    TrainingData,
    question_key,
    training_data,
)
from rag_assets.core.index.retrieval import search
from rag_assets.core.settings import rerankers_dir
from rag_assets.core.store.passage_table import load_passages
from rag_assets.core.store.published_models import PublishedModel, publish_models, published_models
from rag_assets.core.store.question_table import load_question_rows
from rag_assets.defs.deployment import CATALOGUE_POOL, GPU_STEP_TAGS, TRANSIENT_RETRY
from rag_assets.defs.index.retrain_config import RETRAIN_FIELDS, RetrainConfig, kept_model_result, retrain_or_keep
from rag_assets.defs.metadata import line_plot_markdown, markdown_table
from rag_assets.defs.partitions import collection_partitions
from resources.embedder import EmbedderResource
from resources.vectors import VectorStoreResource


class RerankerTrainingConfig(RetrainConfig):
    model: Literal["bi-encoder", "cross-encoder"] = Field(
        default="bi-encoder",
        description="The fine-tuned sentence encoder's cosine (bi-encoder) or a cross-encoder head on it.",
    )
    use_synthetic: bool = Field(default=True, description="Also train on the synthetic questions.")
    synthetic_scope: Literal["labelled-documents", "all"] = Field(
        default="labelled-documents",
        description="Synthetic questions about the documents the labelled train questions ask about (every "
        "document when there is none), or about all documents.",
    )
    max_steps: int = Field(
        default=8,
        ge=1,
        le=100000,
        description="Optimizer steps (about 6 s each on 2 CPU cores at batch 8: 2x the cross-encoder at batch 4).",
    )
    batch_size: int = Field(
        default=8, ge=1, le=512, description="Query groups per step (16 on the real sets: run.datasets.yaml)."
    )
    negatives: int = Field(default=3, ge=1, le=32, description="Hard negatives per query (non-gold hybrid hits).")
    learning_rate: float = Field(default=3e-5, gt=0, le=1e-2, description="AdamW learning rate.")
    max_length: int = Field(default=160, ge=32, le=512, description="Query + passage tokens the model reads.")
    candidates: int = Field(default=20, ge=2, le=200, description="First-stage hits negatives are drawn from.")
    depth: int = Field(default=30, ge=1, le=200, description="First-stage candidates the model re-scores per query.")
    max_validation: int = Field(default=24, ge=0, le=10000, description="Held-out questions calibrating the fusion.")
    min_validation: int = Field(
        default=20,
        ge=0,
        le=10000,
        description="Held-out questions wanted at least: held-out synthetic questions top up a small labelled slice.",
    )


@dg.asset(
    pool=CATALOGUE_POOL,
    retry_policy=TRANSIENT_RETRY,
    op_tags=GPU_STEP_TAGS,
    partitions_def=collection_partitions,
    deps=["passage_index", "questions", "synthetic_questions"],
    group_name="index",
    kinds={"pytorch", "lancedb"},
    description="A passage reranker fine-tuned from the packaged MiniLM (bi-encoder by default) on the collection's "
    "train (and synthetic) questions against hard hybrid negatives, fused with the first stage by a weight "
    "calibrated on held-out questions; published atomically as a versioned folder, with its training curve.",
)
def passage_reranker(
    context: dg.AssetExecutionContext,
    config: RerankerTrainingConfig,
    catalogue: DuckDBResource,
    embedder: EmbedderResource,
    vectors: VectorStoreResource,
) -> dg.MaterializeResult:
    collection = context.partition_key
    with catalogue.get_connection() as con:
        passages = load_passages(con, collection)
        labelled = load_question_rows(con, collection, "train")
        synthetic = load_question_rows(con, collection, table="synthetic_questions") if config.use_synthetic else []
        published = published_models(con, collection).get("reranker")
    data = training_data(
        ((p.passage_id, p.content_hash) for p in passages),
        [question_key(q) for q in (*labelled, *synthetic)],
        config.model_dump(exclude=RETRAIN_FIELDS),
    )
    decision = retrain_or_keep(published, data, config)
    context.log.info(f"{collection} passage reranker: {decision.reason}")
    if not decision.retrain:
        return kept_model_result(published, decision, "reranker_id")
    model = embedder.get()
    index = vectors.index(model)
    # every config field but `use_synthetic` and the retraining rule is a training setting of the same name
    settings = RerankerSettings(**config.model_dump(exclude={"use_synthetic", *RETRAIN_FIELDS}))

    def hits(query: str):
        return search(index, model, query, mode="hybrid", k=settings.candidates, collections=[collection])

    def log(step: int, total: int, loss: float) -> None:
        if step == 1 or step == total or step % 10 == 0:
            context.log.info(f"passage reranker: step {step}/{total} loss {loss:.4f}")

    result = train_collection_reranker(
        model.model_path,
        passages,
        labelled,
        synthetic,
        hits,
        rerankers_dir(),
        settings,
        device=model.device,
        on_step=log,
        extra_record={"collection": collection, "embedder": model.model_id},
    )
    with catalogue.get_connection() as con:
        publish_models(con, collection, [published_piece(result, data, context.run.run_id)], kinds=["reranker"])
    if result is None:
        context.log.warning(f"{collection}: no question with a gold passage and negatives; no reranker trained")
        return dg.MaterializeResult(metadata={"trained": False, "reason": "no training groups", **decision.metadata()})
    return dg.MaterializeResult(
        data_version=dg.DataVersion(result.reranker_id),
        metadata={**_reranker_metadata(settings, result), **decision.metadata()},
    )


def published_piece(result: RerankerTrainingResult | None, data: TrainingData, run_id: str) -> PublishedModel:
    """The reranker's `published_models` row, with what it was trained on (or why none was)."""
    if result is None:
        return PublishedModel("reranker", details={"reason": "no training groups"}, run_id=run_id)
    details = {"training_data": data.to_json()}
    return PublishedModel("reranker", result.reranker_id, str(result.folder), details, run_id=run_id)


def _reranker_metadata(settings: RerankerSettings, result: RerankerTrainingResult) -> dict[str, object]:
    """The trained reranker in the UI: ids, losses, the fusion weight and its held-out calibration."""
    first_stage = result.calibration.get("0.0")
    chosen = result.calibration.get(str(result.weight))
    return {
        "trained": True,
        "model": settings.model,
        "reranker_id": result.reranker_id,
        "path": str(result.folder),
        "groups": result.groups,
        "groups_synthetic": result.details["groups_synthetic"],
        "synthetic_out_of_scope": result.details["synthetic_out_of_scope"],
        "steps": result.steps,
        "seconds_per_step": round(result.seconds_per_step, 3),
        "first_loss": round(result.losses[0], 4),
        "last_loss": round(result.losses[-1], 4),
        "fusion_weight": result.weight,
        "held_out_questions": result.calibrated_on,
        "held_out_synthetic": result.details["calibrated_on_synthetic"],
        "held_out_recall_at_5_first_stage": first_stage if first_stage is not None else "n/a",
        "held_out_recall_at_5_reranked": chosen if chosen is not None else "n/a",
        "calibration": dg.MetadataValue.md(
            markdown_table(
                ["fusion weight (-1 = the model alone)", "held-out recall@5 (gold passage)"],
                [(w, round(r, 3)) for w, r in result.calibration.items()],
            )
        ),
        "loss_curve": dg.MetadataValue.md(
            line_plot_markdown(result.losses, title="passage reranker loss", xlabel="step", ylabel="loss")
        ),
    }
