"""The DuckDB catalogue: table layouts and atomic per-collection replacement.

Every stage owns its tables and rewrites a collection's rows in ONE transaction, so a killed run
leaves the previous good version readable (DuckDB rolls the open transaction back).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property

import duckdb
import pandas as pd
import pyarrow as pa

from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.corpus.sources import Rejection, SourceDocument
from rag_assets.core.corpus.tree import DocumentTree, TreeNode
from rag_assets.core.index.passages import Passage, passage_columns

SCHEMA: dict[str, str] = {
    "source_documents": """
        collection VARCHAR NOT NULL, doc_id VARCHAR NOT NULL, uri VARCHAR NOT NULL,
        format VARCHAR NOT NULL, title VARCHAR NOT NULL, content_hash VARCHAR NOT NULL,
        size_bytes BIGINT NOT NULL, text VARCHAR NOT NULL""",
    "rejected_documents": """
        collection VARCHAR NOT NULL, uri VARCHAR NOT NULL, stage VARCHAR NOT NULL,
        reason VARCHAR NOT NULL""",
    "document_nodes": """
        collection VARCHAR NOT NULL, doc_id VARCHAR NOT NULL, node_id INTEGER NOT NULL,
        parent_id INTEGER, kind VARCHAR NOT NULL, block VARCHAR NOT NULL, depth INTEGER NOT NULL,
        text VARCHAR NOT NULL, heading_path VARCHAR[] NOT NULL, span_start INTEGER NOT NULL,
        span_end INTEGER NOT NULL""",
    "document_texts": """
        collection VARCHAR NOT NULL, doc_id VARCHAR NOT NULL, content_hash VARCHAR NOT NULL,
        text VARCHAR NOT NULL""",
    "passages": """
        collection VARCHAR NOT NULL, passage_id VARCHAR NOT NULL, doc_id VARCHAR NOT NULL,
        node_ids INTEGER[] NOT NULL, span_starts INTEGER[] NOT NULL, span_ends INTEGER[] NOT NULL,
        heading_path VARCHAR[] NOT NULL, text VARCHAR NOT NULL, word_count INTEGER NOT NULL,
        content_hash VARCHAR NOT NULL""",
    "routing_subtrees": """
        collection VARCHAR NOT NULL, subtree_id VARCHAR NOT NULL, qid VARCHAR NOT NULL,
        query VARCHAR NOT NULL, doc_id VARCHAR NOT NULL, view VARCHAR NOT NULL,
        rendered VARCHAR NOT NULL, visible_ids INTEGER[] NOT NULL, collapsed_ids INTEGER[] NOT NULL,
        seen_ids INTEGER[] NOT NULL""",
    "routing_actions": """
        collection VARCHAR NOT NULL, subtree_id VARCHAR NOT NULL, qid VARCHAR NOT NULL,
        fold VARCHAR NOT NULL, teacher VARCHAR NOT NULL, target VARCHAR NOT NULL,
        answer_ids INTEGER[] NOT NULL, expand_ids INTEGER[] NOT NULL, kind VARCHAR NOT NULL,
        raw VARCHAR NOT NULL""",
    "router_adapters": """
        collection VARCHAR NOT NULL, adapter_id VARCHAR NOT NULL, path VARCHAR NOT NULL,
        base_model VARCHAR NOT NULL, created_at TIMESTAMP NOT NULL""",
    "router_metrics": """
        collection VARCHAR NOT NULL, model VARCHAR NOT NULL, samples INTEGER NOT NULL,
        ans_f1 DOUBLE NOT NULL, exp_pre DOUBLE NOT NULL, ref_acc DOUBLE NOT NULL,
        expelled_per_output DOUBLE NOT NULL, collapsed_rate DOUBLE NOT NULL,
        parse_failure_rate DOUBLE NOT NULL""",
    "answers": """
        collection VARCHAR NOT NULL, answer_id VARCHAR NOT NULL, source VARCHAR NOT NULL,
        run_id VARCHAR NOT NULL, created_at TIMESTAMP NOT NULL, qid VARCHAR NOT NULL,
        question VARCHAR NOT NULL, strategy VARCHAR NOT NULL, strategy_kind VARCHAR NOT NULL,
        grid VARCHAR NOT NULL, grid_value INTEGER NOT NULL, knobs VARCHAR NOT NULL,
        answer VARCHAR NOT NULL, evidence VARCHAR NOT NULL, evidence_words INTEGER NOT NULL,
        cited_doc_ids VARCHAR[] NOT NULL, cited_node_ids INTEGER[] NOT NULL,
        cited_heading_paths VARCHAR[] NOT NULL, cited_texts VARCHAR[] NOT NULL,
        cited_span_starts INTEGER[] NOT NULL, cited_span_ends INTEGER[] NOT NULL,
        passage_ids VARCHAR[] NOT NULL, retrieved_doc_ids VARCHAR[] NOT NULL,
        router_prompt_tokens INTEGER NOT NULL, router_output_tokens INTEGER NOT NULL,
        reader_prompt_tokens INTEGER NOT NULL, reader_output_tokens INTEGER NOT NULL,
        engine_calls INTEGER NOT NULL, seconds DOUBLE NOT NULL, expelled INTEGER NOT NULL,
        refused_docs INTEGER NOT NULL, versions VARCHAR NOT NULL, structure VARCHAR NOT NULL DEFAULT ''""",
    "questions": """
        collection VARCHAR NOT NULL, qid VARCHAR NOT NULL, query VARCHAR NOT NULL,
        answers VARCHAR[] NOT NULL, evidences VARCHAR[] NOT NULL, section_path VARCHAR[] NOT NULL,
        gold_doc VARCHAR NOT NULL, not_answerable BOOLEAN NOT NULL, split VARCHAR NOT NULL""",
    "synthetic_questions": """
        collection VARCHAR NOT NULL, qid VARCHAR NOT NULL, query VARCHAR NOT NULL,
        answers VARCHAR[] NOT NULL, evidences VARCHAR[] NOT NULL, section_path VARCHAR[] NOT NULL,
        gold_doc VARCHAR NOT NULL, not_answerable BOOLEAN NOT NULL, split VARCHAR NOT NULL""",
}


QUESTION_TABLES = ("questions", "synthetic_questions")


def table_exists(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    return bool(
        con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = ? AND table_schema = current_schema()",
            [table],
        ).fetchone()[0]
    )


def table_columns(table: str) -> list[tuple[str, str, bool]]:
    """(name, DuckDB type, nullable) of each column of a catalogue table, in declaration order."""
    columns = []
    for declaration in SCHEMA[table].split(","):
        name, kind, *rest = declaration.split()
        columns.append((name, kind, "NOT NULL" not in " ".join(rest).upper()))
    return columns


def count_rows(con: duckdb.DuckDBPyConnection, table: str, collection: str | None = None) -> int:
    """Rows of a catalogue table, of one collection when given (0 when the table does not exist)."""
    if table not in SCHEMA:
        raise ValueError(f"{table!r} is not a catalogue table")
    if not table_exists(con, table):
        return 0
    where, params = ("WHERE collection = ?", [collection]) if collection is not None else ("", [])
    return int(con.execute(f"SELECT count(*) FROM {table} {where}", params).fetchone()[0])


def ensure_schema(con: duckdb.DuckDBPyConnection, tables: Sequence[str] | None = None) -> None:
    for table in tables or SCHEMA:
        con.execute(f"CREATE TABLE IF NOT EXISTS {table} ({SCHEMA[table]})")


def replace_collection(
    con: duckdb.DuckDBPyConnection,
    collection: str,
    rows: dict[str, pa.Table],
    *,
    rejection_stage: str | None = None,
    rejections: Sequence[Rejection] = (),
) -> None:
    """Swap one collection's rows in several tables (and its rejections of one stage) atomically."""
    ensure_schema(con)
    con.execute("BEGIN TRANSACTION")
    try:
        for table, data in rows.items():
            con.execute(f"DELETE FROM {table} WHERE collection = ?", [collection])
            if data.num_rows:
                con.register("_incoming", data)
                con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _incoming")
                con.unregister("_incoming")
        if rejection_stage is not None:
            con.execute(
                "DELETE FROM rejected_documents WHERE collection = ? AND stage = ?",
                [collection, rejection_stage],
            )
            if rejections:
                con.register("_incoming", rejections_table(rejections))
                con.execute("INSERT INTO rejected_documents BY NAME SELECT * FROM _incoming")
                con.unregister("_incoming")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def documents_table(docs: Sequence[SourceDocument]) -> pa.Table:
    fields = ("collection", "doc_id", "uri", "format", "title", "content_hash", "size_bytes", "text")
    return pa.table({f: [getattr(d, f) for d in docs] for f in fields})


