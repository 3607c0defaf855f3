"""transformers engine: batched greedy chat generation with left padding; LoRA via peft.

Works on CPU (fp32) and CUDA (bf16). `regex` constrains decoding through xgrammar's logits
processor (the grammar library vLLM uses too), so a small router cannot drift into prose; the
router parser still validates every id, as it does for every engine.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import torch

from rag_assets.core.engines.base import ChatMessages, Generation, LLMEngine, Regex, regex_per_chat
from rag_assets.core.training.optimisation import pick_device

_log = logging.getLogger(__name__)


class TransformersEngine(LLMEngine):
    def __init__(
        self, model_path: Path, *, device: str = "auto", batch_size: int = 0, adapters: dict[str, Path] | None = None
    ) -> None:
        """`batch_size` 0: 16 chats per forward pass on CPU, 64 on CUDA. On an H100 a decode step
        of the 135M router is bound by Python dispatch (~50-100 ms whatever the batch; the GPU is
        busy ~15 ms of it), so output tokens/s grow almost linearly with the batch: 87 at 8, 351
        at 32, 609 at 64 (benchmarks/router_device.py)."""
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.device, self.dtype = pick_device(device)
        self.batch_size = batch_size or (64 if self.device.startswith("cuda") else 16)
        self.model_id = Path(model_path).name
        self.tokenizer = AutoTokenizer.from_pretrained(model_path, padding_side="left")
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = AutoModelForCausalLM.from_pretrained(model_path, dtype=self.dtype).to(self.device).eval()
        self.adapters: list[str] = []
        self._grammar_compiler = None
        self._max_context = int(getattr(self.model.config, "max_position_embeddings", 0) or 0) or 1 << 30
        self.truncated_prompts = 0
        self._grammars: dict[str, object] = {}
        # asked between decode steps: True stops the running generation (the service's
        # BatchingEngine sets it when every request of the batch was abandoned by its client)
        self.stop_when: Callable[[], bool] | None = None
        for name, path in (adapters or {}).items():
            self.add_adapter(name, path)

    def add_adapter(self, name: str, path: Path) -> None:
        from peft import PeftModel

        if not self.adapters:
            self.model = PeftModel.from_pretrained(self.model, str(path), adapter_name=name).eval()
        elif name not in self.adapters:
            self.model.load_adapter(str(path), adapter_name=name)
        self.adapters.append(name)

    def _compiled_regex(self, regex: str) -> object:
        """xgrammar's compiled grammar for `regex`, compiled once per engine."""
        import xgrammar as xgr

        if regex not in self._grammars:
            if len(self._grammars) >= 4096:  # per-view grammars: bound the cache
                self._grammars.clear()
            if self._grammar_compiler is None:
                # The model's vocabulary can be padded beyond the tokenizer's: the mask must cover it.
                info = xgr.TokenizerInfo.from_huggingface(self.tokenizer, vocab_size=self.model.config.vocab_size)
                self._grammar_compiler = xgr.GrammarCompiler(info)
            self._grammars[regex] = self._grammar_compiler.compile_regex(regex)
        return self._grammars[regex]

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    @torch.inference_mode()
    def _generate_chunk(
        self, prompts: list[str], max_new_tokens: int, temperature: float, regexes: list[str | None]
    ) -> list[Generation]:
        encoded = self.tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        room = self._max_context - max_new_tokens
        lengths = encoded["attention_mask"].sum(dim=1)
        if room > 0 and int(lengths.max()) > room:
            # Over the model's context a prompt would fail (or exhaust memory, the attention mask
            # is batch x length^2): its beginning goes, the question and the generation prompt at
            # its end stay. Counted and logged, never silent.
            over = int((lengths > room).sum())
            self.truncated_prompts += over
            _log.warning("%d prompt(s) over %d tokens cut from the left to fit the model's context", over, room)
            self.tokenizer.truncation_side = "left"
            encoded = self.tokenizer(
                prompts, return_tensors="pt", padding=True, add_special_tokens=False, truncation=True, max_length=room
            )
        encoded = encoded.to(self.device)
        sampling = {"do_sample": True, "temperature": temperature} if temperature > 0 else {"do_sample": False}
        if any(r is not None for r in regexes):
            from xgrammar.contrib.hf import LogitsProcessor

            # One processor per generate call (it keeps per-row matcher state), one grammar per row;
            # a row without a regex gets the "anything" grammar.
            grammars = [self._compiled_regex(r if r is not None else r"[\s\S]*") for r in regexes]
            sampling["logits_processor"] = [LogitsProcessor(grammars if len(set(regexes)) > 1 else grammars[0])]
        if self.stop_when is not None:
            sampling["stopping_criteria"] = _stopping(self.stop_when)
        output = self.model.generate(
            **encoded, max_new_tokens=max_new_tokens, pad_token_id=self.tokenizer.pad_token_id, **sampling
        )
        width = encoded["input_ids"].shape[1]
        results = []
        for row, mask in zip(output, encoded["attention_mask"]):
            new = row[width:]
            new = new[new != self.tokenizer.pad_token_id]
            text = self.tokenizer.decode(new, skip_special_tokens=True).strip()
            results.append(Generation(text, int(mask.sum()), len(new)))
        return results

    @torch.inference_mode()
    def _score_one(self, prompt: str, continuations: list[str]) -> list[float]:
        """The prompt runs once; every continuation then runs on a copy of its key/value cache."""
        prompt_ids = self.tokenizer(prompt, return_tensors="pt", add_special_tokens=False)["input_ids"].to(self.device)
        pieces = [
            self.tokenizer(c, add_special_tokens=False)["input_ids"] or [self.tokenizer.eos_token_id]
            for c in continuations
        ]
        width = max(len(p) for p in pieces)
        pad = self.tokenizer.pad_token_id
        ids = torch.tensor([p + [pad] * (width - len(p)) for p in pieces], device=self.device)
        mask = torch.tensor([[1] * len(p) + [0] * (width - len(p)) for p in pieces], device=self.device)
        first = self.model(input_ids=prompt_ids, use_cache=True)
        cache = first.past_key_values
        cache.batch_repeat_interleave(len(pieces))
        length = prompt_ids.shape[1]
        out = self.model(
            input_ids=ids,
            past_key_values=cache,
            attention_mask=torch.cat([torch.ones(len(pieces), length, dtype=mask.dtype, device=self.device), mask], 1),
            position_ids=torch.arange(length, length + width, device=self.device).expand(len(pieces), -1),
        )
        # token t of a continuation is predicted by the prompt's last position (t = 0) or by t - 1
        logits = torch.cat([first.logits[:, -1:].expand(len(pieces), -1, -1), out.logits[:, :-1]], 1).float()
        picked = torch.log_softmax(logits, -1).gather(2, ids.unsqueeze(-1)).squeeze(-1)
        return ((picked * mask).sum(1) / mask.sum(1)).tolist()

    def score_continuations(
        self, chats: list[ChatMessages], continuations: list[list[str]], *, adapter: str | None = None
    ) -> list[list[float]]:
        if adapter is not None and adapter not in self.adapters:
            raise KeyError(f"adapter {adapter!r} is not loaded (loaded: {self.adapters})")
        prompts = [self.tokenizer.apply_chat_template(c, add_generation_prompt=True, tokenize=False) for c in chats]
        if self.adapters and adapter is None:
            with self.model.disable_adapter():
                return [self._score_one(p, c) if c else [] for p, c in zip(prompts, continuations)]
        if adapter is not None:
            self.model.set_adapter(adapter)
        return [self._score_one(p, c) if c else [] for p, c in zip(prompts, continuations)]

    def generate(
        self,
        batch: list[ChatMessages],
        *,
        adapter: str | None = None,
        max_new_tokens: int = 128,
        temperature: float = 0.0,
        regex: Regex = None,
    ) -> list[Generation]:
        if adapter is not None and adapter not in self.adapters:
            raise KeyError(f"adapter {adapter!r} is not loaded (loaded: {self.adapters})")
        prompts = [
            self.tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False) for chat in batch
        ]
        regexes = regex_per_chat(regex, len(batch))
        # Length-sorted chunks: less left padding per chunk; results go back in the caller's order.
        order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
        results: list[Generation | None] = [None] * len(prompts)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            args = ([prompts[i] for i in chunk], max_new_tokens, temperature, [regexes[i] for i in chunk])
            if self.adapters and adapter is None:
                with self.model.disable_adapter():
                    out = self._generate_chunk(*args)
            else:
                if adapter is not None:
                    self.model.set_adapter(adapter)
                out = self._generate_chunk(*args)
            for i, generation in zip(chunk, out):
                results[i] = generation
        return [r for r in results if r is not None]


def _stopping(stop_when: Callable[[], bool]) -> object:
    """transformers' stopping criteria that end every row once `stop_when()` is True."""
    from transformers import StoppingCriteria, StoppingCriteriaList

    class _StopWhen(StoppingCriteria):
        def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor, **kwargs: object) -> torch.Tensor:
            return torch.full((input_ids.shape[0],), stop_when(), dtype=torch.bool, device=input_ids.device)

    return StoppingCriteriaList([_StopWhen()])
