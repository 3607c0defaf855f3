"""Router training and routing throughput on this machine's accelerator (or CPU), by batch size.

1. LoRA training (`train_lora`: bf16 on CUDA, fp32 on CPU) on the routing examples: seconds per
   step, examples per second and peak GPU memory at each training batch size; ratios against
   the first batch size, measured in the same run.
2. Routing generation (`TransformersEngine.generate`, greedy) over the examples' router chats at
   each engine batch size, free and under each view's action grammar (xgrammar), with the adapter
   just trained: output tokens per second and chats per second; ratios against the first
   configuration.

The examples come from a materialized catalogue (`--export`: needs the platform installed); the
benchmark itself needs only torch, transformers, peft and xgrammar, so it also runs on a GPU
machine that has nothing else of the platform:

    .venv/bin/python benchmarks/router_device.py --export dagster_home/data-datasets/catalogue.duckdb \\
        --out /tmp/routing_examples.jsonl
    python benchmarks/router_device.py --examples /tmp/routing_examples.jsonl \\
        [--checkpoint HF_FOLDER | --gguf SmolLM2-135M-Instruct.Q4_1.gguf] [--train-batches 4 16 32] \\
        [--engine-batches 8 32 64] [--steps 8] [--chats 128]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import torch

from rag_assets.core.engines.base_model import ensure_hf_checkpoint
from rag_assets.core.engines.transformers_engine import TransformersEngine
from rag_assets.core.router_training import LoraSettings, TrainingExample, train_lora


def export_examples(catalogue: Path, out: Path) -> int:
    """Every labelled routing sample of every collection as {messages, target, regex, collection}."""
    import duckdb

    from rag_assets.core.catalogue import load_trees
    from rag_assets.core.router_io import routing_messages, view_action_regex
    from rag_assets.core.routing_data import RoutingSample, restore, sample_from_row

    fields = ", ".join("s." + f for f in RoutingSample.__dataclass_fields__)
    with duckdb.connect(str(catalogue), read_only=True) as con:
        rows = con.execute(f"SELECT s.collection, {fields}, a.target FROM routing_actions a JOIN routing_subtrees s "
                           "USING (collection, subtree_id) WHERE a.kind <> 'failed' "
                           "ORDER BY s.collection, s.subtree_id").fetchall()
        written = 0
        with out.open("w") as handle:
            for collection in sorted({r[0] for r in rows}):
                mine = [r for r in rows if r[0] == collection]
                samples = [sample_from_row(r[1:-1]) for r in mine]
                trees = {d: n for d, (n, _) in load_trees(con, collection,
                                                          doc_ids=sorted({s.doc_id for s in samples})).items()}
                for sample, row in zip(samples, mine):
                    view = restore(sample, trees[sample.doc_id])[1]
                    handle.write(json.dumps({"collection": collection, "target": row[-1],
                                             "messages": routing_messages(sample.query, sample.rendered),
                                             "regex": view_action_regex(view)}) + "\n")
                    written += 1
    return written


def _peak_gib() -> float:
    return torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else float("nan")


def bench_training(checkpoint: Path, examples: list[dict], batches: list[int], steps: int,
                   workdir: Path) -> Path | None:
    training = [TrainingExample(e["messages"], e["target"]) for e in examples]
    print(f"\n## LoRA training: {len(training)} examples, {steps} steps per batch size")
    print("| batch | device | dtype | s/step | examples/s | peak GPU GiB | first->last loss | vs first |")
    print("|---|---|---|---|---|---|---|---|")
    baseline, adapter = None, None
    for batch in batches:
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()
        result = train_lora(checkpoint, training, workdir / f"adapters-{batch}",
                            LoraSettings(batch_size=batch, max_steps=steps, epochs=100), progress=False)
        rate = batch / result.seconds_per_step
        baseline = baseline or rate
        adapter = adapter or result.adapter_dir
        print(f"| {batch} | {result.device} | {result.dtype} | {result.seconds_per_step:.3f} | {rate:.1f} | "
              f"{_peak_gib():.2f} | {result.losses[0]:.3f}->{result.losses[-1]:.3f} | {rate / baseline:.2f}x |")
    return adapter


def bench_generation(checkpoint: Path, adapter: Path | None, examples: list[dict], batches: list[int],
                     chats: int, max_new_tokens: int) -> None:
    chosen = (examples * (chats // max(len(examples), 1) + 1))[:chats]
    messages = [e["messages"] for e in chosen]
    grammars = [e["regex"] for e in chosen]
    print(f"\n## Routing generation: {len(chosen)} router chats, {max_new_tokens} new tokens at most, "
          f"adapter {'yes' if adapter else 'no'}")
    print("| engine batch | grammar | seconds | chats/s | output tokens/s | prompt tokens/chat | vs first |")
    print("|---|---|---|---|---|---|---|")
    baseline = None
    for batch in batches:
        engine = TransformersEngine(checkpoint, batch_size=batch, adapters={"router": adapter} if adapter else None)
        name = "router" if adapter else None
        engine.generate(messages[:batch], adapter=name, max_new_tokens=8)  # warm-up (kernels, grammar compiler)
        for constrained in (False, True):
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            started = time.perf_counter()
            outputs = engine.generate(messages, adapter=name, max_new_tokens=max_new_tokens,
                                      regex=grammars if constrained else None)
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            seconds = time.perf_counter() - started
            tokens = sum(o.output_tokens for o in outputs)
            prompt = sum(o.prompt_tokens for o in outputs) / len(outputs)
            baseline = baseline or tokens / seconds
            print(f"| {batch} | {'yes' if constrained else 'no'} | {seconds:.2f} | {len(outputs) / seconds:.1f} | "
                  f"{tokens / seconds:.0f} | {prompt:.0f} | {tokens / seconds / baseline:.2f}x |")
        del engine
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--export", type=Path, help="catalogue.duckdb to export routing examples from, then exit")
    parser.add_argument("--out", type=Path, default=Path("routing_examples.jsonl"))
    parser.add_argument("--examples", type=Path, help="JSONL written by --export")
    parser.add_argument("--checkpoint", type=Path, help="Hugging Face model folder (default: the packaged SmolLM2)")
    parser.add_argument("--gguf", type=Path, help="GGUF file to convert instead of the packaged one")
    parser.add_argument("--train-batches", type=int, nargs="*", default=[4, 16, 32])
    parser.add_argument("--engine-batches", type=int, nargs="*", default=[8, 32, 64])
    parser.add_argument("--steps", type=int, default=8, help="training steps per batch size")
    parser.add_argument("--chats", type=int, default=128, help="router chats generated per configuration")
    parser.add_argument("--max-new-tokens", type=int, default=48)
    args = parser.parse_args()

    if args.export:
        print(f"wrote {export_examples(args.export, args.out)} examples to {args.out}")
        return
    if not args.examples:
        parser.error("--examples FILE (written by --export) is required")
    examples = [json.loads(line) for line in args.examples.read_text().splitlines() if line.strip()]
    if not examples:
        raise SystemExit(f"{args.examples}: no examples")
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "CPU"
    print(f"device: {device} | torch {torch.__version__} | threads {torch.get_num_threads()}")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        started = time.perf_counter()
        checkpoint = args.checkpoint or ensure_hf_checkpoint(workdir / "models", args.gguf)
        print(f"checkpoint ready in {time.perf_counter() - started:.1f} s: {checkpoint}")
        adapter = bench_training(checkpoint, examples, args.train_batches, args.steps, workdir)
        bench_generation(checkpoint, adapter, examples, args.engine_batches, args.chats, args.max_new_tokens)


if __name__ == "__main__":
    main()
