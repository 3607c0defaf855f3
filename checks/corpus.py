"""Checks guarding `source_documents` (the run's collection only)."""

import dagster as dg
from dagster_duckdb import DuckDBResource

from checks.expectations import source_document_expectations, validate_frame
from checks.partition import checked_partition
from rag_assets.core.corpus.parsers import FORMATS
from rag_assets.core.store.collections import collection_frame


@dg.asset_check(
    asset="source_documents",
    blocking=True,
    description="Great Expectations suite on the collection's documents: "
    "non-null unique doc ids, sha256 content hashes, known formats, non-empty documents.",
)
def source_documents_expectations(
    context: dg.AssetCheckExecutionContext, catalogue: DuckDBResource
) -> dg.AssetCheckResult:
    collection = checked_partition(context)
    with catalogue.get_connection() as con:
        frame = collection_frame(
            con, "source_documents", ["doc_id", "format", "content_hash", "size_bytes"], collection or ""
        )
    outcome = validate_frame("source_documents", frame, source_document_expectations(list(FORMATS)))
    return dg.AssetCheckResult(
        passed=outcome.success,
        metadata={
            "collection": collection or "-",
            "rows": len(frame),
            "expectations": outcome.evaluated,
            "suite": dg.MetadataValue.md(outcome.markdown),
            "failures": dg.MetadataValue.json(outcome.failed),
        },
    )