def rejections_table(rejections: Sequence[Rejection]) -> pa.Table:
    fields = ("collection", "uri", "stage", "reason")
    return pa.table({f: [getattr(r, f) for r in rejections] for f in fields})


def nodes_table(trees: Sequence[tuple[SourceDocument, DocumentTree]]) -> pa.Table:
    columns: dict[str, list] = {
        k: []
        for k in (
            "collection",
            "doc_id",
            "node_id",
            "parent_id",
            "kind",
            "block",
            "depth",
            "text",
            "heading_path",
            "span_start",
            "span_end",
        )
    }
    for doc, tree in trees:
        for n in tree.nodes:
            columns["collection"].append(doc.collection)
            columns["doc_id"].append(doc.doc_id)
            columns["node_id"].append(n.node_id)
            columns["parent_id"].append(n.parent_id)
            columns["kind"].append(n.kind)
            columns["block"].append(n.block)
            columns["depth"].append(n.depth)
            columns["text"].append(n.text)
            columns["heading_path"].append(list(n.heading_path))
            columns["span_start"].append(n.span_start)
            columns["span_end"].append(n.span_end)
    schema = pa.schema(
        [
            ("collection", pa.string()),
            ("doc_id", pa.string()),
            ("node_id", pa.int32()),
            ("parent_id", pa.int32()),
            ("kind", pa.string()),
            ("block", pa.string()),
            ("depth", pa.int32()),
            ("text", pa.string()),
            ("heading_path", pa.list_(pa.string())),
            ("span_start", pa.int32()),
            ("span_end", pa.int32()),
        ]
    )
    return pa.table(columns, schema=schema)


