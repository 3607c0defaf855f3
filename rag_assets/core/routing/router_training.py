"""The encoder router trained from labelled routing views, as `router_adapter` trains it: each real
question's views weighted (`weight_real_views`), the synthetic ones once, then `train_encoder`
(fine-tuning, the section weight chosen on held-out evidence, calibration on the validation views).

`router_adapter` publishes what this trains; the cross-fitted benchmark trains one router per fold
here, so a fold's router is the pipeline's router on other questions, not a look-alike.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rag_assets.core.index.embedding import Embedder
from rag_assets.core.routing.encoder_settings import EncoderSettings
from rag_assets.core.routing.encoder_training import EncoderTrainingResult, train_encoder
from rag_assets.core.routing.held_out_routing import LabelledView, weight_real_views

if TYPE_CHECKING:
    from rag_assets.core.evaluation.held_out_evidence import HeldOutEvidence


@dataclass(frozen=True, slots=True)
class TrainedEncoder:
    result: EncoderTrainingResult
    train_views: int  # views trained on, real views counted once per repeat


def train_encoder_router(
    encoder: Embedder,
    train: Sequence[LabelledView],
    validation: Sequence[LabelledView],
    into: Path,
    settings: EncoderSettings,
    *,
    real_weight: int = 1,
    once: Sequence[LabelledView] = (),
    held_out: HeldOutEvidence | None = None,
    on_step: Callable[[int, int, float], None] | None = None,
    extra_record: dict | None = None,
    progress: bool = True,
) -> TrainedEncoder:
    """The encoder router fine-tuned from `encoder` on `train` (real views `real_weight` times;
    `once`: further views trained on once each, whatever their source), calibrated on
    `validation`, published under `into`."""
    weighted = weight_real_views(train, real_weight) + list(once)
    result = train_encoder(
        encoder.model_path,
        [v.example for v in weighted],
        [v.example for v in validation],
        into,
        settings,
        device=encoder.device,
        on_step=on_step,
        progress=progress,
        extra_record=extra_record,
        held_out=held_out,
    )
    return TrainedEncoder(result, len(weighted))
