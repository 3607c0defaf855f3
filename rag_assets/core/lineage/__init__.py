"""Answer lineage: every answer is stored with what produced it (`store`), and can be traced back
to the exact source text it cites (`trace`)."""

from rag_assets.core.lineage.trace import AnswerTrace, TracedSource, trace_answer
from rag_assets.core.store.lineage import (
    COLUMNS,
    SOURCES,
    TABLE,
    AnswerRecord,
    answer_versions,
    build_record,
    document_hashes,
    index_version,
    load_answer,
    load_answers,
    new_answer_id,
    records_table,
    store_answers,
    utc_now,
)
from rag_assets.core.store.tree_tables import CatalogueTrees

__all__ = [
    "COLUMNS",
    "SOURCES",
    "TABLE",
    "AnswerRecord",
    "AnswerTrace",
    "CatalogueTrees",
    "TracedSource",
    "answer_versions",
    "build_record",
    "document_hashes",
    "index_version",
    "load_answer",
    "load_answers",
    "new_answer_id",
    "records_table",
    "store_answers",
    "trace_answer",
    "utc_now",
]