def texts_table(trees: Sequence[tuple[SourceDocument, DocumentTree]]) -> pa.Table:
    return pa.table(
        {
            "collection": [d.collection for d, _ in trees],
            "doc_id": [d.doc_id for d, _ in trees],
            "content_hash": [d.content_hash for d, _ in trees],
            "text": [t.text for _, t in trees],
        }
    )


def passages_table(collection: str, passages: Sequence[Passage]) -> pa.Table:
    schema = pa.schema(
        [
            ("collection", pa.string()),
            ("passage_id", pa.string()),
            ("doc_id", pa.string()),
            ("node_ids", pa.list_(pa.int32())),
            ("span_starts", pa.list_(pa.int32())),
            ("span_ends", pa.list_(pa.int32())),
            ("heading_path", pa.list_(pa.string())),
            ("text", pa.string()),
            ("word_count", pa.int32()),
            ("content_hash", pa.string()),
        ]
    )
    return pa.table(passage_columns(passages, collection), schema=schema)


def load_passages(con: duckdb.DuckDBPyConnection, collection: str | None = None) -> list[Passage]:
    where, params = ("WHERE collection = ?", [collection]) if collection else ("", [])
    rows = con.execute(
        "SELECT passage_id, doc_id, node_ids, span_starts, span_ends, heading_path, text, word_count, "
        f"content_hash FROM passages {where} ORDER BY doc_id, passage_id",
        params,
    ).fetchall()
    return [
        Passage(
            passage_id=r[0],
            doc_id=r[1],
            node_ids=tuple(r[2]),
            spans=tuple(zip(r[3], r[4])),
            heading_path=tuple(r[5]),
            text=r[6],
            word_count=r[7],
            content_hash=r[8],
        )
        for r in rows
    ]


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
    rows = con.execute(
        "SELECT qid, query, answers, evidences, section_path, gold_doc, not_answerable, split "
        f"FROM {table} {where} ORDER BY qid",
        params,
    ).fetchall()
    return [Question(r[0], r[1], tuple(r[2]), tuple(r[3]), tuple(r[4]), r[5], r[6], r[7]) for r in rows]


