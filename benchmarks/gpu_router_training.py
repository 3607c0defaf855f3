"""LoRA router training on a GPU against the same machine's CPU: seconds per step, examples per
second and peak memory for a few batch sizes, with the GPU/CPU ratio measured in the same run.

The model has SmolLM2-135M's exact shape (30 layers, hidden 576, 9 heads / 3 KV heads, vocab
49152) with random weights and a word-level tokenizer, so it needs no download and no packaged
model: step time depends on the shape, not on the weights. It runs `train_lora` unchanged (bf16
autocast on CUDA, fp32 on CPU), i.e. the code path `router_adapter` takes with `device: auto`.

    python -m benchmarks.gpu_router_training                 # GPU batch sizes 4 16 32, CPU batch 4
    python -m benchmarks.gpu_router_training --batch-sizes 8 --cpu-steps 0

Needs only torch, transformers and peft (it runs on a bare GPU machine without the catalogue).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import torch

from benchmarks.step_clock import StepClock
from rag_assets.core.training.lora import LoraSettings, TrainingExample, train_lora

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} <|end|> {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|> {% endif %}"
)
SMOLLM2_135M = dict(
    vocab_size=49152,
    hidden_size=576,
    intermediate_size=1536,
    num_hidden_layers=30,
    num_attention_heads=9,
    num_key_value_heads=3,
    max_position_embeddings=8192,
    tie_word_embeddings=True,
)


def smollm2_shaped_model(folder: Path, words: int = 2000) -> Path:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<pad>", "<unk>", "<|end|>", "<|system|>", "<|user|>", "<|assistant|>", "</s>"]
    vocab = {token: i for i, token in enumerate(specials + [f"w{i}" for i in range(words)])}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", unk_token="<unk>", eos_token="</s>")
    tokenizer.chat_template = CHAT_TEMPLATE
    config = LlamaConfig(**SMOLLM2_135M, pad_token_id=0, eos_token_id=vocab["</s>"], bos_token_id=vocab["</s>"])
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def router_like_examples(count: int, prompt_words: int, words: int = 2000) -> list[TrainingExample]:
    """Prompts about as long as a routed subtree view (`prompt_words` tokens), short action targets."""
    rng = random.Random(0)
    out = []
    for _ in range(count):
        prompt = " ".join(f"w{rng.randrange(words)}" for _ in range(prompt_words))
        target = " ".join(f"w{rng.randrange(words)}" for _ in range(12))
        out.append(TrainingExample([{"role": "user", "content": prompt}], target))
    return out


def measure(model: Path, device: str, batch: int, steps: int, prompt_words: int, max_length: int) -> dict:
    examples = router_like_examples(batch * (steps + 1), prompt_words)
    settings = LoraSettings(batch_size=batch, max_steps=steps + 1, max_length=max_length)
    with tempfile.TemporaryDirectory() as out:
        clock = StepClock(device)
        result = train_lora(
            model, examples, Path(out), settings, device=device, progress=False, on_step=clock.on_step
        )  # fmt: skip
        wall = time.perf_counter() - clock.started
    steady = clock.steady_seconds(result.seconds_per_step)
    return {
        "device": result.device,
        "dtype": result.dtype,
        "batch": batch,
        "steps": result.steps,
        "s_per_step": steady,
        "examples_per_s": batch / steady if steady else float("nan"),
        "peak_gib": clock.peak_gib(),
        "wall_s": wall,
        "final_loss": result.losses[-1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[4, 16, 32])
    parser.add_argument("--steps", type=int, default=5, help="optimizer steps per GPU measurement (+1 warm-up)")
    parser.add_argument(
        "--cpu-steps", type=int, default=1, help="CPU baseline steps at the first batch size (0 = skip)"
    )
    parser.add_argument("--prompt-words", type=int, default=900)
    parser.add_argument("--max-length", type=int, default=1024)
    args = parser.parse_args()

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        model = smollm2_shaped_model(Path(tmp) / "smollm2-135m-shaped")
        if torch.cuda.is_available():
            print(f"GPU: {torch.cuda.get_device_name(0)}, bf16 supported: {torch.cuda.is_bf16_supported()}")
            for batch in args.batch_sizes:
                rows.append(measure(model, "cuda", batch, args.steps, args.prompt_words, args.max_length))
                print(rows[-1], flush=True)
        else:
            print("no CUDA device: CPU rows only")
        if args.cpu_steps:
            rows.append(measure(model, "cpu", args.batch_sizes[0], args.cpu_steps, args.prompt_words, args.max_length))
            print(rows[-1], flush=True)

    print(f"\n{'device':8} {'dtype':9} {'batch':>5} {'s/step':>8} {'ex/s':>8} {'peak GiB':>9}")
    for r in rows:
        print(
            f"{r['device']:8} {r['dtype']:9} {r['batch']:>5} {r['s_per_step']:>8.3f} "
            f"{r['examples_per_s']:>8.2f} {r['peak_gib']:>9.2f}"
        )
    cpu = next((r for r in rows if r["device"] == "cpu"), None)
    if cpu:
        for r in rows:
            if r["device"] != "cpu":
                print(
                    f"GPU batch {r['batch']}: {r['examples_per_s'] / cpu['examples_per_s']:.1f}x the CPU's examples/s"
                )


if __name__ == "__main__":
    main()
