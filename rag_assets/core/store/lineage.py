"""The answer store: every answer is stored with what produced it.

`AnswerRecord` is exactly one row of the `answers` table, with the versions (document hashes,
index table/version/tag, adapter, models, embedder) it was produced from.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any

import duckdb
import pyarrow as pa

from rag_assets.core.answering.types import AnswerOutcome, StrategySpec
from rag_assets.core.store.document_tables import document_content_hashes
from rag_assets.core.store.schemas import ANSWER_ARROW_SCHEMA
from rag_assets.core.store.transactions import ensure_schema, insert_arrow, table_exists, transaction

TABLE = "answers"
SOURCES = ("evaluation", "cli", "service")
# the list columns: tuples in an AnswerRecord, lists in the table and in JSON
LIST_FIELDS = (
    "cited_doc_ids",
    "cited_node_ids",
    "cited_heading_paths",
    "cited_texts",
    "cited_span_starts",
    "cited_span_ends",
    "passage_ids",
    "retrieved_doc_ids",
)


@dataclass(frozen=True, slots=True)
class AnswerRecord:
    """One row of the `answers` table (same fields, same order)."""

    collection: str
    answer_id: str
    source: str  # 'evaluation' | 'cli'
    run_id: str  # '' outside Dagster
    created_at: datetime  # UTC, naive
    qid: str  # '' for ad-hoc questions
    question: str
    strategy: str
    strategy_kind: str
    grid: str  # '' | 'expand_iterations' | 'top_k'
    grid_value: int  # -1 when grid == ''
    knobs: str  # JSON
    answer: str
    evidence: str
    evidence_words: int
    cited_doc_ids: tuple[str, ...]
    cited_node_ids: tuple[int, ...]
    cited_heading_paths: tuple[str, ...]  # ' > '-joined
    cited_texts: tuple[str, ...]
    cited_span_starts: tuple[int, ...]
    cited_span_ends: tuple[int, ...]
    passage_ids: tuple[str, ...]
    retrieved_doc_ids: tuple[str, ...]
    router_prompt_tokens: int
    router_output_tokens: int
    reader_prompt_tokens: int
    reader_output_tokens: int
    engine_calls: int
    seconds: float
    expelled: int
    refused_docs: int
    versions: str  # JSON
    # JSON: contregen's sub-query tree, disco's discourse trees / graph / blueprint ('' for others)
    structure: str = ""
    answer_form: str = ""  # generated | extractive ('' before styles)
    echo: str = ""  # '' | stripped | refused | looped | garbled (core/answering/echo.py)
    supporting: int = -1  # the first `supporting` citations support the answer (-1: not attributed)
    attribution: str = ""  # markers | overlap | cross-encoder | extractive

    @property
    def versions_dict(self) -> dict[str, Any]:
        return json.loads(self.versions) if self.versions else {}

    @property
    def structure_dict(self) -> dict[str, Any]:
        return json.loads(self.structure) if self.structure else {}

    @property
    def knobs_dict(self) -> dict[str, Any]:
        return json.loads(self.knobs) if self.knobs else {}

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["created_at"] = self.created_at.isoformat()
        for name in LIST_FIELDS:
            out[name] = list(out[name])
        return out


COLUMNS = tuple(f.name for f in fields(AnswerRecord))
assert tuple(ANSWER_ARROW_SCHEMA.names) == COLUMNS, "AnswerRecord and the answers table layout differ"


def new_answer_id() -> str:
    """Short and unique: 12 hex digits of a random UUID (collision odds ~1e-14 per pair)."""
    return uuid.uuid4().hex[:12]


def utc_now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def build_record(
    outcome: AnswerOutcome,
    spec: StrategySpec,
    *,
    collection: str,
    source: str,
    versions: Mapping[str, Any],
    run_id: str = "",
    qid: str = "",
    grid: str = "",
    grid_value: int = -1,
    answer_id: str | None = None,
    created_at: datetime | None = None,
) -> AnswerRecord:
    """The answers-table row of one strategy outcome."""
    if source not in SOURCES:
        raise ValueError(f"answer source must be one of {SOURCES}, not {source!r}")
    cites = outcome.citations
    return AnswerRecord(
        collection=collection,
        answer_id=answer_id or new_answer_id(),
        source=source,
        run_id=run_id,
        created_at=created_at or utc_now(),
        qid=qid,
        question=outcome.question,
        strategy=spec.name,
        strategy_kind=spec.kind,
        grid=grid,
        grid_value=grid_value if grid else -1,
        knobs=json.dumps(spec.knobs(), sort_keys=True),
        answer=outcome.answer,
        evidence=outcome.evidence,
        evidence_words=outcome.evidence_words,
        cited_doc_ids=tuple(c.doc_id for c in cites),
        cited_node_ids=tuple(c.node_id for c in cites),
        cited_heading_paths=tuple(" > ".join(c.heading_path) for c in cites),
        cited_texts=tuple(c.text for c in cites),
        cited_span_starts=tuple(c.span_start for c in cites),
        cited_span_ends=tuple(c.span_end for c in cites),
        passage_ids=tuple(outcome.passage_ids),
        retrieved_doc_ids=tuple(outcome.retrieved_doc_ids),
        router_prompt_tokens=outcome.router_prompt_tokens,
        router_output_tokens=outcome.router_output_tokens,
        reader_prompt_tokens=outcome.reader_prompt_tokens,
        reader_output_tokens=outcome.reader_output_tokens,
        engine_calls=outcome.engine_calls,
        seconds=outcome.seconds,
        expelled=outcome.expelled,
        refused_docs=outcome.refused_docs,
        versions=json.dumps(dict(versions), sort_keys=True),
        structure=json.dumps(outcome.structure, ensure_ascii=False) if outcome.structure else "",
        answer_form=outcome.answer_form,
        echo=outcome.echo,
        supporting=outcome.supporting,
        attribution=outcome.attribution,
    )


def index_version(index: Any, collection: str) -> dict[str, Any]:
    """{table, version, tag} of a `PassageIndex` as it is now: the tag is the collection's newest
    published tag (`<collection>-<run>`) at or below the current version, else any tag on the
    current version, else None."""
    version = int(index.version())
    tags = index.tags()
    own = [(v, name) for name, v in tags.items() if name.startswith(f"{collection}-") and v <= version]
    current = sorted(name for name, v in tags.items() if v == version)
    tag = max(own)[1] if own else (current[0] if current else None)
    return {"table": index.table_name, "version": version, "tag": tag}


def document_hashes(con: duckdb.DuckDBPyConnection, collection: str, doc_ids: Sequence[str]) -> dict[str, str]:
    """doc_id -> the content hash of its current text (document_texts, else source_documents)."""
    return document_content_hashes(con, collection, doc_ids)


def answer_versions(
    con: duckdb.DuckDBPyConnection,
    collection: str,
    outcome: AnswerOutcome,
    *,
    index: Mapping[str, Any] | None,
    adapter_id: str | None,
    router_model: str | None,
    reader_model: str | None,
    embedder: str | None,
) -> dict[str, Any]:
    """The versions JSON of one answer: hashes of its retrieved and cited documents and the rest."""
    docs = [*outcome.retrieved_doc_ids, *(c.doc_id for c in outcome.citations)]
    return {
        "doc_hashes": document_hashes(con, collection, docs),
        "index": dict(index) if index else None,
        "adapter_id": adapter_id,
        "router_model": router_model,
        "reader_model": reader_model,
        "embedder": embedder,
    }


def records_table(records: Sequence[AnswerRecord]) -> pa.Table:
    return pa.table({name: [getattr(r, name) for r in records] for name in COLUMNS}, schema=ANSWER_ARROW_SCHEMA)


def store_answers(
    con: duckdb.DuckDBPyConnection, records: Sequence[AnswerRecord], *, replace: tuple[str, str] | None = None
) -> None:
    """Insert `records` in one transaction; `replace=(collection, source)` first deletes that
    collection's rows of that source. Answer ids must be unique across the table."""
    ids = [r.answer_id for r in records]
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate answer ids in the records to store")
    ensure_schema(con, [TABLE])
    _add_later_columns(con)
    with transaction(con):
        if replace is not None:
            con.execute(f"DELETE FROM {TABLE} WHERE collection = ? AND source = ?", list(replace))
        if records:
            clash = con.execute(
                f"SELECT answer_id FROM {TABLE} WHERE answer_id IN (SELECT unnest(?)) LIMIT 5", [ids]
            ).fetchall()
            if clash:
                raise ValueError(f"answer ids already stored: {[c[0] for c in clash]}")
            insert_arrow(con, TABLE, records_table(records))


