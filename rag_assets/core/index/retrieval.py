"""Dense, full-text (BM25) and hybrid search over the passage index, all through LanceDB.

Hybrid search is LanceDB's own (vector + full-text, fused by its RRFReranker); an optional
cross-encoder reranks the candidates (LanceDB's CrossEncoderReranker on a local model folder).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from rag_assets.core.index.embedding import Embedder
from rag_assets.core.index.vector_index import PassageIndex, sql_string

MODES = ("dense", "bm25", "hybrid")
# Tantivy-style query syntax would treat these as operators; questions are plain text.
_QUERY_NOISE = re.compile(r"[^\w\s]+", re.UNICODE)


@dataclass(frozen=True, slots=True)
class SearchHit:
    rank: int
    score: float
    passage_id: str
    doc_id: str
    collection: str
    node_ids: tuple[int, ...]
    spans: tuple[tuple[int, int], ...]
    heading_path: tuple[str, ...]
    text: str


def cross_encoder_reranker(model_path: str | Path):
    """A LanceDB reranker running a local sentence-transformers CrossEncoder folder."""
    from lancedb.rerankers import CrossEncoderReranker

    if not Path(model_path).is_dir():
        raise FileNotFoundError(f"cross-encoder model folder {model_path} does not exist")
    return CrossEncoderReranker(model_name=str(model_path), column="search_text")


def search(
    index: PassageIndex,
    embedder: Embedder,
    query: str,
    *,
    mode: str = "hybrid",
    k: int = 5,
    collections: list[str] | None = None,
    reranker=None,
    candidates: int | None = None,
    documents: list[str] | None = None,
) -> list[SearchHit]:
    """Top-k passages for `query`, of `documents` (doc ids) only when given; `reranker` (e.g.
    `cross_encoder_reranker(path)`) reorders `candidates` (default 4k) first-stage hits."""
    if mode not in MODES:
        raise ValueError(f"unknown search mode {mode!r}; expected one of {MODES}")
    if not query.strip():
        raise ValueError("empty query")
    table = index.table
    where = collection_filter(collections, documents)
    limit = max(k, candidates or (4 * k if reranker else k))
    if reranker is not None and hasattr(reranker, "with_first_stage"):
        # Fetched deeper than k for the reranker to choose from, but its first stage must be the
        # hybrid search a user gets without it (only each list's top k fused), so that fusion
        # weight 0 is exactly that search and a weight's gain is the model's, not the depth's.
        reranker = reranker.with_first_stage(k)
    text_query = full_text_query(query)
    builder = _query_builder(table, embedder, query, text_query, mode, reranker)
    if where:
        builder = builder.where(where, prefilter=True)
    rows = builder.limit(limit).to_list()
    return [hit_from_row(rank, row) for rank, row in enumerate(rows[:k], start=1)]


def hit_from_row(rank: int, row: dict) -> SearchHit:
    """One index row (as LanceDB or pylance return it) as the `rank`-th hit."""
    return SearchHit(
        rank=rank,
        score=_row_score(row),
        passage_id=row["passage_id"],
        doc_id=row["doc_id"],
        collection=row["collection"],
        node_ids=tuple(row["node_ids"]),
        spans=tuple(zip(row["span_starts"], row["span_ends"])),
        heading_path=tuple(row["heading_path"]),
        text=row["text"],
    )


def full_text_query(query: str) -> str:
    """`query` as the full-text index is asked it: punctuation dropped (the query parser would read
    it as operators; questions are plain text)."""
    return " ".join(_QUERY_NOISE.sub(" ", query).split()) or query


def collection_filter(collections: list[str] | None, documents: list[str] | None = None) -> str | None:
    """The SQL filter keeping rows of `collections` and of `documents` (doc ids) when given (None:
    no filter)."""
    parts = []
    if collections:
        parts.append("collection IN (" + ", ".join(sql_string(c) for c in collections) + ")")
    if documents:
        parts.append("doc_id IN (" + ", ".join(sql_string(d) for d in documents) + ")")
    return " AND ".join(parts) or None


def _query_builder(table, embedder: Embedder, query: str, text_query: str, mode: str, reranker):
    """The LanceDB query of one search mode, reranked by `reranker` when given."""
    if mode == "dense":
        builder = table.search(embedder.encode_query(query), vector_column_name="vector").distance_type("cosine")
        if reranker is not None:
            builder = builder.rerank(reranker, query_string=query)
    elif mode == "bm25":
        builder = table.search(text_query, query_type="fts", fts_columns="search_text")
        if reranker is not None:
            builder = builder.rerank(reranker)
    else:
        from lancedb.rerankers import RRFReranker

        # The cross-encoder, when given, fuses the vector and full-text candidates itself.
        builder = (
            table.search(query_type="hybrid", vector_column_name="vector", fts_columns="search_text")
            .vector(embedder.encode_query(query))
            .text(text_query)
            .distance_type("cosine")
            .rerank(reranker if reranker is not None else RRFReranker())
        )
    return builder


def _row_score(row: dict) -> float:
    """A result row's score: the reranker's relevance, else cosine similarity, else the BM25 score."""
    if "_relevance_score" in row:
        return float(row["_relevance_score"])
    if "_distance" in row:
        return 1.0 - float(row["_distance"])
    return float(row.get("_score", 0.0))
