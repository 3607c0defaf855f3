"""`document_trees`: the Document Structure Tree of every document of a collection."""

import statistics
from collections import Counter

import dagster as dg
from dagster_duckdb import DuckDBResource
from pydantic import Field

from rag_assets.core.corpus.sources import nothing_left
from rag_assets.core.corpus.tree import render_tree
from rag_assets.core.corpus.tree_building import DEFAULT_MAX_NODES, build_trees
from rag_assets.core.store.collections import replace_collection
from rag_assets.core.store.document_tables import load_documents
from rag_assets.core.store.tree_tables import nodes_table, stored_trees, texts_table
from rag_assets.defs.corpus.source_documents import source_documents
from rag_assets.defs.deployment import CATALOGUE_POOL
from rag_assets.defs.metadata import (
    counter_table,
    fenced,
    histogram_markdown,
    rejections_markdown,
    report_side_table,
    row_count_metadata,
    table_metadata,
)
from rag_assets.defs.partitions import collection_partitions


class TreeConfig(dg.Config):
    max_nodes: int = Field(
        default=DEFAULT_MAX_NODES,
        ge=10,
        le=10_000_000,
        description="Nodes per document tree at most; a document over it is rejected (listed in "
        "`rejected_documents`, stage `parse`, with its count) rather than swamping the index.",
    )


@dg.asset(
    pool=CATALOGUE_POOL,
    partitions_def=collection_partitions,
    deps=[source_documents],
    group_name="structure",
    kinds={"python", "duckdb"},
    metadata=table_metadata("document_nodes"),
    description="Document Structure Trees: headings are structure nodes; paragraphs, list items, "
    "table rows and code are content nodes; exact char spans into each document's normalised text.",
)
def document_trees(
    context: dg.AssetExecutionContext, config: TreeConfig, catalogue: DuckDBResource
) -> dg.MaterializeResult:
    collection = context.partition_key
    with catalogue.get_connection() as con:
        docs = load_documents(con, collection)
        kept = stored_trees(con, collection, docs)  # same content, same reader: no parse
    # parsing holds no connection: readers are not locked out
    built = build_trees(docs, progress=True, max_nodes=config.max_nodes, kept=kept)
    context.log.info(
        f"{collection} trees: {len(docs) - len(kept)} parsed, {len(kept)} kept (same content, same reader)"
    )
    for rejection in built.rejections:
        context.log.warning(f"rejected {rejection.uri}: {rejection.reason}")
    if docs and not built.trees:  # stop here, before the last good trees are replaced by none
        raise dg.Failure(description=nothing_left(collection, "parsable", built.rejections), allow_retries=False)
    with catalogue.get_connection() as con:
        replace_collection(
            con,
            collection,
            {"document_nodes": nodes_table(built.trees), "document_texts": texts_table(built.trees)},
            rejection_stage="parse",
            rejections=built.rejections,
        )
        row_counts = row_count_metadata(con, "document_nodes", collection)
        report_side_table(context, con, "document_texts")
        report_side_table(context, con, "rejected_documents", stage="parse")
    nodes = [n for _, tree in built.trees for n in tree.nodes]
    sizes = sorted(((len(t.nodes), d.doc_id) for d, t in built.trees))
    sample = ""
    if sizes:
        _, sample_id = sizes[len(sizes) // 2]  # the median-sized tree is representative
        sample_tree = next(t for d, t in built.trees if d.doc_id == sample_id)
        sample = f"**{sample_id}**\n\n" + fenced(render_tree(sample_tree.nodes))
    return dg.MaterializeResult(
        metadata={
            **row_counts,
            "documents": len(built.trees),
            "nodes": len(nodes),
            "content_nodes": sum(1 for n in nodes if n.kind == "content"),
            "trees_parsed": len(docs) - len(kept),
            "trees_kept": len(kept),
            "rejected": len(built.rejections),
            "median_nodes_per_document": statistics.median([s for s, _ in sizes]) if sizes else 0,
            "depth_histogram": dg.MetadataValue.md(counter_table("depth", Counter(n.depth for n in nodes))),
            "depth_plot": dg.MetadataValue.md(
                histogram_markdown(
                    [n.depth for n in nodes],
                    title="node depth",
                    xlabel="depth",
                    bins=[d - 0.5 for d in range(max((n.depth for n in nodes), default=0) + 2)],
                )
            ),
            "blocks": dg.MetadataValue.md(counter_table("block", Counter(n.block for n in nodes))),
            "sample_tree": dg.MetadataValue.md(sample or "no documents"),
            "rejections": dg.MetadataValue.md(rejections_markdown(built.rejections)),
        }
    )
