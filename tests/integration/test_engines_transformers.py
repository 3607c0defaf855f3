"""The real SmolLM2-135M-Instruct (converted from the packaged GGUF) through TransformersEngine."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_assets.core.engines.base_model import ensure_hf_checkpoint
from rag_assets.core.engines.transformers_engine import TransformersEngine

CHATS = [
    [{"role": "user", "content": "What is the capital of France?"}],
    [{"role": "system", "content": "Answer in one word."}, {"role": "user", "content": "Name a colour of the sky."}],
    [{"role": "user", "content": "Say hello."}],
]


@pytest.fixture
def checkpoint(smollm2_checkpoint: Path) -> Path:
    return smollm2_checkpoint


def test_conversion_is_done_once(checkpoint: Path) -> None:
    assert (checkpoint / "model.safetensors").is_file() and (checkpoint / "chat_template.jinja").is_file()
    assert "quantization_config" not in (checkpoint / "config.json").read_text()
    before = (checkpoint / "model.safetensors").stat().st_mtime_ns
    assert ensure_hf_checkpoint(checkpoint.parent) == checkpoint
    assert (checkpoint / "model.safetensors").stat().st_mtime_ns == before


def test_batched_greedy_generation_equals_one_at_a_time(checkpoint: Path) -> None:
    engine = TransformersEngine(checkpoint, batch_size=8)
    batch = engine.generate(CHATS, max_new_tokens=8)
    assert len(batch) == 3 and all(g.text and g.output_tokens > 0 and g.prompt_tokens > 5 for g in batch)
    assert "Paris" in batch[0].text
    alone = [engine.generate([chat], max_new_tokens=8)[0] for chat in CHATS]
    assert [g.text for g in alone] == [g.text for g in batch]  # left padding changes nothing
    assert [g.prompt_tokens for g in alone] == [g.prompt_tokens for g in batch]


def test_an_untrained_lora_adapter_loads_and_generates(checkpoint: Path, tmp_path: Path) -> None:
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    adapter = tmp_path / "adapter"
    base = AutoModelForCausalLM.from_pretrained(checkpoint)
    get_peft_model(base, LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"])).save_pretrained(adapter)
    engine = TransformersEngine(checkpoint, adapters={"router": adapter})
    with_adapter = engine.generate(CHATS[:1], adapter="router", max_new_tokens=6)
    without = engine.generate(CHATS[:1], max_new_tokens=6)
    assert with_adapter[0].text == without[0].text  # LoRA B starts at zero: same output
    with pytest.raises(KeyError, match="not loaded"):
        engine.generate(CHATS[:1], adapter="missing")


def test_regex_constrained_generation_per_chat(checkpoint: Path) -> None:
    import re

    engine = TransformersEngine(checkpoint, batch_size=8)
    grammars = [r"(yes|no)", r"[0-9]{3}", r"colou?r: (red|blue)"]
    out = engine.generate(CHATS, max_new_tokens=12, regex=grammars)
    assert all(re.fullmatch(g, o.text) for g, o in zip(grammars, out)), [o.text for o in out]
    free = engine.generate(CHATS[:1], max_new_tokens=8)
    assert not re.fullmatch(grammars[0], free[0].text)  # unconstrained, the model talks
    assert all(re.fullmatch("(yes|no)", o.text) for o in engine.generate(CHATS, max_new_tokens=4, regex="(yes|no)"))
    with pytest.raises(ValueError, match="2 regexes for 3 chats"):
        engine.generate(CHATS, regex=grammars[:2])


def test_a_prompt_over_the_context_is_cut_from_the_left_not_fatal(checkpoint: Path) -> None:
    engine = TransformersEngine(checkpoint, batch_size=8)
    engine._max_context = 64  # the real model's 8,192 tokens, scaled down so the test stays small
    long = [{"role": "user", "content": "filler " * 200 + "What is the capital of France?"}]
    out = engine.generate([long, CHATS[2]], max_new_tokens=8)
    assert engine.truncated_prompts == 1 and out[0].prompt_tokens <= 64 - 8 and out[1].text


def test_batch_size_zero_picks_the_device_default(checkpoint: Path) -> None:
    assert TransformersEngine(checkpoint, device="cpu").batch_size == 16  # 64 on CUDA (measured on an H100)
    assert TransformersEngine(checkpoint, device="cpu", batch_size=3).batch_size == 3


def test_continuation_scores_equal_a_full_forward_pass(checkpoint: Path) -> None:
    # The cached-prefix scoring must give what scoring each (prompt + continuation) whole gives.
    import torch

    engine = TransformersEngine(checkpoint)
    chat = CHATS[0]
    options = ["Paris", "The capital of France is Paris.", "Berlin"]
    [scores] = engine.score_continuations([chat], [options])
    prompt = engine.tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
    prompt_ids = engine.tokenizer(prompt, add_special_tokens=False)["input_ids"]
    for option, score in zip(options, scores):
        ids = engine.tokenizer(option, add_special_tokens=False)["input_ids"]
        with torch.inference_mode():
            logits = engine.model(input_ids=torch.tensor([prompt_ids + ids])).logits[0].float()
        logp = torch.log_softmax(logits[len(prompt_ids) - 1 : -1], -1)
        expected = float(logp[torch.arange(len(ids)), torch.tensor(ids)].mean())
        assert score == pytest.approx(expected, abs=1e-3), option
    assert scores[0] > scores[2]  # the 135M model does know where Paris is
    assert engine.score_continuations([chat, CHATS[1]], [[], ["blue"]])[0] == []
