"""The encoder router's training and calibration settings (`encoder_training.train_encoder`,
`scoring_settings.choose_scoring_settings`)."""

from __future__ import annotations

from dataclasses import dataclass

from rag_assets.core.routing.negative_mining import NEGATIVE_SOURCES
from rag_assets.core.routing.scoring_router import ANCESTOR_LEVELS


@dataclass(slots=True)
class EncoderSettings:
    epochs: int = 1
    max_steps: int = 0  # 0 = whole epochs
    batch_size: int = 16
    learning_rate: float = 3e-5
    negatives: int = 1  # hard negatives per pair (from the same view; others drawn from other views)
    # Where they are drawn from (`negative_mining.NEGATIVE_SOURCES`): the view's other candidates at
    # random, or the untrained encoder's best of them.
    negative_source: str = "view"
    warmup_fraction: float = 0.1
    max_seq_length: int = 128
    max_answers: int = 4  # at inference: ANSWER lines per view
    max_expands: int = 2
    # Section weights tried on the validation fold (0 = every node scored on its own).
    section_weights: tuple[float, ...] = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0)
    # ... judged, without held-out questions, by the gold nodes kept within these words per
    # question (about 1, 2 and 4 passages; retrieve-and-read gives 300-470 words on the real sets).
    section_budgets: tuple[int, ...] = (100, 200, 400)
    # How the router reads a content node, tried with each weight (NODE_TEXTS); the first is kept
    # unless another is no worse on both the routed evidence and ANS-F1, and better on one by more
    # than one held-out question or one labelled view can move it (`chosen_trial`).
    node_texts: tuple[str, ...] = ("heading_path", "bare")
    # Content ancestors a node is read under after its heading path (`scoring_router.content_context`:
    # a list's intro paragraph, a nested item's parent items), in training and at inference; none
    # by default (measured in docs/results.md).
    ancestor_levels: int = ANCESTOR_LEVELS
    seed: int = 0

    def __post_init__(self) -> None:
        if self.negative_source not in NEGATIVE_SOURCES:
            raise ValueError(f"negative_source must be one of {NEGATIVE_SOURCES}, got {self.negative_source!r}")
        if self.ancestor_levels < 0:
            raise ValueError(f"ancestor_levels must be >= 0, got {self.ancestor_levels}")
