"""The question tables: `questions` (the labelled sets) and `synthetic_questions` (made from the corpus)."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pyarrow as pa

from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.store.schemas import QUESTION_TABLES
from rag_assets.core.store.transactions import present_columns, table_exists


def questions_table(collection: str, questions: Sequence[Question]) -> pa.Table:
    strings = pa.list_(pa.string())
    return pa.table(
        {
            "collection": pa.array([collection] * len(questions), pa.string()),
            "qid": pa.array([q.qid for q in questions], pa.string()),
            "query": pa.array([q.query for q in questions], pa.string()),
            "answers": pa.array([list(q.answers) for q in questions], strings),
            "evidences": pa.array([list(q.evidences) for q in questions], strings),
            "section_path": pa.array([list(q.section_path) for q in questions], strings),
            "gold_doc": pa.array([q.gold_doc for q in questions], pa.string()),
            "not_answerable": pa.array([q.not_answerable for q in questions], pa.bool_()),
            "split": pa.array([q.split for q in questions], pa.string()),
            "gold_pages": pa.array([list(q.gold_pages) for q in questions], pa.list_(pa.int32())),
            "question_type": pa.array([q.question_type for q in questions], pa.string()),
        }
    )


def load_question_rows(
    con: duckdb.DuckDBPyConnection, collection: str, split: str | None = None, *, table: str = "questions"
) -> list[Question]:
    """The collection's questions; `split` is one split or several joined by commas ("dev,test");
    `table`: `questions` (the labelled sets) or `synthetic_questions` (made from the corpus)."""
    if table not in QUESTION_TABLES:
        raise ValueError(f"{table!r} is not a question table ({QUESTION_TABLES})")
    if not table_exists(con, table):  # e.g. synthetic questions never made; readers may be read-only
        return []
    params: list = [collection]
    where = "WHERE collection = ?"
    splits = [s.strip() for s in (split or "").split(",") if s.strip()]
    if splits:
        where += f" AND split IN ({', '.join('?' * len(splits))})"
        params += splits
    columns = present_columns(con, table)
    pages = "gold_pages" if "gold_pages" in columns else "[]::INTEGER[]"  # a catalogue from before gold pages
    kind = "question_type" if "question_type" in columns else "''"  # and from before question types
    rows = con.execute(
        f"SELECT qid, query, answers, evidences, section_path, gold_doc, not_answerable, split, {pages}, {kind} "
        f"FROM {table} {where} ORDER BY qid",
        params,
    ).fetchall()
    return [
        Question(r[0], r[1], tuple(r[2]), tuple(r[3]), tuple(r[4]), r[5], r[6], r[7], tuple(r[8] or ()), r[9] or "")
        for r in rows
    ]


def question_collections(con: duckdb.DuckDBPyConnection, *, table: str = "questions") -> list[str]:
    """The collections with rows in a question table, sorted (none when it does not exist)."""
    if table not in QUESTION_TABLES:
        raise ValueError(f"{table!r} is not a question table ({QUESTION_TABLES})")
    if not table_exists(con, table):
        return []
    return [r[0] for r in con.execute(f"SELECT DISTINCT collection FROM {table} ORDER BY 1").fetchall()]
