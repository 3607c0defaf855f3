"""The retraining rule of the models trained on the passage index (`passage_reranker`,
`namespace_router`): config fields both share, and the metadata of a model kept as it is."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
from pydantic import Field

from rag_assets.core.index.retraining import RetrainDecision, TrainingData, retrain_decision
from rag_assets.core.store.published_models import PublishedModel

RETRAIN_FIELDS = {"retrain_threshold", "always_retrain"}


class RetrainConfig(dg.Config):
    retrain_threshold: float = Field(
        default=0.1,
        ge=0,
        le=1,
        description="Train again only when more than this share of the documents (or of the training "
        "questions) was added, changed or deleted since the published model was trained, or its settings "
        "changed; else keep it (0 = on any change). The reason is in the metadata.",
    )
    always_retrain: bool = Field(default=False, description="Train on every materialization, changed or not.")


def kept_model_result(published: PublishedModel, decision: RetrainDecision, id_key: str) -> dg.MaterializeResult:
    """The published model kept as it is: same data version, so nothing downstream goes stale."""
    return dg.MaterializeResult(
        data_version=dg.DataVersion(published.model_id),
        metadata={
            id_key: published.model_id,
            "path": published.path,
            "trained_in_run": dg.MetadataValue.dagster_run(published.run_id) if published.run_id else "unknown",
            **decision.metadata(),
        },
    )


def retrain_or_keep(published: PublishedModel | None, data: TrainingData, config: RetrainConfig) -> RetrainDecision:
    """Train again, or keep the published model (its folder still there) trained on about `data`."""
    usable = published is not None and published.model_id and published.path and Path(published.path).is_dir()
    return retrain_decision(
        TrainingData.from_json(published.details.get("training_data")) if usable else None,
        data,
        config.retrain_threshold,
        model=published.model_id if usable else None,
        always=config.always_retrain,
    )
