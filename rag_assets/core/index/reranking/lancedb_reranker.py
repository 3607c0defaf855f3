"""The reranker at query time: a LanceDB `Reranker`, so hybrid search + rerank is ONE query, and
the fusion of the first-stage ranks with the model's."""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Sequence

import pyarrow as pa
from lancedb.rerankers import Reranker

RRF_K = 60


def fuse(first_stage: Sequence[float], cross_scores: Sequence[float], weight: float) -> list[float]:
    """Relevance of each candidate: its first-stage RRF score plus `weight` / (K + cross-encoder
    rank); weight < 0 = the cross-encoder's score alone."""
    if weight < 0:
        return [float(s) for s in cross_scores]
    order = sorted(range(len(cross_scores)), key=lambda i: -cross_scores[i])
    rank = {i: r for r, i in enumerate(order, start=1)}
    return [float(f) + weight / (RRF_K + rank[i]) for i, f in enumerate(first_stage)]


class PassageReranker(Reranker):
    """A LanceDB reranker running the trained model (`scorer`: a `BiEncoderScorer` or a
    `CrossEncoderScorer`; see the module doc)."""

    def __init__(
        self, scorer, *, weight: float = -1.0, depth: int = 30, column: str = "search_text", reranker_id: str = ""
    ) -> None:
        super().__init__("relevance")
        self.scorer = scorer
        self.weight = weight
        self.depth = depth
        self.column = column
        self.reranker_id = reranker_id
        self.first_stage_k: int | None = None  # each list's ranks that count in the first-stage fusion

    def with_first_stage(self, k: int) -> PassageReranker:
        """This reranker (same model and cache) with a first stage that fuses only each list's top
        `k`: the plain hybrid search of `k` results, though more candidates were fetched."""
        view = copy.copy(self)
        view.first_stage_k = k
        return view

    def __str__(self) -> str:
        return (
            f"PassageReranker({self.reranker_id or 'untitled'}, {self.scorer.model_kind}, "
            f"weight={self.weight}, depth={self.depth})"
        )

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        return self.scorer.scores(query, texts)

    def _rerank_ranked(self, query: str, table: pa.Table, first_stage: list[float]) -> pa.Table:
        """`table` rows with their first-stage scores: the top `depth` are re-scored and fused,
        the rest keep their first-stage order below them."""
        order = sorted(range(table.num_rows), key=lambda i: -first_stage[i])
        head, tail = order[: self.depth], order[self.depth :]
        texts = table.column(self.column).to_pylist()
        fused = fuse([first_stage[i] for i in head], self.scores(query, [texts[i] for i in head]), self.weight)
        ranked = [i for _, i in sorted(zip(fused, head), key=lambda t: -t[0])] + tail
        # relevance strictly decreasing along the final order, whatever the fused scale
        relevance = [float(len(ranked) - r) for r in range(len(ranked))]
        out = table.take(pa.array(ranked, pa.int64()))
        for name in ("_relevance_score", "_distance", "_score"):
            if name in out.column_names:
                out = out.drop_columns([name])
        return out.append_column("_relevance_score", pa.array(relevance, pa.float32()))

    def rerank_hybrid(self, query: str, vector_results: pa.Table, fts_results: pa.Table) -> pa.Table:
        rrf: dict[int, float] = defaultdict(float)
        for results in (vector_results, fts_results):
            for rank, row_id in enumerate(results["_rowid"].to_pylist() if results else [], start=1):
                if self.first_stage_k is None or rank <= self.first_stage_k:
                    rrf[row_id] += 1 / (RRF_K + rank)
        merged = self.merge_results(vector_results, fts_results)
        if merged.num_rows == 0:
            return self._handle_empty_results(merged)
        return self._rerank_ranked(query, merged, [rrf[i] for i in merged["_rowid"].to_pylist()])

    def _rerank_single(self, query: str, results: pa.Table) -> pa.Table:
        if results.num_rows == 0:
            return self._handle_empty_results(results)
        return self._rerank_ranked(query, results, [1 / (RRF_K + r) for r in range(1, results.num_rows + 1)])

    def rerank_vector(self, query: str, vector_results: pa.Table) -> pa.Table:
        return self._rerank_single(query, vector_results)

    def rerank_fts(self, query: str, fts_results: pa.Table) -> pa.Table:
        return self._rerank_single(query, fts_results)
