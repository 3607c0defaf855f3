"""The summary `rag run` prints at the end: what each stage holds, per collection."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from rag_assets.resources.catalogue import default_catalogue

_COUNTS = {
    "documents": "SELECT count(*) FROM source_documents WHERE collection = ?",
    "rejected": "SELECT count(*) FROM rejected_documents WHERE collection = ?",
    "tree nodes": "SELECT count(*) FROM document_nodes WHERE collection = ?",
    "content nodes": "SELECT count(*) FROM document_nodes WHERE collection = ? AND kind = 'content'",
    "max depth": "SELECT coalesce(max(depth), 0) FROM document_nodes WHERE collection = ?",
    "passages": "SELECT count(*) FROM passages WHERE collection = ?",
    "questions": "SELECT count(*) FROM questions WHERE collection = ?",
}


def print_summary(console: Console, collections: list[str]) -> None:
    table = Table(title="Catalogue (dagster_home/data/catalogue.duckdb)")
    table.add_column("collection")
    for header in _COUNTS:
        table.add_column(header, justify="right")
    with default_catalogue().get_connection() as con:
        existing = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        for name in collections:
            cells = []
            for sql in _COUNTS.values():
                source = sql.split(" FROM ")[1].split()[0]
                cells.append(str(con.execute(sql, [name]).fetchone()[0]) if source in existing else "-")
            table.add_row(name, *cells)
    console.print(table)
