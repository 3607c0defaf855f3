"""`questions`: the question set of a collection (train / dev / test split by question id)."""

from collections import Counter

import dagster as dg
from dagster_duckdb import DuckDBResource
from pydantic import Field, model_validator

from rag_assets.core.corpus.question_sets import load_questions
from rag_assets.core.store.collections import replace_collection
from rag_assets.core.store.question_table import questions_table
from rag_assets.defs.deployment import CATALOGUE_POOL
from rag_assets.defs.metadata import counter_table, markdown_table, row_count_metadata, table_metadata
from rag_assets.defs.partitions import collection_partitions
from resources.sources import SourcesResource


class QuestionsConfig(dg.Config):
    train_fraction: float = Field(
        default=0.6,
        ge=0.0,
        le=1.0,
        description="Share of questions in the train split (stable per question id); a record's own "
        "`split` field wins.",
    )
    dev_fraction: float = Field(
        default=0.2, ge=0.0, le=1.0, description="Share in the dev split; the rest (1 - train - dev) is test."
    )

    @model_validator(mode="after")
    def _fractions_fit(self) -> "QuestionsConfig":
        if self.train_fraction + self.dev_fraction > 1.0:
            raise ValueError(f"train_fraction + dev_fraction = {self.train_fraction + self.dev_fraction} exceeds 1")
        return self


@dg.asset(
    pool=CATALOGUE_POOL,
    partitions_def=collection_partitions,
    group_name="corpus",
    kinds={"python", "duckdb"},
    metadata=table_metadata("questions"),
    description="Questions about a collection with their gold labels (answers, evidence, gold "
    "section path, gold document) and a stable split. Gold labels are for measuring only.",
)
def questions(
    context: dg.AssetExecutionContext, config: QuestionsConfig, catalogue: DuckDBResource, sources: SourcesResource
) -> dg.MaterializeResult:
    spec = sources.collection(context.partition_key)
    loaded, problems = (
        ([], [])
        if not spec.questions
        else load_questions(spec.questions, fractions=(config.train_fraction, config.dev_fraction))
    )
    for problem in problems:
        context.log.warning(f"skipped question: {problem}")
    with catalogue.get_connection() as con:
        replace_collection(con, spec.name, {"questions": questions_table(spec.name, loaded)})
        row_counts = row_count_metadata(con, "questions", spec.name)
    return dg.MaterializeResult(
        metadata={
            **row_counts,
            "source": spec.questions or "none configured",
            "splits": dg.MetadataValue.md(counter_table("split", Counter(q.split for q in loaded))),
            "skipped": len(problems),
            "sample": dg.MetadataValue.md(
                markdown_table(
                    ["qid", "split", "query", "answers"],
                    [(q.qid, q.split, q.query[:100], "; ".join(q.answers)[:80]) for q in loaded[:5]],
                )
            ),
        }
    )
