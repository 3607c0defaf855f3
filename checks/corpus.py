"""Checks guarding `source_documents`."""

import dagster as dg
from dagster_duckdb import DuckDBResource

from checks.expectations import source_document_expectations, validate_frame
from rag_assets.core.parsers import FORMATS


@dg.asset_check(
    asset="source_documents",
    blocking=True,
    description="Great Expectations suite: "
    "non-null unique doc ids, sha256 content hashes, known formats, non-empty documents.",
)
def source_documents_expectations(catalogue: DuckDBResource) -> dg.AssetCheckResult:
    with catalogue.get_connection() as con:
        frame = con.execute("SELECT collection, doc_id, format, content_hash, size_bytes FROM source_documents").df()
    outcome = validate_frame("source_documents", frame, source_document_expectations(list(FORMATS)))
    return dg.AssetCheckResult(
        passed=outcome.success,
        metadata={
            "rows": len(frame),
            "expectations": outcome.evaluated,
            "suite": dg.MetadataValue.md(outcome.markdown),
            "failures": dg.MetadataValue.json(outcome.failed),
        },
    )
