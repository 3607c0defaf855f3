"""`source_documents`: one row per document of a collection, plus the rejected ones."""

import hashlib
from collections import Counter

import dagster as dg
from dagster_duckdb import DuckDBResource

from rag_assets.core.corpus.document_changes import change_counts, change_summary, document_changes
from rag_assets.core.corpus.sources import SourceDocument, ingest
from rag_assets.core.store.collections import replace_collection
from rag_assets.core.store.document_tables import documents_table, load_documents
from rag_assets.core.store.transactions import table_exists
from rag_assets.defs.deployment import CATALOGUE_POOL
from rag_assets.defs.metadata import (
    counter_table,
    document_change_metadata,
    markdown_table,
    rejections_markdown,
    report_side_table,
    row_count_metadata,
    table_metadata,
)
from rag_assets.defs.partitions import collection_partitions
from resources.sources import SourcesResource


def _stored_documents(catalogue: DuckDBResource, collection: str) -> dict[str, SourceDocument]:
    """The catalogue's documents of the collection by id (see core/corpus/reader_version.py)."""
    with catalogue.get_connection() as con:
        if not table_exists(con, "source_documents"):
            return {}
        return {d.doc_id: d for d in load_documents(con, collection)}


def _log_reading(context: dg.AssetExecutionContext, collection: str, changes: list, documents: int, kept: int) -> None:
    context.log.info(
        f"{collection} documents: {change_summary(change_counts(changes, documents))}; "
        f"{documents - kept} read, {kept} kept as read before (same bytes, same reader)"
    )


@dg.asset(
    pool=CATALOGUE_POOL,
    partitions_def=collection_partitions,
    group_name="corpus",
    kinds={"python", "duckdb"},
    metadata=table_metadata("source_documents"),
    description="Documents of one collection (stable doc ids, content hashes, raw text); "
    "unreadable ones go to `rejected_documents` with the reason. A collection with no readable "
    "document fails here, naming its rejected files, and its last good version is kept.",
)
def source_documents(
    context: dg.AssetExecutionContext,
    catalogue: DuckDBResource,
    sources: SourcesResource,
) -> dg.MaterializeResult:
    spec = sources.collection(context.partition_key)
    known = _stored_documents(catalogue, spec.name)  # unchanged files keep what was read
    result = ingest(spec, known=known, **sources.reading_options())
    for rejection in result.rejections:
        context.log.warning(f"rejected {rejection.uri}: {rejection.reason}")
    for unread in result.unread_pages():  # kept documents, with pages that gave no text
        context.log.warning(unread)
    nothing = result.nothing_readable(spec)
    if nothing:  # stop here, before the catalogue's last good version is replaced by nothing
        raise dg.Failure(description=nothing, allow_retries=False)
    with catalogue.get_connection() as con:
        replace_collection(
            con,
            spec.name,
            {"source_documents": documents_table(result.documents)},
            rejection_stage="ingest",
            rejections=result.rejections,
        )
        row_counts = row_count_metadata(con, "source_documents", spec.name)
        report_side_table(context, con, "rejected_documents", stage="ingest")
    changes = document_changes(
        {doc_id: doc.content_hash for doc_id, doc in known.items()},
        {d.doc_id: d.content_hash for d in result.documents},
    )
    _log_reading(context, spec.name, changes, len(result.documents), result.kept)
    for doc_id, original in result.duplicates:
        context.log.warning(f"{doc_id} has the same content as {original} (duplicates: {sources.duplicates})")
    # The data version is the hash of every document's hash: unchanged sources, unchanged version.
    version = hashlib.sha256("".join(sorted(d.content_hash for d in result.documents)).encode()).hexdigest()
    return dg.MaterializeResult(
        data_version=dg.DataVersion(version[:16]),
        metadata={
            **row_counts,
            "collection": spec.name,
            "source": spec.path,
            "documents": len(result.documents),
            "documents_read": len(result.documents) - result.kept,
            "documents_kept": result.kept,
            "rejected": len(result.rejections),
            **document_change_metadata(changes, len(result.documents)),
            "megabytes": round(sum(d.size_bytes for d in result.documents) / 1e6, 3),
            "formats": dg.MetadataValue.md(counter_table("format", Counter(d.format for d in result.documents))),
            "rejections": dg.MetadataValue.md(rejections_markdown(result.rejections)),
            "duplicates": len(result.duplicates),
            "duplicate_documents": dg.MetadataValue.md(
                markdown_table(["document", "same content as"], result.duplicates[:20]) if result.duplicates else "none"
            ),
        },
    )