# columns added after the first layout, with what older rows read
LATER_COLUMNS = {
    "structure": ("VARCHAR", "''"),
    "answer_form": ("VARCHAR", "''"),
    "echo": ("VARCHAR", "''"),
    "supporting": ("INTEGER", "-1"),
    "attribution": ("VARCHAR", "''"),
}


def _add_later_columns(con: duckdb.DuckDBPyConnection) -> None:
    """Catalogues written before a later column get it (older rows read its default)."""
    for name, (kind, default) in LATER_COLUMNS.items():
        con.execute(f"ALTER TABLE {TABLE} ADD COLUMN IF NOT EXISTS {name} {kind} DEFAULT {default}")


def _select_columns(con: duckdb.DuckDBPyConnection) -> str:
    """The SELECT list of COLUMNS; on a catalogue from before a later column (read-only readers
    cannot add it) the column reads as its default."""
    present = {
        r[0]
        for r in con.execute(
            f"SELECT column_name FROM information_schema.columns WHERE table_name = '{TABLE}' AND table_schema = current_schema()"
        ).fetchall()
    }
    return ", ".join(name if name in present else f"{_default_of(name)} AS {name}" for name in COLUMNS)


def _default_of(column: str) -> str:
    return LATER_COLUMNS[column][1] if column in LATER_COLUMNS else "''"


