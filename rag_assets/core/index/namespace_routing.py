"""Namespace routing (DoTA-RAG): pick, per query, the collections worth searching before searching.

Every collection of the passage index is a namespace. The router is a cheap embedding classifier
on the packaged embedder: each document of each namespace is one centroid (the mean of its
passages' vectors, already in the index, so training embeds nothing). A query's score for a
namespace is its best cosine to one of that namespace's document centroids; the router keeps the
best namespace and every other one within `margin` of it (at most `max_namespaces`).

The margin is calibrated on pseudo-queries with a known namespace (each collection's synthetic
and train questions): the smallest margin whose namespace accuracy reaches `target_accuracy`
(else the most accurate one), so the share of the index searched is as small as that accuracy
allows. Metrics: namespace accuracy (the gold namespace is among the routed ones) and the share
of the index searched (passages of the routed namespaces / all passages).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rag_assets.core.index.vector_index import PassageIndex

ROUTER_RECORD = "namespace_router.json"
ROUTER_PREFIX = "ns-"
MARGIN_GRID = (0.0, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 1.0)


@dataclass(slots=True)
class NamespaceRouter:
    namespaces: list[str]
    centroids: np.ndarray  # (documents, dimension), unit length
    owners: np.ndarray  # (documents,) index into namespaces
    passages: dict[str, int]  # passages per namespace (the share of the index searched)
    margin: float = 0.05
    max_namespaces: int = 0  # 0 = no cap
    router_id: str = "untrained"

    def scores(self, query_vectors: np.ndarray) -> np.ndarray:
        """(queries, namespaces): each namespace's best document-centroid cosine."""
        sims = np.atleast_2d(query_vectors) @ self.centroids.T
        out = np.full((sims.shape[0], len(self.namespaces)), -np.inf, dtype=np.float32)
        for k in range(len(self.namespaces)):
            mine = self.owners == k
            if mine.any():
                out[:, k] = sims[:, mine].max(axis=1)
        return out

    def route_scored(self, scores: np.ndarray, margin: float | None = None) -> list[list[str]]:
        margin = self.margin if margin is None else margin
        routed = []
        for row in np.atleast_2d(scores):
            order = [int(i) for i in np.argsort(-row) if np.isfinite(row[i])]
            keep = [i for i in order if row[i] >= row[order[0]] - margin] if order else []
            if self.max_namespaces:
                keep = keep[: self.max_namespaces]
            routed.append([self.namespaces[i] for i in keep])
        return routed

    def route(self, query_vectors: np.ndarray) -> list[list[str]]:
        """The namespaces to search, best first, one list per query vector."""
        return self.route_scored(self.scores(query_vectors))

    def share(self, routed: Sequence[str]) -> float:
        total = sum(self.passages.values())
        return sum(self.passages.get(n, 0) for n in routed) / total if total else 0.0


@dataclass(slots=True)
class RoutingQuality:
    accuracy: float  # the gold namespace is among the routed ones
    share_searched: float  # mean share of the index's passages searched
    queries: int
    per_namespace: dict[str, tuple[float, float, int]] = field(default_factory=dict)  # accuracy, share, queries


def routing_quality(router: NamespaceRouter, routed: Sequence[Sequence[str]], gold: Sequence[str]) -> RoutingQuality:
    if not gold:
        return RoutingQuality(0.0, 0.0, 0)
    hits = [g in r for r, g in zip(routed, gold)]
    shares = [router.share(r) for r in routed]
    per: dict[str, tuple[float, float, int]] = {}
    for name in sorted(set(gold)):
        idx = [i for i, g in enumerate(gold) if g == name]
        per[name] = (float(np.mean([hits[i] for i in idx])), float(np.mean([shares[i] for i in idx])), len(idx))
    return RoutingQuality(float(np.mean(hits)), float(np.mean(shares)), len(gold), per)


def document_centroids(index: PassageIndex) -> tuple[list[str], np.ndarray, np.ndarray, dict[str, int]]:
    """(namespaces, centroids, owners, passages per namespace) from the vectors in the index."""
    data = index.scan(["collection", "doc_id", "vector"])
    collections = data.column("collection").to_pylist()
    if not collections:
        raise ValueError(f"the passage index {index.uri} holds no passages: nothing to route between")
    docs = data.column("doc_id").to_pylist()
    dimension = index.embedder.dimension
    vectors = data.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False)
    vectors = vectors.reshape(len(docs), dimension).astype(np.float32)
    namespaces = sorted(set(collections))
    groups: dict[tuple[str, str], list[int]] = {}
    for row, key in enumerate(zip(collections, docs)):
        groups.setdefault(key, []).append(row)
    keys = sorted(groups)
    centroids = np.stack([vectors[groups[k]].mean(axis=0) for k in keys])
    centroids /= np.maximum(np.linalg.norm(centroids, axis=1, keepdims=True), 1e-12)
    owners = np.array([namespaces.index(c) for c, _ in keys], dtype=np.int32)
    passages = {n: collections.count(n) for n in namespaces}
    return namespaces, centroids.astype(np.float32), owners, passages


