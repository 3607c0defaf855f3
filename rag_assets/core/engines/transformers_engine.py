"""transformers engine: batched greedy chat generation with left padding; LoRA via peft.

Works on CPU (fp32) and CUDA (bf16). It has no constrained decoding, so `regex` is ignored and
the router parser's validation is the only guard (as it is for every engine).
"""

from __future__ import annotations

from pathlib import Path

import torch

from rag_assets.core.engines.base import ChatMessages, Generation, LLMEngine
from rag_assets.core.router_training import pick_device


class TransformersEngine(LLMEngine):
    def __init__(self, model_path: Path, *, device: str = "auto", batch_size: int = 16,
                 adapters: dict[str, Path] | None = None) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.device, self.dtype = pick_device(device)
        self.batch_size = batch_size
        self.model_id = Path(model_path).name
        self.tokenizer = AutoTokenizer.from_pretrained(model_path, padding_side="left")
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = AutoModelForCausalLM.from_pretrained(model_path, dtype=self.dtype).to(self.device).eval()
        self.adapters: list[str] = []
        for name, path in (adapters or {}).items():
            self.add_adapter(name, path)

    def add_adapter(self, name: str, path: Path) -> None:
        from peft import PeftModel

        if not self.adapters:
            self.model = PeftModel.from_pretrained(self.model, str(path), adapter_name=name).eval()
        elif name not in self.adapters:
            self.model.load_adapter(str(path), adapter_name=name)
        self.adapters.append(name)

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    @torch.inference_mode()
    def _generate_chunk(self, prompts: list[str], max_new_tokens: int, temperature: float) -> list[Generation]:
        encoded = self.tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False).to(self.device)
        sampling = {"do_sample": True, "temperature": temperature} if temperature > 0 else {"do_sample": False}
        output = self.model.generate(**encoded, max_new_tokens=max_new_tokens, pad_token_id=self.tokenizer.pad_token_id,
                                     **sampling)
        width = encoded["input_ids"].shape[1]
        results = []
        for row, mask in zip(output, encoded["attention_mask"]):
            new = row[width:]
            new = new[new != self.tokenizer.pad_token_id]
            text = self.tokenizer.decode(new, skip_special_tokens=True).strip()
            results.append(Generation(text, int(mask.sum()), int(len(new))))
        return results

    def generate(self, batch: list[ChatMessages], *, adapter: str | None = None, max_new_tokens: int = 128,
                 temperature: float = 0.0, regex: str | None = None) -> list[Generation]:
        if adapter is not None and adapter not in self.adapters:
            raise KeyError(f"adapter {adapter!r} is not loaded (loaded: {self.adapters})")
        prompts = [self.tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
                   for chat in batch]
        # Length-sorted chunks: less left padding per chunk; results go back in the caller's order.
        order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
        results: list[Generation | None] = [None] * len(prompts)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start:start + self.batch_size]
            if self.adapters:
                if adapter is None:
                    with self.model.disable_adapter():
                        out = self._generate_chunk([prompts[i] for i in chunk], max_new_tokens, temperature)
                else:
                    self.model.set_adapter(adapter)
                    out = self._generate_chunk([prompts[i] for i in chunk], max_new_tokens, temperature)
            else:
                out = self._generate_chunk([prompts[i] for i in chunk], max_new_tokens, temperature)
            for i, generation in zip(chunk, out):
                results[i] = generation
        return [r for r in results if r is not None]
