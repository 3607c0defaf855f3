"""Catalogue tables written as a by-product of another asset's step, declared as asset specs so
the lineage graph shows them (and who writes them); the writers record a materialization of each
partition they rewrite (`rag_assets.defs.metadata.report_side_table`)."""

import dagster as dg

from rag_assets.defs.corpus.source_documents import source_documents
from rag_assets.defs.metadata import table_metadata
from rag_assets.defs.partitions import collection_partitions
from rag_assets.defs.structure.document_trees import document_trees

rejected_documents = dg.AssetSpec(
    "rejected_documents",
    deps=[source_documents, document_trees],
    partitions_def=collection_partitions,
    group_name="structure",  # written last by document_trees: drawn beside it, downstream of the corpus
    kinds={"duckdb"},
    description="Documents that could not be read (`source_documents`, stage `ingest`), parsed or were "
    "over the node cap (`document_trees`, stage `parse`), or were cut into more passages than the cap "
    "(`passages`, stage `passages`), with the reason; each stage rewrites its own rows.",
    metadata=table_metadata("rejected_documents"),
)

document_texts = dg.AssetSpec(
    "document_texts",
    deps=[document_trees],
    partitions_def=collection_partitions,
    group_name="structure",
    kinds={"duckdb"},
    description="The normalised text of every parsed document, written with its tree by `document_trees`: "
    "node spans index into it, and `rag trace` compares cited spans against it.",
    metadata=table_metadata("document_texts"),
)

SIDE_TABLES = [rejected_documents, document_texts]
