"""BM25 search over the passage index through pylance alone, for the light paths.

The index is one Lance dataset; LanceDB's FTS query and pylance's `full_text_query` read the same
native full-text index and return the same rows with the same scores (a test keeps them equal).
Importing lancedb costs about 2.5 CPU-seconds and 180 MiB (it loads pandas and a REST namespace
client); pylance alone costs a tenth of that, which is what lets a cold `rag search --mode bm25`
stay a light command. Dense and hybrid search need the embedder anyway and stay on LanceDB.
"""

from __future__ import annotations

import sys
from types import ModuleType

from rag_assets.core.index.retrieval import SearchHit, collection_filter, full_text_query, hit_from_row

HIT_COLUMNS = ["passage_id", "doc_id", "collection", "node_ids", "span_starts", "span_ends", "heading_path", "text"]


def load_lance(*, without_pandas: bool = False) -> ModuleType:
    """pylance. `without_pandas`: for a short-lived process that never builds a DataFrame (the
    CLI's BM25 search): pyarrow's dataset module imports pandas when it is installed (0.85 CPU-s),
    only to offer DataFrame conversions; hiding pandas while it loads skips that. pyarrow then
    treats pandas as absent for checks such as `is_data_frame`, so a long-lived process (tests,
    the service) must not ask for this."""
    if not without_pandas or "pyarrow.dataset" in sys.modules or "pandas" in sys.modules:
        import lance

        return lance
    blocker = _PandasHidden()
    sys.meta_path.insert(0, blocker)
    try:
        import lance
    finally:
        sys.meta_path.remove(blocker)
    return lance


class _PandasHidden:
    """A meta-path finder under which `import pandas` fails as if pandas were not installed."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


def full_text_search(
    dataset_uri: str,
    query: str,
    *,
    k: int = 5,
    collections: list[str] | None = None,
    version: int | None = None,
    documents: list[str] | None = None,
) -> list[SearchHit]:
    """Top-k passages of `query` by BM25 in the Lance dataset at `dataset_uri`, as of `version`
    (None: the newest), only rows of `collections` and `documents` (doc ids) when given."""
    if not query.strip():
        raise ValueError("empty query")
    lance = load_lance()
    try:
        dataset = lance.dataset(dataset_uri, version=version)
    except (FileNotFoundError, ValueError) as error:
        raise FileNotFoundError(
            f"no passage index at {dataset_uri} (version {version}): materialize `passage_index` first (`rag run`)"
        ) from error
    table = dataset.to_table(
        columns=[*HIT_COLUMNS, "_score"],
        full_text_query={"query": full_text_query(query), "columns": ["search_text"]},
        filter=collection_filter(collections, documents),
        prefilter=True,
        limit=k,
    )
    return [hit_from_row(rank, row) for rank, row in enumerate(table.to_pylist(), start=1)]
