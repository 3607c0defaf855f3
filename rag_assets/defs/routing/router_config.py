"""`router_adapter`'s run config: which router kinds to train and how (launchpad keys).

A module of its own so that the asset module stays about training and publishing, and so that
benchmarks can build the same encoder settings from a run config without the asset.
"""

from enum import StrEnum

import dagster as dg
from pydantic import Field

from rag_assets.core.routing.encoder_settings import EncoderSettings
from rag_assets.core.routing.negative_mining import NEGATIVE_SOURCES
from rag_assets.core.routing.scoring_router import ANCESTOR_LEVELS
from rag_assets.core.routing.scoring_settings import NODE_TEXTS


class RouterKind(StrEnum):
    """A trainable router kind (launchpad choices)."""

    encoder = "encoder"
    llm = "llm"


# How the encoder router may read a content node (launchpad choices), from the one list core keeps.
NodeText = StrEnum("NodeText", {text: text for text in NODE_TEXTS})
NegativeSource = StrEnum("NegativeSource", {source: source for source in NEGATIVE_SOURCES})


class RouterTrainingConfig(dg.Config):
    kinds: list[RouterKind] = Field(
        default=["encoder"],
        description="Router kinds to train: `encoder` (fine-tuned MiniLM node scorer, minutes on CPU; the default "
        "router, it wins on the real dev sets) and/or `llm` (LoRA on the base LLM, the paper's router; about 30 s "
        "a step on 2 CPU cores, for GPU users: add it with kinds: [encoder, llm]).",
    )
    use_synthetic: bool = Field(
        default=True,
        description="Also train on the synthetic (inverse-cloze and heading) questions' routing actions.",
    )
    encoder_real_weight: int = Field(
        default=1,
        ge=1,
        le=16,
        description="Encoder: each real (labelled) question's training view is trained on this many times, the "
        "synthetic ones once. Where synthetic views outnumber the real ones (six to one on nq_wiki), 4 gained "
        "own-choice passage hit on every seed there (docs/results.md); measured on nq_wiki only, so 1 by default.",
    )
    # encoder
    # Sized for 2 CPU cores (one pass, one hard negative, 128 word pieces: about 5x cheaper per
    # pass than 2 / 2 / 192); raise them on a GPU.
    encoder_epochs: int = Field(default=1, ge=1, le=50, description="Encoder: passes over the training pairs.")
    encoder_max_steps: int = Field(
        default=24,
        ge=0,
        description="Encoder: cap on optimizer steps (about 9 s each on 2 CPU cores; `make run` within 20 min); "
        "0 = whole epochs.",
    )
    encoder_batch_size: int = Field(
        default=16, ge=2, le=512, description="Encoder: pairs per step (in-batch negatives)."
    )
    encoder_learning_rate: float = Field(default=3e-5, gt=0, le=1e-2, description="Encoder: AdamW learning rate.")
    encoder_negatives: int = Field(
        default=1, ge=0, le=16, description="Encoder: hard negatives per pair, from the view."
    )
    encoder_negative_source: NegativeSource = Field(
        default=NegativeSource.view,
        description="Encoder: where the hard negatives are drawn from: the view's other nodes at random (`view`), or "
        "the untrained encoder's best-ranked of them (`base_encoder`; measured worse on nq_wiki, docs/results.md).",
    )
    encoder_max_seq_length: int = Field(
        default=128, ge=16, le=512, description="Encoder: word pieces read per text (question or node in context)."
    )
    encoder_section_weights: list[float] = Field(
        default=[0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0],
        min_length=1,
        description="Encoder router: section smoothing weights tried on the validation fold (a node's score "
        "blends with the best score shown in its section); [0] turns smoothing off.",
    )
    encoder_node_texts: list[NodeText] = Field(
        default=list(NODE_TEXTS),
        min_length=1,
        description="Encoder router: how it may read a content node, tried with each section weight: after its "
        "heading path, or bare (where every node of a document shares a short path, the path can drown the "
        "words that tell nodes apart). The first is kept unless another is no worse on both the held-out routed "
        "evidence and the validation ANS-F1, and better on one by more than one held-out question or one "
        "labelled view can move it. [heading_path] forces the path.",
    )
    encoder_ancestor_levels: int = Field(
        default=ANCESTOR_LEVELS,
        ge=0,
        le=4,
        description="Encoder router: how many content nodes a content node is read under after its heading path "
        "(a list's intro paragraph, a nested item's parent items), in training and routing; 0 (the default) "
        "reads the heading path alone. Two gained nothing over the real sets' questions and cost conditionalqa "
        "budgeted evidence recall.",
    )
    encoder_held_out_evidence: bool = Field(
        default=True,
        description="Encoder router: choose the section weight by the routed evidence of the validation fold's "
        "real questions (retrieved and routed as `answers` routes rdr2 by default, at rag-hybrid's words) "
        "rather than by the gold nodes kept within fixed word budgets.",
    )
    max_answers: int = Field(
        default=4,
        ge=1,
        le=16,
        description="Encoder router: ANSWER actions per view at most; the validation fold picks 1..max_answers "
        "with the answer threshold (best ANS-F1).",
    )
    max_expands: int = Field(default=2, ge=0, le=8, description="Encoder router: EXPAND actions per view at most.")
    # llm
    rank: int = Field(default=8, ge=1, le=256, description="LLM LoRA rank (the paper's r=8).")
    alpha: int = Field(default=16, ge=1, le=512, description="LLM LoRA alpha (the paper's 16).")
    dropout: float = Field(default=0.05, ge=0, lt=1, description="LLM LoRA dropout.")
    target_modules: list[str] = Field(
        default=["q_proj", "k_proj", "v_proj", "o_proj"], description="LLM modules LoRA adapts."
    )
    learning_rate: float = Field(default=2e-4, gt=0, le=1e-1, description="LLM LoRA learning rate.")
    epochs: int = Field(default=1, ge=1, le=50, description="LLM: passes over the examples (bounded by max_steps).")
    max_steps: int = Field(
        default=6,
        ge=0,
        description="LLM: optimizer steps at most (about 30 s each on 2 CPU cores; `make run` within 20 min); "
        "0 = whole epochs.",
    )
    batch_size: int = Field(default=4, ge=1, le=256, description="LLM: examples per step.")
    max_length: int = Field(default=1024, ge=128, le=32768, description="LLM: tokens per example (prompt + target).")

    def encoder_settings(self) -> EncoderSettings:
        """The encoder router's settings these keys give (`encoder_training.train_encoder`)."""
        return EncoderSettings(
            epochs=self.encoder_epochs,
            max_steps=self.encoder_max_steps,
            batch_size=self.encoder_batch_size,
            learning_rate=self.encoder_learning_rate,
            negatives=self.encoder_negatives,
            negative_source=str(self.encoder_negative_source),
            max_seq_length=self.encoder_max_seq_length,
            section_weights=tuple(self.encoder_section_weights),
            node_texts=tuple(str(t) for t in self.encoder_node_texts),
            ancestor_levels=self.encoder_ancestor_levels,
            max_answers=self.max_answers,
            max_expands=self.max_expands,
        )
