"""Checks guarding `document_trees`: tree validity (blocking), GX suite, nothing lost."""

import dagster as dg
from dagster_duckdb import DuckDBResource

from checks.expectations import tree_node_expectations, validate_frame
from rag_assets.core.catalogue import load_trees
from rag_assets.core.tree import tree_problems
from rag_assets.metadata import markdown_table


@dg.asset_check(
    asset="document_trees",
    blocking=True,
    description="Exactly one root per document, every parent exists and precedes its child (no "
    "cycles), headings only under headings, content non-empty, spans inside the text, in document "
    "order, and each node's text equal to the document text at its span.",
)
def document_trees_are_valid(catalogue: DuckDBResource) -> dg.AssetCheckResult:
    with catalogue.get_connection() as con:
        trees = load_trees(con)
    broken = {doc_id: tree_problems(nodes, text) for doc_id, (nodes, text) in trees.items()}
    broken = {doc_id: problems for doc_id, problems in broken.items() if problems}
    rows = [(doc_id, "; ".join(problems[:3])) for doc_id, problems in list(broken.items())[:20]]
    return dg.AssetCheckResult(
        passed=not broken,
        metadata={
            "documents_checked": len(trees),
            "invalid_documents": len(broken),
            "problems": dg.MetadataValue.md(markdown_table(["doc_id", "problems"], rows) if rows else "none"),
        },
    )


@dg.asset_check(
    asset="document_trees",
    blocking=True,
    description="Great Expectations suite on the node table: ids, unique keys, value sets.",
)
def document_nodes_expectations(catalogue: DuckDBResource) -> dg.AssetCheckResult:
    with catalogue.get_connection() as con:
        frame = con.execute("SELECT doc_id, node_id, kind, block, depth FROM document_nodes").df()
    outcome = validate_frame("document_nodes", frame, tree_node_expectations())
    return dg.AssetCheckResult(
        passed=outcome.success,
        metadata={
            "rows": len(frame),
            "suite": dg.MetadataValue.md(outcome.markdown),
            "failures": dg.MetadataValue.json(outcome.failed),
        },
    )


@dg.asset_check(
    asset="document_trees",
    description="Every source document has a tree or a recorded "
    "parse rejection: no document silently vanishes between stages.",
)
def every_document_accounted_for(catalogue: DuckDBResource) -> dg.AssetCheckResult:
    with catalogue.get_connection() as con:
        missing = con.execute(
            """SELECT s.collection, s.doc_id, s.uri FROM source_documents s
               WHERE NOT EXISTS (SELECT 1 FROM document_texts t WHERE t.doc_id = s.doc_id)
                 AND NOT EXISTS (SELECT 1 FROM rejected_documents r
                                 WHERE r.uri = s.uri AND r.stage = 'parse')
               ORDER BY 1, 2"""
        ).fetchall()
    return dg.AssetCheckResult(
        passed=not missing,
        metadata={
            "unaccounted": len(missing),
            "documents": dg.MetadataValue.md(
                markdown_table(["collection", "doc_id", "uri"], missing[:20]) if missing else "none"
            ),
        },
    )
