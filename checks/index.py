"""Checks guarding `passages` (exact node alignment) and `passage_index` (rows, vectors, FTS), on
the run's collection only."""

from collections import defaultdict

import dagster as dg
from dagster_duckdb import DuckDBResource

from checks.partition import checked_partition
from rag_assets.core.index.passages import passage_problems, uncovered_content_nodes
from rag_assets.core.store.document_tables import rejected_doc_ids
from rag_assets.core.store.passage_table import load_passages
from rag_assets.core.store.publication import catalogue_passages, compare_stores, load_publication
from rag_assets.core.store.tree_tables import load_trees
from rag_assets.defs.metadata import markdown_table
from resources.embedder import EmbedderResource
from resources.vectors import VectorStoreResource


@dg.asset_check(
    asset="passages",
    blocking=True,
    description="Every passage's text equals the concatenation of its nodes' text at their spans, "
    "and every content node of every tree is covered by some passage (but for documents listed in "
    "`rejected_documents` at stage `passages`).",
)
def passages_are_exact(context: dg.AssetCheckExecutionContext, catalogue: DuckDBResource) -> dg.AssetCheckResult:
    collection = checked_partition(context)
    by_doc = defaultdict(list)
    trees: dict = {}
    if collection:
        with catalogue.get_connection() as con:
            trees = load_trees(con, collection)
            left_out = rejected_doc_ids(con, collection, "passages")  # over the passage cap, listed
            trees = {doc_id: tree for doc_id, tree in trees.items() if doc_id not in left_out}
            for passage in load_passages(con, collection):
                by_doc[passage.doc_id].append(passage)
    wrong: list[tuple[str, str]] = []
    uncovered: list[tuple[str, str]] = []
    for doc_id, (nodes, text) in trees.items():
        for passage in by_doc.get(doc_id, []):
            problems = passage_problems(passage, text)
            if problems:
                wrong.append((passage.passage_id, "; ".join(problems[:2])))
        missing = uncovered_content_nodes(nodes, by_doc.get(doc_id, []))
        if missing:
            uncovered.append((doc_id, str(missing[:10])))
    return dg.AssetCheckResult(
        passed=not wrong and not uncovered,
        metadata={
            "collection": collection or "-",
            "passages_checked": sum(len(v) for v in by_doc.values()),
            "inexact_passages": len(wrong),
            "documents_with_uncovered_nodes": len(uncovered),
            "problems": dg.MetadataValue.md(
                markdown_table(["id", "problem"], (wrong + uncovered)[:20]) if wrong or uncovered else "none"
            ),
        },
    )


@dg.asset_check(
    asset="passage_index",
    blocking=True,
    description="Every vector of the collection is finite and of the embedder's dimension; the full-text index exists.",
)
def index_vectors_and_fts(
    context: dg.AssetCheckExecutionContext, embedder: EmbedderResource, vectors: VectorStoreResource
) -> dg.AssetCheckResult:
    collection = checked_partition(context)
    model = embedder.get()
    index = vectors.index(model)
    bad_vectors = index.check_vectors(collection) if collection else []
    has_fts = index.has_fts_index()
    return dg.AssetCheckResult(
        passed=collection is not None and not bad_vectors and has_fts,
        metadata={
            "collection": collection or "-",
            "dimension": model.dimension,
            "bad_vectors": len(bad_vectors),
            "examples": dg.MetadataValue.json(bad_vectors[:10]),
            "fts_index": has_fts,
        },
    )


@dg.asset_check(
    asset="passage_index",
    blocking=True,
    description="This collection's two stores agree: the LanceDB rows are exactly the catalogue's "
    "passages (same ids, same content hashes, no duplicate), and the published index version "
    "records the same passages (a run killed between DuckDB and LanceDB fails here).",
)
def index_matches_catalogue(
    context: dg.AssetCheckExecutionContext,
    catalogue: DuckDBResource,
    embedder: EmbedderResource,
    vectors: VectorStoreResource,
) -> dg.AssetCheckResult:
    collection = checked_partition(context)
    if collection is None:
        return dg.AssetCheckResult(passed=False, metadata={"reason": "passage_index was never materialized"})
    with catalogue.get_connection() as con:
        expected = catalogue_passages(con, collection)
        publication = load_publication(con, collection)
    actual = vectors.index(embedder.get()).passage_pairs(collection)
    stores = compare_stores(collection, expected, actual, publication)
    examples = [("missing from LanceDB", pid) for pid in stores.missing_from_index[:10]] + [
        ("not in catalogue", pid) for pid in stores.not_in_catalogue[:10]
    ]
    return dg.AssetCheckResult(
        passed=stores.agree,
        metadata={
            "collection": collection,
            "catalogue_passages": stores.catalogue_passages,
            "index_rows": stores.index_rows,
            "missing_from_index": len(stores.missing_from_index),
            "not_in_catalogue": len(stores.not_in_catalogue),
            "duplicate_rows": stores.duplicate_rows,
            "published_version": publication.version if publication else -1,
            "published_matches_catalogue": stores.published_matches,
            "examples": dg.MetadataValue.md(
                markdown_table(["problem", "passage_id"], examples) if examples else "none"
            ),
        },
    )
