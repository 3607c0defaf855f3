"""The reranker's two models as scorers of (query, passage) pairs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from rag_assets.core.quiet_loading import quiet_model_loading


def load_cross_encoder(path: Path, *, device: str, max_length: int, num_labels: int | None = None):
    """The sentence-transformers `CrossEncoder` in `path` (`num_labels`: a fresh head of that size)."""
    from sentence_transformers import CrossEncoder

    kwargs = {"num_labels": num_labels} if num_labels else {}
    with quiet_model_loading():  # the new classifier head is reported as missing: we train it
        return CrossEncoder(str(path), device=device, max_length=max_length, local_files_only=True, **kwargs)


class CrossEncoderScorer:
    """Scores (query, passage) pairs with a sentence-transformers `CrossEncoder`."""

    model_kind = "cross-encoder"

    def __init__(self, model) -> None:
        self.model = model

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        return [float(s) for s in self.model.predict([(query, t) for t in texts], batch_size=32)]


class BiEncoderScorer:
    """Cosine between the fine-tuned sentence encoder's query and passage embeddings. Passage
    embeddings are cached by text: the same candidates come back for many queries (held-out
    calibration, an evaluation's strategies), and the first stage's vectors in the index are the
    untrained model's, not these."""

    model_kind = "bi-encoder"

    def __init__(self, model, *, cache_size: int = 50_000) -> None:
        self.model = model
        self.cache_size = cache_size
        self._vectors: dict[str, np.ndarray] = {}

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(
            self.model.encode(list(texts), batch_size=32, normalize_embeddings=True, show_progress_bar=False),
            dtype=np.float32,
        )

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if len(self._vectors) + len(missing) > self.cache_size:
            self._vectors.clear()  # a bounded cache: a long-lived process must not grow without end
            missing = list(dict.fromkeys(texts))
        if missing:
            self._vectors.update(zip(missing, self._encode(missing)))
        q = self._encode([query])[0]
        return [float(q @ self._vectors[t]) for t in texts]
