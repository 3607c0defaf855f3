"""Which words occur in the documents searched, asked of the passage index's full-text side.

Each term is one BM25 query for a single row (about 2 ms on the built-in reference's index), so
the index's own tokenizer, stemmer and stop words decide what "occurs" means: "statements" is
found where "statement" is. The table is opened on the first lookup (the service reads the index
lazily) and answers are kept for the lookup's lifetime (one answering session).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rag_assets.core.index.retrieval import collection_filter, full_text_query


class IndexTerms:
    """Which terms occur in the rows of `collections` (and of `documents` when given) of the
    LanceDB table `open_table` returns."""

    def __init__(
        self, open_table: Callable[[], Any], collections: list[str] | None, documents: list[str] | None = None
    ) -> None:
        self.open_table = open_table
        self.where = collection_filter(collections, documents)
        self._known: dict[str, bool] = {}

    def known(self, terms: Sequence[str]) -> set[str]:
        for term in terms:
            if term not in self._known:
                self._known[term] = self._occurs(term)
        return {t for t in terms if self._known[t]}

    def _occurs(self, term: str) -> bool:
        query = full_text_query(term)
        if not query.strip():
            return False
        builder = self.open_table().search(query, query_type="fts", fts_columns="search_text")
        if self.where:
            builder = builder.where(self.where, prefilter=True)
        return bool(builder.select(["passage_id", "_score"]).limit(1).to_list())
