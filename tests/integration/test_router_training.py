"""LoRA SFT for real (transformers + peft) on a tiny randomly initialised Llama written to tmp_path.

The packaged SmolLM2 needs the GGUF conversion of the engines work; the training loop itself is
model-agnostic, so a 2-layer model with a word-level tokenizer and a chat template exercises every
line of it (prompt masking, batching, optimizer, atomic publish) in seconds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_assets.core.training.lora import (
    IGNORE_INDEX,
    LoraSettings,
    TrainingExample,
    encode_example,
    train_lora,
)
from rag_assets.core.training.model_folders import publish_model_folder

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} <|end|> {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|> {% endif %}"
)
WORDS = [
    "question",
    "which",
    "node",
    "answers",
    "[ANSWER]",
    "[EXPAND]",
    "cannot",
    "answer",
    "1",
    "2",
    "3",
    "4",
    "5",
    ":",
    "the",
    "kettle",
    "boils",
    "pond",
    "ice",
    "system",
    "user",
    "assistant",
]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<pad>", "<unk>", "<|end|>", "<|system|>", "<|user|>", "<|assistant|>", "</s>"]
    vocab = {token: i for i, token in enumerate(specials + WORDS)}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", unk_token="<unk>", eos_token="</s>")
    tokenizer.chat_template = CHAT_TEMPLATE
    config = LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=256,
        pad_token_id=0,
        eos_token_id=vocab["</s>"],
        bos_token_id=vocab["</s>"],
    )
    folder = tmp_path_factory.mktemp("tiny-llama")
    import torch

    torch.manual_seed(0)  # the same initial weights whatever ran before in this process
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _examples() -> list[TrainingExample]:
    return [
        TrainingExample(
            [
                {"role": "system", "content": "which node answers"},
                {"role": "user", "content": f"question {n} : the kettle boils"},
            ],
            f"[ANSWER] {n} : the kettle",
        )
        for n in ("1", "2", "3", "4")
    ] + [TrainingExample([{"role": "user", "content": "question 5 : pond ice"}], "cannot answer")]


def test_only_target_tokens_carry_labels(tiny_model: Path) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    ids, labels = encode_example(tokenizer, _examples()[0], max_length=64)
    target = tokenizer("[ANSWER] 1 : the kettle</s>", add_special_tokens=False)["input_ids"]
    assert labels[-len(target) :] == target and ids[-len(target) :] == target
    assert set(labels[: -len(target)]) == {IGNORE_INDEX}
    short_ids, short_labels = encode_example(tokenizer, _examples()[0], max_length=2 * len(target))
    assert len(short_ids) == 2 * len(target) and short_labels[-len(target) :] == target  # prompt cut, target whole


def test_training_lowers_the_loss_and_publishes_an_adapter(tiny_model: Path, tmp_path: Path) -> None:
    settings = LoraSettings(
        rank=4,
        alpha=8,
        target_modules=["q_proj", "v_proj", "up_proj", "down_proj"],
        learning_rate=5e-2,
        epochs=30,
        batch_size=5,
        max_length=64,
    )
    steps: list[int] = []
    result = train_lora(
        tiny_model,
        _examples(),
        tmp_path / "adapters",
        settings,
        device="cpu",
        on_step=lambda step, total, loss: steps.append(step),
        progress=False,
    )
    assert result.steps == 30 and steps == list(range(1, 31))
    assert sum(result.losses[-5:]) / 5 < sum(result.losses[:5]) / 5 * 0.9
    assert result.adapter_dir == tmp_path / "adapters" / result.adapter_id
    config = json.loads((result.adapter_dir / "adapter_config.json").read_text())
    assert sorted(config["target_modules"]) == ["down_proj", "q_proj", "up_proj", "v_proj"] and not config.get(
        "modules_to_save"
    )
    assert json.loads((result.adapter_dir / "training.json").read_text())["steps"] == 30
    assert [p.name for p in (tmp_path / "adapters").iterdir()] == [result.adapter_id]  # no staging left

    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    model = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(tiny_model), result.adapter_dir)
    assert model.active_adapter == "default"


def test_no_examples_is_a_clear_error(tiny_model: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no training examples"):
        train_lora(tiny_model, [], tmp_path, device="cpu", progress=False)


def test_a_published_folder_is_named_by_its_files_and_its_identity(tmp_path: Path) -> None:
    def write(staging: Path) -> dict:
        (staging / "weights.bin").write_bytes(b"the same weights")
        return {"kind": "test"}

    first, first_id = publish_model_folder(tmp_path, write, record="record.json", prefix="t-", identity={"t": 0.5})
    same, same_id = publish_model_folder(tmp_path, write, record="record.json", prefix="t-", identity={"t": 0.5})
    assert (same, same_id) == (first, first_id)  # same weights, same calibration: the folder is kept
    # The same weights calibrated differently are another model, with their own record.
    other, other_id = publish_model_folder(tmp_path, write, record="record.json", prefix="t-", identity={"t": 0.7})
    assert other_id != first_id and other_id.startswith("t-") and len(other_id) == len(first_id)
    assert json.loads((other / "record.json").read_text())["adapter_id"] == other_id
    _, plain_id = publish_model_folder(tmp_path, write, record="record.json", prefix="t-")
    assert plain_id not in (first_id, other_id)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted({first_id, other_id, plain_id})