def load_documents(con: duckdb.DuckDBPyConnection, collection: str | None = None) -> list[SourceDocument]:
    where, params = ("WHERE collection = ?", [collection]) if collection else ("", [])
    rows = con.execute(
        "SELECT doc_id, collection, uri, format, title, content_hash, size_bytes, text "
        f"FROM source_documents {where} ORDER BY collection, doc_id",
        params,
    ).fetchall()
    return [SourceDocument(*row) for row in rows]


def load_trees(
    con: duckdb.DuckDBPyConnection, collection: str | None = None, doc_ids: Sequence[str] | None = None
) -> dict[str, tuple[list[TreeNode], str]]:
    """doc_id -> (nodes in document order, normalised text) read back from the catalogue."""
    clauses, params = [], []
    if collection:
        clauses.append("n.collection = ?")
        params.append(collection)
    if doc_ids is not None:
        clauses.append("n.doc_id IN (SELECT unnest(?))")
        params.append(list(doc_ids))
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    rows = con.execute(
        "SELECT n.doc_id, n.node_id, n.parent_id, n.kind, n.block, n.depth, n.text, n.heading_path, "
        "n.span_start, n.span_end FROM document_nodes n "
        f"{where} ORDER BY n.doc_id, n.node_id",
        params,
    ).fetchall()
    text_clauses = [c.replace("n.", "") for c in clauses]  # the same filter on document_texts
    texts = dict(
        con.execute(
            "SELECT doc_id, text FROM document_texts" + (f" WHERE {' AND '.join(text_clauses)}" if clauses else ""),
            params,
        ).fetchall()
    )
    out: dict[str, tuple[list[TreeNode], str]] = {}
    for doc_id, *fields in rows:
        node = TreeNode(
            fields[0], fields[1], fields[2], fields[3], fields[4], fields[5], tuple(fields[6]), fields[7], fields[8]
        )
        out.setdefault(doc_id, ([], texts.get(doc_id, "")))[0].append(node)
    return out


# The per-model routing-quality columns of `router_metrics` (after `samples`), in table order.
ROUTER_METRIC_COLUMNS: tuple[str, ...] = tuple(
    name for name, kind, _ in table_columns("router_metrics") if kind == "DOUBLE"
)


def load_router_metrics(con: duckdb.DuckDBPyConnection, collection: str) -> dict[str, dict[str, float]]:
    """model -> {"samples": n, <metric>: value} of one collection (models in descending name order)."""
    if not table_exists(con, "router_metrics"):
        return {}
    columns = ("samples", *ROUTER_METRIC_COLUMNS)
    rows = con.execute(
        f"SELECT model, {', '.join(columns)} FROM router_metrics WHERE collection = ? ORDER BY model DESC",
        [collection],
    ).fetchall()
    return {model: dict(zip(columns, values)) for model, *values in rows}


