"""Listing stored answers (the `answers` table) for `rag answers`, the service and its web page:
newest first, filtered by collection, source, strategy and words of the question."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime

import duckdb

from rag_assets.core.store.transactions import table_exists

TABLE = "answers"


@dataclass(frozen=True, slots=True)
class AnswerSummary:
    answer_id: str
    created_at: datetime
    collection: str
    source: str
    strategy: str
    question: str
    answer: str
    citations: int

    def to_dict(self) -> dict[str, object]:
        row = asdict(self)
        row["created_at"] = self.created_at.isoformat(timespec="seconds")
        return row


@dataclass(frozen=True, slots=True)
class AnswerFilter:
    collection: str | None = None
    source: str | None = None
    strategy: str | None = None
    contains: str | None = None  # words of the question, case-insensitive (% and _ match themselves)
    limit: int = 20
    within: tuple[str, ...] | None = None  # only these collections (None: every one)

    def __post_init__(self) -> None:
        if not 1 <= self.limit <= 1000:
            raise ValueError(f"limit must be between 1 and 1000, not {self.limit}")


def list_answers(con: duckdb.DuckDBPyConnection, wanted: AnswerFilter) -> list[AnswerSummary]:
    """The newest `wanted.limit` answers matching every filter given (none: no table yet)."""
    if not table_exists(con, TABLE):
        return []
    clauses, params = [], []
    for column, value in (("collection", wanted.collection), ("source", wanted.source), ("strategy", wanted.strategy)):
        if value:
            clauses.append(f"{column} = ?")
            params.append(value)
    if wanted.contains:
        clauses.append("question ILIKE ? ESCAPE '\\'")
        params.append(f"%{like_literal(wanted.contains)}%")
    if wanted.within is not None:
        clauses.append("list_contains(?, collection)")
        params.append(list(wanted.within))
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    rows = con.execute(
        f"SELECT answer_id, created_at, collection, source, strategy, question, answer, len(cited_node_ids) "
        f"FROM {TABLE} {where} ORDER BY created_at DESC, answer_id LIMIT ?",
        [*params, wanted.limit],
    ).fetchall()
    return [AnswerSummary(*row) for row in rows]


def like_literal(text: str) -> str:
    """`text` for a LIKE pattern in which it matches only itself (escape character: backslash)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def answer_facets(con: duckdb.DuckDBPyConnection, within: tuple[str, ...] | None = None) -> dict[str, list[str]]:
    """The distinct collections, sources and strategies of stored answers (the page's filters),
    of the collections `within` (None: every one)."""
    if not table_exists(con, TABLE):
        return {"collection": [], "source": [], "strategy": []}
    where, params = ("WHERE list_contains(?, collection)", [list(within)]) if within is not None else ("", [])
    return {
        column: [
            r[0] for r in con.execute(f"SELECT DISTINCT {column} FROM {TABLE} {where} ORDER BY 1", params).fetchall()
        ]
        for column in ("collection", "source", "strategy")
    }


def tree_collections(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The collections that have document trees in the catalogue (what can be searched and asked)."""
    if not table_exists(con, "document_nodes"):
        return []
    return [r[0] for r in con.execute("SELECT DISTINCT collection FROM document_nodes ORDER BY 1").fetchall()]
