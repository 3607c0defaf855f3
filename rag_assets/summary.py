"""The summary `rag run` prints at the end: what each stage holds, per collection."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from rag_assets.resources.catalogue import default_catalogue


def print_summary(console: Console, collections: list[str]) -> None:
    with default_catalogue().get_connection() as con:
        rows = con.execute(
            """SELECT c.collection,
                      (SELECT count(*) FROM source_documents s WHERE s.collection = c.collection),
                      (SELECT count(*) FROM rejected_documents r WHERE r.collection = c.collection),
                      (SELECT count(*) FROM document_nodes n WHERE n.collection = c.collection),
                      (SELECT count(*) FROM document_nodes n WHERE n.collection = c.collection AND n.kind = 'content'),
                      (SELECT coalesce(max(depth), 0) FROM document_nodes n WHERE n.collection = c.collection)
               FROM (SELECT unnest(?) AS collection) c""",
            [collections],
        ).fetchall()
    table = Table(title="Catalogue")
    for header in ("collection", "documents", "rejected", "tree nodes", "content nodes", "max depth"):
        table.add_column(header, justify="right" if header != "collection" else "left")
    for row in rows:
        table.add_row(*map(str, row))
    console.print(table)
