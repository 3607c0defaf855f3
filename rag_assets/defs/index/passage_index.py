"""`passages` (cut from the trees, exact node alignment) and `passage_index` (LanceDB)."""

import statistics

import dagster as dg
from dagster_duckdb import DuckDBResource
from pydantic import Field

from rag_assets.core.corpus.document_changes import (
    change_counts,
    change_summary,
    document_changes,
    passage_document_hashes,
)
from rag_assets.core.corpus.sources import Rejection
from rag_assets.core.index.passages import (
    DEFAULT_MAX_PASSAGES,
    DEFAULT_MIN_WORDS,
    collection_passages,
    too_many_passages,
)
from rag_assets.core.store.collections import replace_collection
from rag_assets.core.store.document_tables import document_sources
from rag_assets.core.store.passage_table import load_passages, passages_table
from rag_assets.core.store.publication import load_publication, new_publication, publish
from rag_assets.core.store.tree_tables import load_trees
from rag_assets.defs.deployment import CATALOGUE_POOL, INDEX_RETRY
from rag_assets.defs.metadata import (
    document_change_metadata,
    histogram_markdown,
    markdown_table,
    rejections_markdown,
    row_count_metadata,
    table_metadata,
)
from rag_assets.defs.partitions import collection_partitions
from rag_assets.defs.structure.document_trees import document_trees
from resources.embedder import EmbedderResource
from resources.vectors import VectorStoreResource


class PassageConfig(dg.Config):
    max_words: int = Field(
        default=100,
        ge=10,
        le=2000,
        description="Words per passage at most (about the paper's 100-word retrieval units); a passage "
        "crosses no heading unless a section is smaller than min_words; a longer content node is split at "
        "sentence boundaries.",
    )
    min_words: int = Field(
        default=DEFAULT_MIN_WORDS,
        ge=0,
        le=100,
        description="A passage of fewer words joins its neighbouring section's passage (while both fit in "
        "max_words) instead of being indexed alone; 0 = never.",
    )
    max_passages_per_document: int = Field(
        default=DEFAULT_MAX_PASSAGES,
        ge=1,
        le=10_000_000,
        description="A document cut into more passages is left out of the index and listed in "
        "`rejected_documents` (stage `passages`) with its count.",
    )


@dg.asset(
    pool=CATALOGUE_POOL,
    partitions_def=collection_partitions,
    deps=[document_trees],
    group_name="index",
    kinds={"python", "duckdb"},
    metadata=table_metadata("passages"),
    description="Retrieval units cut from the trees: consecutive content nodes of one section up to "
    "~max_words, crossing a heading only to join a section under min_words; each keeps its node ids and "
    "spans (exact alignment).",
)
def passages(
    context: dg.AssetExecutionContext, config: PassageConfig, catalogue: DuckDBResource
) -> dg.MaterializeResult:
    collection = context.partition_key
    with catalogue.get_connection() as con:
        trees = load_trees(con, collection)
    cut, over = collection_passages(trees, config.max_words, config.min_words, config.max_passages_per_document)
    with catalogue.get_connection() as con:  # held for the write only
        sources = document_sources(con, collection, list(over))
        rejections = [
            Rejection(collection, sources.get(doc_id, ("", doc_id))[1], "passages", reason)
            for doc_id, reason in too_many_passages(over, config.max_passages_per_document).items()
        ]
        replace_collection(
            con,
            collection,
            {"passages": passages_table(collection, cut)},
            rejection_stage="passages",
            rejections=rejections,
        )
        row_counts = row_count_metadata(con, "passages", collection)
    for rejection in rejections:
        context.log.warning(f"left out of the index: {rejection.uri}: {rejection.reason}")
    words = [p.word_count for p in cut]
    return dg.MaterializeResult(
        metadata={
            **row_counts,
            "documents": len(trees),
            "passages": len(cut),
            "rejected": len(rejections),
            "rejections": dg.MetadataValue.md(rejections_markdown(rejections)),
            "mean_words": round(statistics.fmean(words), 1) if words else 0.0,
            "max_words": max(words, default=0),
            "words_plot": dg.MetadataValue.md(histogram_markdown(words, title="words per passage", xlabel="words")),
            "sample": dg.MetadataValue.md(
                markdown_table(
                    ["passage_id", "heading path", "nodes", "text"],
                    [(p.passage_id, " > ".join(p.heading_path), list(p.node_ids), p.text[:120]) for p in cut[:5]],
                )
            ),
        }
    )


@dg.asset(
    pool=CATALOGUE_POOL,
    retry_policy=INDEX_RETRY,
    partitions_def=collection_partitions,
    deps=[passages],
    group_name="index",
    kinds={"lancedb", "pytorch"},
    description="LanceDB table of passage embeddings + native full-text index. Incremental: only "
    "new or changed passages are embedded; passages of deleted documents are removed. Every "
    "published version is tagged.",
)
def passage_index(
    context: dg.AssetExecutionContext,
    catalogue: DuckDBResource,
    embedder: EmbedderResource,
    vectors: VectorStoreResource,
) -> dg.MaterializeResult:
    collection = context.partition_key
    with catalogue.get_connection() as con:
        rows = load_passages(con, collection)
        before = load_publication(con, collection)
    index = vectors.index(embedder.get())
    # the passages readers had (the published version) against the ones published now, per document
    published = vectors.index(embedder.get()).pin(before.version) if before else None
    old = passage_document_hashes(published.passage_pairs(collection) if published else [])
    new = passage_document_hashes((p.passage_id, p.content_hash) for p in rows)
    changes = document_changes(old, new)
    tag = f"{collection}-{context.run.run_id[:8]}"
    report = index.sync(rows, collection, tag=tag)
    # Published only now that both stores hold these passages: readers open this version.
    publication = new_publication(
        collection, report.table_name, report.version, report.tag, ((p.passage_id, p.content_hash) for p in rows)
    )
    with catalogue.get_connection() as con:
        publish(con, publication)
    cleaned = index.cleanup(collection, keep_tags=vectors.keep_tags_per_collection, older_than=vectors.retention())
    context.log.info(
        f"{collection}: passages {report.added} added, {report.updated} changed, {report.moved} moved, "
        f"{report.deleted} deleted, {report.unchanged} unchanged; documents {change_summary(change_counts(changes, len(new)))}; table {report.table_name} v{report.version} tagged {report.tag}, "
        f"published; cleanup: {len(cleaned.tags_deleted)} old tag(s) dropped, versions "
        f"{cleaned.versions_before} -> {cleaned.versions_after}"
    )
    return dg.MaterializeResult(
        data_version=dg.DataVersion(f"v{report.version}"),
        metadata={
            "dagster/partition_row_count": report.rows_in_collection,
            "table": report.table_name,
            "uri": vectors.resolved_uri(),
            "version": report.version,
            "tag": report.tag,
            "published_digest": publication.digest[:16],
            "versions_kept": cleaned.versions_after,
            "tags_dropped": dg.MetadataValue.json(cleaned.tags_deleted),
            "added": report.added,
            "changed": report.updated,
            "moved": report.moved,
            "deleted": report.deleted,
            "unchanged": report.unchanged,
            "embedded": len(report.embedded_ids),
            **document_change_metadata(changes, len(new), hash_label="passages' hash (old → new)"),
            "embedder": embedder.get().model_id,
            "embedder_precision": embedder.get().precision,
        },
    )
