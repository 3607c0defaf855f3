"""Checks guarding `document_trees` (the run's collection only): tree validity (blocking), GX
suite, nothing lost; and `document_cards`: a card for every document."""

import dagster as dg
from dagster_duckdb import DuckDBResource

from checks.expectations import tree_node_expectations, validate_frame
from checks.partition import checked_partition
from rag_assets.core.corpus.tree import tree_problems
from rag_assets.core.store.card_tables import load_cards
from rag_assets.core.store.collections import collection_frame
from rag_assets.core.store.document_tables import unaccounted_documents
from rag_assets.core.store.tree_tables import load_trees, tree_doc_ids
from rag_assets.defs.metadata import markdown_table


@dg.asset_check(
    asset="document_trees",
    blocking=True,
    description="Exactly one root per document, every parent exists and precedes its child (no "
    "cycles), headings only under headings, content non-empty, spans inside the text, in document "
    "order, and each node's text equal to the document text at its span.",
)
def document_trees_are_valid(context: dg.AssetCheckExecutionContext, catalogue: DuckDBResource) -> dg.AssetCheckResult:
    collection = checked_partition(context)
    with catalogue.get_connection() as con:
        trees = load_trees(con, collection) if collection else {}
    broken = {doc_id: tree_problems(nodes, text) for doc_id, (nodes, text) in trees.items()}
    broken = {doc_id: problems for doc_id, problems in broken.items() if problems}
    rows = [(doc_id, "; ".join(problems[:3])) for doc_id, problems in list(broken.items())[:20]]
    return dg.AssetCheckResult(
        passed=not broken,
        metadata={
            "collection": collection or "-",
            "documents_checked": len(trees),
            "invalid_documents": len(broken),
            "problems": dg.MetadataValue.md(markdown_table(["doc_id", "problems"], rows) if rows else "none"),
        },
    )


@dg.asset_check(
    asset="document_trees",
    blocking=True,
    description="Great Expectations suite on the collection's node table: ids, unique keys, value sets.",
)
def document_nodes_expectations(
    context: dg.AssetCheckExecutionContext, catalogue: DuckDBResource
) -> dg.AssetCheckResult:
    collection = checked_partition(context)
    with catalogue.get_connection() as con:
        frame = collection_frame(
            con, "document_nodes", ["doc_id", "node_id", "kind", "block", "depth"], collection or ""
        )
    outcome = validate_frame("document_nodes", frame, tree_node_expectations())
    return dg.AssetCheckResult(
        passed=outcome.success,
        metadata={
            "collection": collection or "-",
            "rows": len(frame),
            "suite": dg.MetadataValue.md(outcome.markdown),
            "failures": dg.MetadataValue.json(outcome.failed),
        },
    )


@dg.asset_check(
    asset="document_trees",
    description="Every source document of the collection has a tree or a recorded parse rejection: "
    "no document silently vanishes between stages.",
)
def every_document_accounted_for(
    context: dg.AssetCheckExecutionContext, catalogue: DuckDBResource
) -> dg.AssetCheckResult:
    collection = checked_partition(context)
    with catalogue.get_connection() as con:
        missing = unaccounted_documents(con, collection) if collection else []
    return dg.AssetCheckResult(
        passed=not missing,
        metadata={
            "collection": collection or "-",
            "unaccounted": len(missing),
            "documents": dg.MetadataValue.md(markdown_table(["doc_id", "uri"], missing[:20]) if missing else "none"),
        },
    )


@dg.asset_check(
    asset="document_cards",
    description="Every document with a tree has a card (failing: an error); a card with no title fails as a "
    "warning (its document said nothing a title could be read from: give it one in cards.yaml).",
)
def every_document_has_a_card(context: dg.AssetCheckExecutionContext, catalogue: DuckDBResource) -> dg.AssetCheckResult:
    collection = checked_partition(context)
    with catalogue.get_connection() as con:
        documents = tree_doc_ids(con, collection) if collection else []
        cards = load_cards(con, [collection]) if collection else []
    carded = {c.doc_id for c in cards}
    missing = [d for d in documents if d not in carded]
    untitled = [c.doc_id for c in cards if not c.title]
    return dg.AssetCheckResult(
        passed=not missing and not untitled,
        severity=dg.AssetCheckSeverity.ERROR if missing else dg.AssetCheckSeverity.WARN,
        metadata={
            "collection": collection or "-",
            "documents": len(documents),
            "cards": len(cards),
            "without_card": len(missing),
            "untitled": len(untitled),
            "examples": dg.MetadataValue.md(
                markdown_table(
                    ["doc_id", "problem"],
                    [(d, "no card") for d in missing[:10]] + [(d, "no title") for d in untitled[:10]],
                )
                if missing or untitled
                else "none"
            ),
        },
    )