def collection_frame(
    con: duckdb.DuckDBPyConnection, table: str, columns: Sequence[str], collection: str
) -> pd.DataFrame:
    """Some columns of one collection's rows of a catalogue table, as a DataFrame (for GX suites)."""
    known = {name for name, _, _ in table_columns(table)}
    unknown = [c for c in columns if c not in known]
    if unknown:
        raise ValueError(f"{table} has no column(s) {unknown}")
    if not table_exists(con, table):
        return pd.DataFrame(columns=list(columns))
    return con.execute(f"SELECT {', '.join(columns)} FROM {table} WHERE collection = ?", [collection]).df()


def count_by(con: duckdb.DuckDBPyConnection, table: str, column: str, collection: str) -> dict[str, int]:
    """value -> rows of one collection's rows of `table`, grouped by `column`."""
    if column not in {name for name, _, _ in table_columns(table)}:
        raise ValueError(f"{table} has no column {column!r}")
    if not table_exists(con, table):
        return {}
    rows = con.execute(f"SELECT {column}, count(*) FROM {table} WHERE collection = ? GROUP BY 1", [collection])
    return dict(rows.fetchall())


def unaccounted_documents(con: duckdb.DuckDBPyConnection, collection: str) -> list[tuple[str, str]]:
    """(doc_id, uri) of the collection's source documents with neither a tree nor a parse rejection."""
    ensure_schema(con, ["source_documents", "document_texts", "rejected_documents"])
    return con.execute(
        """SELECT s.doc_id, s.uri FROM source_documents s
           WHERE s.collection = ?
             AND NOT EXISTS (SELECT 1 FROM document_texts t WHERE t.collection = s.collection AND t.doc_id = s.doc_id)
             AND NOT EXISTS (SELECT 1 FROM rejected_documents r
                             WHERE r.collection = s.collection AND r.uri = s.uri AND r.stage = 'parse')
           ORDER BY 1""",
        [collection],
    ).fetchall()


def teacher_failures(con: duckdb.DuckDBPyConnection, collection: str) -> list[tuple[str, int, int]]:
    """(teacher, labels, failed labels) of one collection's routing actions."""
    if not table_exists(con, "routing_actions"):
        return []
    return con.execute(
        "SELECT teacher, count(*), count(*) FILTER (WHERE kind = 'failed') FROM routing_actions "
        "WHERE collection = ? GROUP BY 1 ORDER BY 1",
        [collection],
    ).fetchall()


def load_usable_targets(con: duckdb.DuckDBPyConnection, collection: str, sample_columns: Sequence[str]) -> list[tuple]:
    """(*`sample_columns` of routing_subtrees, teacher target) of the collection's usable routing
    actions (kind not 'failed': failed teacher outputs are never trained on), by subtree id."""
    known = {name for name, _, _ in table_columns("routing_subtrees")}
    if not set(sample_columns) <= known:
        raise ValueError(f"routing_subtrees has no column(s) {sorted(set(sample_columns) - known)}")
    if not (table_exists(con, "routing_actions") and table_exists(con, "routing_subtrees")):
        return []
    return con.execute(
        f"SELECT {', '.join('s.' + c for c in sample_columns)}, a.target "
        "FROM routing_actions a JOIN routing_subtrees s USING (collection, subtree_id) "
        "WHERE a.collection = ? AND a.kind <> 'failed' ORDER BY s.subtree_id",
        [collection],
    ).fetchall()


# What `rag run` reports per collection: label -> (table, extra condition); all counts of one collection.
STAGE_COUNTS: dict[str, tuple[str, str]] = {
    "documents": ("source_documents", ""),
    "rejected documents": ("rejected_documents", ""),
    "tree nodes": ("document_nodes", ""),
    "content nodes": ("document_nodes", "kind = 'content'"),
    "passages": ("passages", ""),
    "questions": ("questions", ""),
    "synthetic questions": ("synthetic_questions", ""),
    "routing views": ("routing_subtrees", ""),
    "routing labels": ("routing_actions", ""),
    "trained routers": ("router_adapters", ""),
    "evaluation answers": ("answers", "source = 'evaluation'"),
}


