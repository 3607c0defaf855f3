"""`reorder_policy`: R4's learned evidence placement for the collection (core/answering/r4_reordering.py).

Trained on the collection's train-split questions with a gold answer: their top hybrid passages
(the evidence rag-hybrid gives the reader) are the items; REINFORCE samples beginning / middle /
end placements and rewards each with the frozen reader's log-likelihood of the gold answer given
that evidence. The training curve (mean sampled reward per step) and the mean reward of retrieval
order, edges-first and the learned placement on the training questions are in the metadata; the
policy is published atomically as a versioned folder (`r4-<digest>`) and used by the `+r4` rows
of `answers`.
"""

from pathlib import Path

import dagster as dg
from dagster_duckdb import DuckDBResource
from pydantic import Field

from rag_assets.core.answering.r4_reordering import (
    EvidenceItem,
    ReaderScorer,
    ReorderExample,
    ReorderSettings,
    ReorderTrainingResult,
    train_position_policy,
)
from rag_assets.core.answering.reader_prompts import number_blocks, reader_messages
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.index.embedding import Embedder
from rag_assets.core.index.retrieval import search
from rag_assets.core.index.vector_index import PassageIndex
from rag_assets.core.settings import data_dir
from rag_assets.core.store.published_models import PublishedModel, publish_models
from rag_assets.core.store.question_table import load_question_rows
from rag_assets.defs.deployment import CATALOGUE_POOL, GPU_STEP_TAGS, TRANSIENT_RETRY
from rag_assets.defs.metadata import line_plot_markdown, markdown_table
from rag_assets.defs.partitions import collection_partitions
from resources.embedder import EmbedderResource
from resources.llm import BaseModelResource
from resources.vectors import VectorStoreResource


def reorder_policies_dir() -> Path:
    return data_dir() / "reorder"


class ReorderPolicyConfig(dg.Config):
    max_questions: int = Field(
        default=4,
        ge=1,
        le=100000,
        description="Train questions (with a gold answer) the policy learns on (each placement sampled is one "
        "reader pass, ~5 s on 2 CPU cores: `make run` sizes; raise on a GPU).",
    )
    top_k: int = Field(default=5, ge=2, le=50, description="Passages per question (as rag-hybrid reads).")
    epochs: int = Field(default=1, ge=1, le=1000, description="Passes over the questions.")
    samples: int = Field(default=2, ge=2, le=64, description="Placements sampled per question per step.")
    batch_size: int = Field(default=4, ge=1, le=1024, description="Questions per policy-gradient step.")
    learning_rate: float = Field(default=0.1, gt=0, le=10, description="Adam learning rate of the linear policy.")
    max_length: int = Field(default=1024, ge=128, le=32768, description="Reader tokens per scored chat.")


@dg.asset(
    pool=CATALOGUE_POOL,
    retry_policy=TRANSIENT_RETRY,
    op_tags=GPU_STEP_TAGS,
    partitions_def=collection_partitions,
    deps=["passage_index", "questions"],
    group_name="routing",
    kinds={"pytorch", "python"},
    description="R4's learned evidence placement (beginning / middle / end) for the collection: a linear "
    "position policy over passage features trained with REINFORCE on the train fold, rewarded by the frozen "
    "reader's log-likelihood of the gold answer; with its reward curve.",
)
def reorder_policy(
    context: dg.AssetExecutionContext,
    config: ReorderPolicyConfig,
    catalogue: DuckDBResource,
    embedder: EmbedderResource,
    vectors: VectorStoreResource,
    base_model: BaseModelResource,
) -> dg.MaterializeResult:
    collection = context.partition_key
    model = embedder.get()
    index = vectors.index(model)
    with catalogue.get_connection() as con:
        questions = [q for q in load_question_rows(con, collection, "train") if q.answers]
    questions = questions[: config.max_questions]
    examples = _reorder_examples(index, model, questions, config.top_k, collection)
    if not any(len(e.items) >= 2 for e in examples):
        context.log.warning(f"{collection}: no train question with an answer and two passages; no policy trained")
        publish_policy(
            catalogue,
            collection,
            PublishedModel("reorder_policy", details={"reason": "no training questions"}, run_id=context.run.run_id),
        )
        return dg.MaterializeResult(metadata={"trained": False, "reason": "no training questions"})

    scorer = ReaderScorer(base_model.path(), device=model.device, max_length=config.max_length)

    def log(step: int, total: int, reward: float) -> None:
        context.log.info(f"reorder policy: step {step}/{total} mean reward {reward:.4f}")

    result = train_position_policy(
        examples,
        scorer.log_likelihoods,
        _reader_evidence,
        reorder_policies_dir(),
        ReorderSettings(
            epochs=config.epochs,
            samples=config.samples,
            batch_size=config.batch_size,
            learning_rate=config.learning_rate,
        ),
        on_step=log,
        extra_record={"collection": collection, "reader": scorer.model_id},
    )
    publish_policy(
        catalogue,
        collection,
        PublishedModel("reorder_policy", result.policy_id, str(result.folder), run_id=context.run.run_id),
    )
    return dg.MaterializeResult(data_version=dg.DataVersion(result.policy_id), metadata=_policy_metadata(result))


def _reorder_examples(
    index: PassageIndex, model: Embedder, questions: list[Question], top_k: int, collection: str
) -> list[ReorderExample]:
    """Each question with its hybrid-retrieved passages and its first gold answer."""
    examples = []
    for q in questions:
        hits = search(index, model, q.query, mode="hybrid", k=top_k, collections=[collection])
        items = tuple(EvidenceItem(h.text, h.score, h.rank, heading_path=h.heading_path) for h in hits)
        examples.append(ReorderExample(q.query, items, q.answers[0]))
    return examples


def _reader_evidence(query: str, items) -> list[dict[str, str]]:
    """The reader's messages: exactly the evidence rag-hybrid would give the reader, in the sampled order."""
    return reader_messages(query, number_blocks([(item.heading_path, item.text) for item in items]), "short")


def _policy_metadata(result: ReorderTrainingResult) -> dict[str, object]:
    """The trained policy in the UI: ids, rewards per order and the reward curve."""
    return {
        "trained": True,
        "policy_id": result.policy_id,
        "path": str(result.folder),
        "algorithm": "REINFORCE, per-question mean-reward baseline",
        "examples": result.examples,
        "steps": result.steps,
        "first_reward": round(result.rewards[0], 4),
        "last_reward": round(result.rewards[-1], 4),
        "reward_by_order": dg.MetadataValue.md(
            markdown_table(
                ["order", "mean reward on the train questions (log-likelihood per token)"],
                [(k, round(v, 4)) for k, v in result.reward_by_order.items()],
            )
        ),
        "reward_curve": dg.MetadataValue.md(
            line_plot_markdown(result.rewards, title="reorder policy reward", xlabel="step", ylabel="mean reward")
        ),
    }


def publish_policy(catalogue: DuckDBResource, collection: str, piece: PublishedModel) -> None:
    """This materialization's policy (or why none) as the collection's published one."""
    with catalogue.get_connection() as con:
        publish_models(con, collection, [piece], kinds=["reorder_policy"])
