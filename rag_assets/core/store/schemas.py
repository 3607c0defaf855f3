"""Every catalogue table's layout, in one place: the DuckDB column declarations and the Arrow
schemas the tables are written with (the passage schema is shared by the catalogue's `passages`
table and the LanceDB passage index)."""

from __future__ import annotations

import pyarrow as pa

_QUESTION_COLUMNS = """
        collection VARCHAR NOT NULL, qid VARCHAR NOT NULL, query VARCHAR NOT NULL,
        answers VARCHAR[] NOT NULL, evidences VARCHAR[] NOT NULL, section_path VARCHAR[] NOT NULL,
        gold_doc VARCHAR NOT NULL, not_answerable BOOLEAN NOT NULL, split VARCHAR NOT NULL,
        gold_pages INTEGER[] DEFAULT [], question_type VARCHAR DEFAULT ''"""

SCHEMA: dict[str, str] = {
    "source_documents": """
        collection VARCHAR NOT NULL, doc_id VARCHAR NOT NULL, uri VARCHAR NOT NULL,
        format VARCHAR NOT NULL, title VARCHAR NOT NULL, content_hash VARCHAR NOT NULL,
        size_bytes BIGINT NOT NULL, text VARCHAR NOT NULL, reader_version VARCHAR DEFAULT ''""",
    "rejected_documents": """
        collection VARCHAR NOT NULL, uri VARCHAR NOT NULL, stage VARCHAR NOT NULL,
        reason VARCHAR NOT NULL""",
    "document_nodes": """
        collection VARCHAR NOT NULL, doc_id VARCHAR NOT NULL, node_id INTEGER NOT NULL,
        parent_id INTEGER, kind VARCHAR NOT NULL, block VARCHAR NOT NULL, depth INTEGER NOT NULL,
        text VARCHAR NOT NULL, heading_path VARCHAR[] NOT NULL, span_start INTEGER NOT NULL,
        span_end INTEGER NOT NULL, page_start INTEGER DEFAULT 0, page_end INTEGER DEFAULT 0""",
    "document_texts": """
        collection VARCHAR NOT NULL, doc_id VARCHAR NOT NULL, content_hash VARCHAR NOT NULL,
        text VARCHAR NOT NULL, reader_version VARCHAR DEFAULT ''""",
    # what each document would be filed under, read from its first pages (core/corpus/document_cards.py)
    "document_cards": """
        collection VARCHAR NOT NULL, doc_id VARCHAR NOT NULL, title VARCHAR NOT NULL,
        organisation VARCHAR NOT NULL, kind VARCHAR NOT NULL, fiscal_year INTEGER, quarter INTEGER,
        date VARCHAR NOT NULL, product VARCHAR NOT NULL, model VARCHAR NOT NULL, version VARCHAR NOT NULL,
        from_sidecar VARCHAR[] NOT NULL""",
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
    "router_metrics": """
        collection VARCHAR NOT NULL, model VARCHAR NOT NULL, samples INTEGER NOT NULL,
        ans_f1 DOUBLE NOT NULL, exp_pre DOUBLE NOT NULL, ref_acc DOUBLE NOT NULL,
        expelled_per_output DOUBLE NOT NULL, collapsed_rate DOUBLE NOT NULL,
        parse_failure_rate DOUBLE NOT NULL, questions INTEGER DEFAULT 0, dev_test BOOLEAN DEFAULT false,
        ans_f1_low DOUBLE, ans_f1_high DOUBLE, exp_pre_low DOUBLE, exp_pre_high DOUBLE,
        ref_acc_low DOUBLE, ref_acc_high DOUBLE, answer_views INTEGER, gold_answer_views INTEGER,
        refusal_views INTEGER, expand_lines INTEGER""",
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
        refused_docs INTEGER NOT NULL, versions VARCHAR NOT NULL, structure VARCHAR NOT NULL DEFAULT '',
        answer_form VARCHAR NOT NULL DEFAULT '', echo VARCHAR NOT NULL DEFAULT '',
        supporting INTEGER NOT NULL DEFAULT -1, attribution VARCHAR NOT NULL DEFAULT ''""",
    "questions": _QUESTION_COLUMNS,
    "synthetic_questions": _QUESTION_COLUMNS,
    # which LanceDB version goes with the catalogue's passages (see store/publication.py)
    "index_publications": """
        collection VARCHAR NOT NULL, table_name VARCHAR NOT NULL, version BIGINT NOT NULL,
        tag VARCHAR, passages BIGINT NOT NULL, digest VARCHAR NOT NULL, published_at TIMESTAMP NOT NULL""",
    # how routing_subtrees built its views: router_metrics builds its evaluation views the same way
    "routing_view_settings": """
        collection VARCHAR NOT NULL, split VARCHAR NOT NULL, top_docs INTEGER NOT NULL,
        passages_per_query INTEGER NOT NULL, expansion_views INTEGER NOT NULL, token_budget INTEGER NOT NULL""",
    # the trained pieces answering uses, as their steps last published them (store/published_models.py)
    "published_models": """
        collection VARCHAR NOT NULL, kind VARCHAR NOT NULL, model_id VARCHAR, path VARCHAR,
        details VARCHAR NOT NULL, run_id VARCHAR NOT NULL, published_at TIMESTAMP NOT NULL""",
    # the service's API tokens, stored hashed: one row per (token, collection) (store/api_tokens.py)
    "api_tokens": """
        name VARCHAR NOT NULL, token_hash VARCHAR NOT NULL, collection VARCHAR NOT NULL,
        scope VARCHAR NOT NULL, created_at TIMESTAMP NOT NULL, revoked_at TIMESTAMP""",
    # which token asked each answer the service stored (store/api_tokens.py)
    "answer_askers": """
        answer_id VARCHAR NOT NULL, token_name VARCHAR NOT NULL""",
    # the catalogue's schema version, one row (store/upgrades.py; absent: written before versions)
    "catalogue_meta": """
        schema_version INTEGER NOT NULL, upgraded_at TIMESTAMP NOT NULL""",
}

QUESTION_TABLES = ("questions", "synthetic_questions")
# The catalogue layout this code reads and writes: 1 is every catalogue written before versions
# were recorded (published default answer forms under kind `answer_form`); 2 publishes them under
# `answer_policy`. A change that older code cannot read raises it, with a step in store/upgrades.py.
CATALOGUE_VERSION = 2
META_TABLE = "catalogue_meta"


def table_columns(table: str) -> list[tuple[str, str, bool]]:
    """(name, DuckDB type, nullable) of each column of a catalogue table, in declaration order."""
    columns = []
    for declaration in SCHEMA[table].split(","):
        name, kind, *rest = declaration.split()
        columns.append((name, kind, "NOT NULL" not in " ".join(rest).upper()))
    return columns


# The per-model routing-quality columns of `router_metrics` (after `samples`), in table order, and
# the bootstrap interval bounds of three of them (`<rate>_low`, `<rate>_high`).
ROUTER_INTERVAL_COLUMNS: tuple[str, ...] = tuple(
    name for name, kind, _ in table_columns("router_metrics") if kind == "DOUBLE" and name.endswith(("_low", "_high"))
)
ROUTER_METRIC_COLUMNS: tuple[str, ...] = tuple(
    name
    for name, kind, _ in table_columns("router_metrics")
    if kind == "DOUBLE" and name not in ROUTER_INTERVAL_COLUMNS
)
# What the rates rest on (RoutingScores' fields of the same names); NULL: written before they were
# recorded, so unknown (not 0).
ROUTER_COUNT_COLUMNS: tuple[str, ...] = ("answer_views", "gold_answer_views", "refusal_views", "expand_lines")

_STR_LIST = pa.list_(pa.string())
_INT_LIST = pa.list_(pa.int32())

NODE_ARROW_SCHEMA = pa.schema(
    [
        ("collection", pa.string()),
        ("doc_id", pa.string()),
        ("node_id", pa.int32()),
        ("parent_id", pa.int32()),
        ("kind", pa.string()),
        ("block", pa.string()),
        ("depth", pa.int32()),
        ("text", pa.string()),
        ("heading_path", _STR_LIST),
        ("span_start", pa.int32()),
        ("span_end", pa.int32()),
        ("page_start", pa.int32()),
        ("page_end", pa.int32()),
    ]
)

# Columns added to a table after catalogues with the older layout exist: `ensure_schema` adds them
# to such a catalogue (with their default) so it stays readable and writable.
ADDED_COLUMNS: dict[str, tuple[str, ...]] = {
    "document_nodes": ("page_start INTEGER DEFAULT 0", "page_end INTEGER DEFAULT 0"),
    # the reading code and caps a document and its tree came from: unchanged ones are kept
    "source_documents": ("reader_version VARCHAR DEFAULT ''",),
    "document_texts": ("reader_version VARCHAR DEFAULT ''",),
    # the gold document's evidence pages (FinanceBench)
    # and the set's own kind of question (FinanceBench: metrics-generated, domain-relevant, novel-generated)
    "questions": ("gold_pages INTEGER[] DEFAULT []", "question_type VARCHAR DEFAULT ''"),
    "synthetic_questions": ("gold_pages INTEGER[] DEFAULT []", "question_type VARCHAR DEFAULT ''"),
    # how many questions the views come from, whether they are the dev + test views, the intervals,
    # what the rates rest on (no default: NULL on older rows, read as unknown)
    "router_metrics": (
        "questions INTEGER DEFAULT 0",
        "dev_test BOOLEAN DEFAULT false",
        *(f"{name} DOUBLE" for name in ROUTER_INTERVAL_COLUMNS),
        *(f"{name} INTEGER" for name in ROUTER_COUNT_COLUMNS),
    ),
}

# The passage: the catalogue's `passages` rows; the LanceDB index rows add `search_text` and `vector`.
PASSAGE_ARROW_SCHEMA = pa.schema(
    [
        ("collection", pa.string()),
        ("passage_id", pa.string()),
        ("doc_id", pa.string()),
        ("node_ids", _INT_LIST),
        ("span_starts", _INT_LIST),
        ("span_ends", _INT_LIST),
        ("heading_path", _STR_LIST),
        ("text", pa.string()),
        ("word_count", pa.int32()),
        ("content_hash", pa.string()),
    ]
)

# The index's column order (fixed by the LanceDB tables already written).
_INDEX_COLUMNS = (
    "passage_id",
    "collection",
    "doc_id",
    "node_ids",
    "span_starts",
    "span_ends",
    "heading_path",
    "text",
    "search_text",
    "content_hash",
    "vector",
)


def passage_index_schema(dimension: int) -> pa.Schema:
    """The LanceDB passage-index rows: the passage's fields plus the indexed text and its vector."""
    extra = {"search_text": pa.string(), "vector": pa.list_(pa.float32(), dimension)}
    return pa.schema(
        [(name, extra[name] if name in extra else PASSAGE_ARROW_SCHEMA.field(name).type) for name in _INDEX_COLUMNS]
    )


ROUTING_ACTIONS_ARROW_SCHEMA = pa.schema(
    [(name, _INT_LIST if name.endswith("_ids") else pa.string()) for name, _, _ in table_columns("routing_actions")]
)

ANSWER_ARROW_SCHEMA = pa.schema(
    [
        ("collection", pa.string()),
        ("answer_id", pa.string()),
        ("source", pa.string()),
        ("run_id", pa.string()),
        ("created_at", pa.timestamp("us")),
        ("qid", pa.string()),
        ("question", pa.string()),
        ("strategy", pa.string()),
        ("strategy_kind", pa.string()),
        ("grid", pa.string()),
        ("grid_value", pa.int32()),
        ("knobs", pa.string()),
        ("answer", pa.string()),
        ("evidence", pa.string()),
        ("evidence_words", pa.int32()),
        ("cited_doc_ids", _STR_LIST),
        ("cited_node_ids", _INT_LIST),
        ("cited_heading_paths", _STR_LIST),
        ("cited_texts", _STR_LIST),
        ("cited_span_starts", _INT_LIST),
        ("cited_span_ends", _INT_LIST),
        ("passage_ids", _STR_LIST),
        ("retrieved_doc_ids", _STR_LIST),
        ("router_prompt_tokens", pa.int32()),
        ("router_output_tokens", pa.int32()),
        ("reader_prompt_tokens", pa.int32()),
        ("reader_output_tokens", pa.int32()),
        ("engine_calls", pa.int32()),
        ("seconds", pa.float64()),
        ("expelled", pa.int32()),
        ("refused_docs", pa.int32()),
        ("versions", pa.string()),
        ("structure", pa.string()),
        ("answer_form", pa.string()),
        ("echo", pa.string()),
        ("supporting", pa.int32()),
        ("attribution", pa.string()),
    ]
)
