"""`questions`: the question set of a collection (train / dev / test split by question id)."""

from collections import Counter

import dagster as dg
from dagster_duckdb import DuckDBResource

from rag_assets.core.catalogue import questions_table, replace_collection
from rag_assets.core.questions import load_questions
from rag_assets.deployment import CATALOGUE_POOL
from rag_assets.metadata import counter_table, markdown_table
from rag_assets.partitions import collection_partitions
from resources.sources import SourcesResource


class QuestionsConfig(dg.Config):
    train_fraction: float = 0.6
    dev_fraction: float = 0.2  # the rest is test; a record's own "split" field wins


@dg.asset(
    pool=CATALOGUE_POOL,
    partitions_def=collection_partitions,
    group_name="questions",
    kinds={"python", "duckdb"},
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
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": len(loaded),
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