def _record(row: Sequence[Any]) -> AnswerRecord:
    values = dict(zip(COLUMNS, row))
    for name in LIST_FIELDS:
        values[name] = tuple(values[name] or ())
    return AnswerRecord(**values)


def load_answers(con: duckdb.DuckDBPyConnection, collection: str, source: str | None = None) -> list[AnswerRecord]:
    if not table_exists(con, TABLE):
        return []
    where, params = "WHERE collection = ?", [collection]
    if source is not None:
        where += " AND source = ?"
        params.append(source)
    rows = con.execute(
        f"SELECT {_select_columns(con)} FROM {TABLE} {where} ORDER BY created_at, answer_id", params
    ).fetchall()
    return [_record(r) for r in rows]


def unknown_answer(answer_id: str) -> KeyError:
    """The error of an answer id not in the catalogue: also what a caller without rights to the
    answer's collection is told, so that it learns nothing of the answer."""
    return KeyError(f"no answer with id {answer_id!r} in the catalogue")


def load_answer(con: duckdb.DuckDBPyConnection, answer_id: str) -> AnswerRecord:
    """The stored answer with this id (KeyError when there is none)."""
    row = None
    if table_exists(con, TABLE):
        row = con.execute(f"SELECT {_select_columns(con)} FROM {TABLE} WHERE answer_id = ?", [answer_id]).fetchone()
    if row is None:
        raise unknown_answer(answer_id)
    return _record(row)


def stored_answer_ids(con: duckdb.DuckDBPyConnection, created_before: datetime | None = None) -> list[str]:
    """The ids of the stored answers, oldest first (`created_before`: only those created before
    it, naive UTC as stored)."""
    if not table_exists(con, TABLE):
        return []
    where, params = ("WHERE created_at < ?", [created_before]) if created_before is not None else ("", [])
    return [
        r[0]
        for r in con.execute(f"SELECT answer_id FROM {TABLE} {where} ORDER BY created_at, answer_id", params).fetchall()
    ]


def load_answers_by_id(con: duckdb.DuckDBPyConnection, answer_ids: Sequence[str]) -> list[AnswerRecord]:
    """The stored answers with these ids, oldest first (an unknown id is left out)."""
    if not answer_ids or not table_exists(con, TABLE):
        return []
    rows = con.execute(
        f"SELECT {_select_columns(con)} FROM {TABLE} WHERE answer_id IN (SELECT unnest(?)) ORDER BY created_at, answer_id",
        [list(answer_ids)],
    ).fetchall()
    return [_record(r) for r in rows]