def calibrate_margin(
    router: NamespaceRouter, query_vectors: np.ndarray, gold: Sequence[str], target_accuracy: float
) -> tuple[float, dict[str, tuple[float, float]]]:
    """The smallest margin reaching `target_accuracy` on the pseudo-queries (else the most
    accurate), and the grid: margin -> (accuracy, share searched)."""
    if not len(gold):
        return router.margin, {}
    scores = router.scores(query_vectors)
    grid = {}
    for margin in MARGIN_GRID:
        quality = routing_quality(router, router.route_scored(scores, margin), gold)
        grid[str(margin)] = (quality.accuracy, quality.share_searched)
    reaching = [m for m in MARGIN_GRID if grid[str(m)][0] >= target_accuracy]
    best = min(reaching) if reaching else max(MARGIN_GRID, key=lambda m: (grid[str(m)][0], -m))
    return best, grid


def train_namespace_router(
    index: PassageIndex,
    pseudo_queries: Mapping[str, Sequence[str]],
    *,
    target_accuracy: float = 0.95,
    max_namespaces: int = 0,
) -> tuple[NamespaceRouter, dict[str, tuple[float, float]]]:
    """Centroids from the index, margin calibrated on `pseudo_queries` ({namespace: queries})."""
    namespaces, centroids, owners, passages = document_centroids(index)
    router = NamespaceRouter(namespaces, centroids, owners, passages, max_namespaces=max_namespaces)
    texts = [q for n in namespaces for q in pseudo_queries.get(n, ())]
    gold = [n for n in namespaces for _ in pseudo_queries.get(n, ())]
    vectors = index.embedder.encode(texts, progress=False) if texts else np.zeros((0, centroids.shape[1]), np.float32)
    router.margin, grid = calibrate_margin(router, vectors, gold, target_accuracy)
    return router, grid


def publish_namespace_router(router: NamespaceRouter, output_root: Path, extra_record: dict | None = None) -> Path:
    from rag_assets.core.training.model_folders import publish_model_folder

    def write(staging: Path) -> dict:
        np.save(staging / "centroids.npy", router.centroids)
        np.save(staging / "owners.npy", router.owners)
        return {
            "kind": "namespace-router",
            "namespaces": router.namespaces,
            "passages": router.passages,
            "margin": router.margin,
            "max_namespaces": router.max_namespaces,
            **(extra_record or {}),
        }

    folder, router_id = publish_model_folder(
        output_root,
        write,
        record=ROUTER_RECORD,
        prefix=ROUTER_PREFIX,
        identity={"margin": router.margin, "max_namespaces": router.max_namespaces},
    )
    router.router_id = router_id
    return folder


def load_namespace_router(folder: Path) -> NamespaceRouter:
    folder = Path(folder)
    record = folder / ROUTER_RECORD
    if not record.is_file() or json.loads(record.read_text()).get("kind") != "namespace-router":
        raise FileNotFoundError(f"{folder} holds no namespace router ({ROUTER_RECORD})")
    data = json.loads(record.read_text())
    return NamespaceRouter(
        list(data["namespaces"]),
        np.load(folder / "centroids.npy"),
        np.load(folder / "owners.npy"),
        {k: int(v) for k, v in data["passages"].items()},
        float(data["margin"]),
        int(data.get("max_namespaces", 0)),
        data.get("adapter_id", folder.name),
    )


def latest_namespace_router(root: Path) -> Path | None:
    """The most recently published namespace router folder under `root`, or None."""
    if not root.is_dir():
        return None
    found = [f for f in root.iterdir() if (f / ROUTER_RECORD).is_file()]
    return max(found, key=lambda f: (f / ROUTER_RECORD).stat().st_mtime) if found else None


class QueryNamespaces:
    """A namespace router with the embedder that turns queries into vectors (what strategies,
    `rag search` and `rag ask` call)."""

    def __init__(self, router: NamespaceRouter, embedder) -> None:
        self.router = router
        self.embedder = embedder

    def route(self, queries: Sequence[str]) -> list[list[str]]:
        return self.router.route(self.embedder.encode(list(queries), progress=False))

    def share(self, namespaces: Sequence[str]) -> float:
        return self.router.share(namespaces)
