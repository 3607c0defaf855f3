"""The reader step with its text streamed as it is generated (the service's server-sent events).

A one-question reader call on the transformers engine runs the engine's own model with a
`TextStreamer` that hands each finished piece of text to a callback; any other engine or batch
generates as usual and hands over the whole text at the end. The result is the engine's own: the
same greedy tokens, the same `Generation`.

What is handed on is only text the answer keeps (`SettledStream`): whole sentences, settled by the
same rule as the stored answer (core/answering/echo.py), so an echo or a clause cut by the token
limit is never shown; `finish` sends the rest of the stored answer. The streamed text and the
stored text are one string.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from rag_assets.core.answering.answer_ending import SENTENCE_END
from rag_assets.core.answering.degenerate import before_a_repeat
from rag_assets.core.answering.echo import settle_answer
from rag_assets.core.engines.base import ChatMessages, Generation, LLMEngine, Regex


class SettledStream:
    """Raw reader text in, the settled answer's text out, piece by piece: a piece is sent only
    when a sentence has ended, the settled text so far still begins with what was sent, and the
    piece does not repeat the words before it (a loop's second saying is cut from the answer)."""

    def __init__(self, on_text: Callable[[str], None]) -> None:
        self.on_text = on_text
        self.raw = ""
        self.sent = ""

    def _send(self, text: str) -> None:
        if text.startswith(self.sent) and len(text) > len(self.sent):
            self.on_text(text[len(self.sent) :])
            self.sent = text

    def feed(self, piece: str) -> None:
        self.raw += piece
        ends = [m.end() for m in SENTENCE_END.finditer(self.raw)]
        if ends:  # what might begin a loop waits: cut later, it must not have been sent
            self._send(before_a_repeat(settle_answer(self.raw[: ends[-1]]).text))

    def finish(self, answer: str) -> bool:
        """Send the rest of the stored `answer`; False when what was sent is not its beginning."""
        self._send(answer)
        return answer.startswith(self.sent)


class StreamingReader(LLMEngine):
    def __init__(self, engine: LLMEngine, on_text: Callable[[str], None]) -> None:
        self.shared = engine  # a BatchingEngine gives its model to the stream alone (`exclusive`)
        self.engine = getattr(engine, "engine", engine)
        self.settled = SettledStream(on_text)
        self.on_text = self.settled.feed
        self.model_id = engine.model_id

    def finish(self, answer: str) -> bool:
        """The stored answer's text not streamed yet is sent (False: the stream differs from it)."""
        return self.settled.finish(answer)

    def count_tokens(self, text: str) -> int:
        return self.engine.count_tokens(text)

    def generate(
        self,
        batch: list[ChatMessages],
        *,
        adapter: str | None = None,
        max_new_tokens: int = 128,
        temperature: float = 0.0,
        regex: Regex = None,
    ) -> list[Generation]:
        model = getattr(self.engine, "model", None)
        tokenizer = getattr(self.engine, "tokenizer", None)
        if len(batch) != 1 or regex is not None or model is None or tokenizer is None or temperature > 0:
            out = self.shared.generate(
                batch, adapter=adapter, max_new_tokens=max_new_tokens, temperature=temperature, regex=regex
            )
            for generation in out:
                self.on_text(generation.text)
            return out
        return [self._stream(model, tokenizer, batch[0], adapter, max_new_tokens)]

    def _stream(self, model: Any, tokenizer: Any, chat: ChatMessages, adapter: str | None, max_new_tokens: int):
        import torch
        from transformers import TextStreamer

        on_text = self.on_text

        class _Callback(TextStreamer):
            def on_finalized_text(self, text: str, stream_end: bool = False) -> None:
                if text:
                    on_text(text)

        prompt = tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
        encoded = tokenizer([prompt], return_tensors="pt", add_special_tokens=False).to(self.engine.device)
        adapters = getattr(self.engine, "adapters", [])
        exclusive = getattr(self.shared, "exclusive", contextlib.nullcontext)
        with exclusive(), torch.inference_mode():
            if adapters and adapter is None:
                context = model.disable_adapter()
            else:
                if adapter is not None:
                    model.set_adapter(adapter)
                context = contextlib.nullcontext()
            with context:
                output = model.generate(
                    **encoded,
                    max_new_tokens=max_new_tokens,
                    do_sample=False,
                    pad_token_id=tokenizer.pad_token_id,
                    streamer=_Callback(tokenizer, skip_prompt=True, skip_special_tokens=True),
                )
        new = output[0][encoded["input_ids"].shape[1] :]
        new = new[new != tokenizer.pad_token_id]
        text = tokenizer.decode(new, skip_special_tokens=True).strip()
        return Generation(text, int(encoded["input_ids"].shape[1]), len(new))
