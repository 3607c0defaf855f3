"""An engine over any OpenAI-compatible chat-completions endpoint (vLLM `serve`, llama.cpp
server, hosted APIs).

- A batch is sent concurrently (a thread pool of `concurrency` requests in flight); results come
  back in the caller's order. The server batches them (vLLM does continuous batching).
- Adapters: an OpenAI endpoint selects a model by name, and `vllm serve --lora-modules
  NAME=FOLDER` exposes each LoRA adapter as a model called NAME, so `generate(adapter=NAME)` sends
  NAME as `model`. `add_adapter(name, folder)` registers a name; the folder is only read locally
  (to check it exists) because the server loads it, not this process.
- `regex` is forwarded only when `supports_regex` is set (vLLM's `structured_outputs: {"regex":
  ...}` extra body, the API of vLLM >= 0.12; hosted APIs reject unknown fields). Otherwise it is
  ignored, as with the transformers engine, and the router parser's validation is the guard.
- Token counts come from the response's `usage`.
- `count_tokens` uses the base model's tokenizer when `tokenizer_path` (a local folder) is given;
  otherwise it is an estimate (about 4 characters per token, never below the word count), good
  enough for budgeting prompts, not for billing.
- The API key is sent as a bearer header only; it never appears in repr, logs or error messages.

Only the standard library is used (urllib), so this engine needs no extra package.
"""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rag_assets.core.engines.base import ChatMessages, Generation, LLMEngine, Regex, regex_per_chat


class OpenAIEngineError(RuntimeError):
    """A request to the endpoint failed (the message names the endpoint and model, never the key)."""


class OpenAIEngine(LLMEngine):
    def __init__(
        self,
        model: str,
        base_url: str,
        api_key: str = "",
        *,
        supports_regex: bool = False,
        concurrency: int = 16,
        timeout_s: float = 300.0,
        tokenizer_path: Path | None = None,
        adapters: dict[str, Path | str | None] | None = None,
    ) -> None:
        if not model:
            raise ValueError("OpenAIEngine needs a model name (the served model, e.g. the path given to `vllm serve`)")
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"OpenAIEngine base_url must be an http(s) URL ending in /v1, got {base_url!r}")
        self.model_id = model
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self.supports_regex = supports_regex
        self.concurrency = max(1, concurrency)
        self.timeout_s = timeout_s
        self._tokenizer = None
        if tokenizer_path is not None:
            from transformers import AutoTokenizer

            self._tokenizer = AutoTokenizer.from_pretrained(tokenizer_path)
        self.adapters: list[str] = []
        for name, folder in (adapters or {}).items():
            self.add_adapter(name, folder)

    def __repr__(self) -> str:  # the key stays out of every repr
        return (
            f"OpenAIEngine(model={self.model_id!r}, base_url={self.base_url!r}, "
            f"supports_regex={self.supports_regex}, adapters={self.adapters})"
        )

    def add_adapter(self, name: str, folder: Path | str | None = None) -> None:
        """Register a LoRA module served by the endpoint under `name` (`--lora-modules name=folder`)."""
        if name not in self.adapters:
            self.adapters.append(name)

    def count_tokens(self, text: str) -> int:
        if self._tokenizer is not None:
            return len(self._tokenizer(text, add_special_tokens=False)["input_ids"])
        return max(len(text.split()), math.ceil(len(text) / 4))

    def _post(self, path: str, body: dict) -> dict:
        request = urllib.request.Request(
            f"{self.base_url}{path}",
            data=json.dumps(body).encode("utf-8"),
            method="POST",
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json",
                **({"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}),
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as error:
            detail = error.read().decode("utf-8", errors="replace")[:500]
            raise OpenAIEngineError(
                self._redact(
                    f"{self.base_url}{path} answered HTTP {error.code} for model {body.get('model')!r}: {detail}"
                )
            ) from None
        except (urllib.error.URLError, TimeoutError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise OpenAIEngineError(self._redact(f"{self.base_url}{path} is unreachable: {reason}")) from None

    def _redact(self, message: str) -> str:
        return message.replace(self._api_key, "***") if self._api_key else message

    def _one(
        self, chat: ChatMessages, model: str, max_new_tokens: int, temperature: float, regex: str | None
    ) -> Generation:
        body: dict = {"model": model, "messages": chat, "max_tokens": max_new_tokens, "temperature": temperature}
        if regex is not None and self.supports_regex:
            body["structured_outputs"] = {"regex": regex}
        data = self._post("/chat/completions", body)
        try:
            text = data["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            raise OpenAIEngineError(
                f"{self.base_url}/chat/completions returned no choice for model {model!r}"
            ) from None
        usage = data.get("usage") or {}
        output_tokens = usage.get("completion_tokens")
        prompt_tokens = usage.get("prompt_tokens")
        if prompt_tokens is None:  # endpoints without usage: estimate
            prompt_tokens = sum(self.count_tokens(m.get("content", "")) for m in chat)
        if output_tokens is None:
            output_tokens = self.count_tokens(text)
        return Generation(text.strip(), int(prompt_tokens), int(output_tokens))

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
            raise KeyError(f"adapter {adapter!r} is not registered (registered: {self.adapters})")
        if not batch:
            return []
        model = adapter or self.model_id
        regexes = regex_per_chat(regex, len(batch))
        if len(batch) == 1:
            return [self._one(batch[0], model, max_new_tokens, temperature, regexes[0])]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(batch))) as pool:
            return list(
                pool.map(lambda job: self._one(job[0], model, max_new_tokens, temperature, job[1]), zip(batch, regexes))
            )