def stage_counts(con: duckdb.DuckDBPyConnection, collection: str) -> dict[str, int | None]:
    """label -> rows of the collection at each stage (None: the stage's table does not exist yet)."""
    out: dict[str, int | None] = {}
    for label, (table, condition) in STAGE_COUNTS.items():
        if not table_exists(con, table):
            out[label] = None
            continue
        where = "collection = ?" + (f" AND {condition}" if condition else "")
        out[label] = int(con.execute(f"SELECT count(*) FROM {table} WHERE {where}", [collection]).fetchone()[0])
    return out


def load_tree_nodes(
    con: duckdb.DuckDBPyConnection, collection: str, doc_ids: Sequence[str] | None = None
) -> dict[str, list[TreeNode]]:
    """doc_id -> tree nodes in document order (the trees without their texts)."""
    return {doc_id: nodes for doc_id, (nodes, _) in load_trees(con, collection, doc_ids).items()}


def tree_doc_ids(con: duckdb.DuckDBPyConnection, collection: str) -> list[str]:
    """The ids of the collection's documents that have a tree, sorted."""
    if not table_exists(con, "document_nodes"):
        return []
    rows = con.execute(
        "SELECT DISTINCT doc_id FROM document_nodes WHERE collection = ? ORDER BY doc_id", [collection]
    ).fetchall()
    return [r[0] for r in rows]


def _by_doc_id(
    con: duckdb.DuckDBPyConnection, table: str, columns: str, collection: str, doc_ids: Sequence[str]
) -> list[tuple]:
    wanted = sorted(set(doc_ids))
    if not wanted or not table_exists(con, table):
        return []
    return con.execute(
        f"SELECT doc_id, {columns} FROM {table} WHERE collection = ? AND doc_id IN (SELECT unnest(?))",
        [collection, wanted],
    ).fetchall()


def document_content_hashes(con: duckdb.DuckDBPyConnection, collection: str, doc_ids: Sequence[str]) -> dict[str, str]:
    """doc_id -> content hash of its current text: the parsed text's (document_texts) where there
    is one, else the source document's."""
    out = {doc: h for doc, h in _by_doc_id(con, "source_documents", "content_hash", collection, doc_ids)}
    out.update({doc: h for doc, h in _by_doc_id(con, "document_texts", "content_hash", collection, doc_ids)})
    return out


def document_texts(
    con: duckdb.DuckDBPyConnection, collection: str, doc_ids: Sequence[str]
) -> dict[str, tuple[str, str]]:
    """doc_id -> (content hash, normalised text) of the documents that still have a tree."""
    return {
        doc: (h, text) for doc, h, text in _by_doc_id(con, "document_texts", "content_hash, text", collection, doc_ids)
    }


def document_sources(
    con: duckdb.DuckDBPyConnection, collection: str, doc_ids: Sequence[str]
) -> dict[str, tuple[str, str]]:
    """doc_id -> (title, uri) of the source documents still ingested."""
    return {
        doc: (title, uri) for doc, title, uri in _by_doc_id(con, "source_documents", "title, uri", collection, doc_ids)
    }


class CatalogueTrees(Mapping[str, Sequence[TreeNode]]):
    """doc_id -> tree nodes of one collection, read from the catalogue on first use (a question
    touches a handful of documents; a collection may hold millions)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, collection: str) -> None:
        self.con = con
        self.collection = collection
        self._cache: dict[str, list[TreeNode]] = {}

    @cached_property
    def _ids(self) -> list[str]:
        return tree_doc_ids(self.con, self.collection)

    def __getitem__(self, doc_id: str) -> Sequence[TreeNode]:
        if doc_id not in self._cache:
            found = load_tree_nodes(self.con, self.collection, [doc_id])
            if doc_id not in found:
                raise KeyError(doc_id)
            self._cache[doc_id] = found[doc_id]
        return self._cache[doc_id]

    def __contains__(self, doc_id: object) -> bool:
        if not isinstance(doc_id, str):
            return False
        try:
            self[doc_id]
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)
