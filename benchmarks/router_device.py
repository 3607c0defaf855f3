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

    .venv/bin/python -m benchmarks.router_device --export dagster_home/data-datasets/catalogue.duckdb \\
        --out /tmp/routing_examples.jsonl
    python -m benchmarks.router_device --examples /tmp/routing_examples.jsonl \\
        [--checkpoint HF_FOLDER | --gguf SmolLM2-135M-Instruct.Q4_1.gguf] [--train-batches 4 16 32] \\
        [--engine-batches 8 32 64] [--steps 8] [--chats 128] [--train-epochs 3 --routed routed.jsonl]
    .venv/bin/python -m benchmarks.router_device --score routed.jsonl --catalogue .../catalogue.duckdb

`--train-epochs N` also trains each collection's router for whole epochs on its train fold and
routes its validation fold with the base model and the adapter; `--score` then computes the
router metrics of those outputs against the catalogue's views (what `router_metrics` reports).
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
from rag_assets.core.training.lora import LoraSettings, TrainingExample, train_lora


def export_examples(catalogue: Path, out: Path) -> int:
    """Every labelled routing sample of every collection as {messages, target, regex, collection}."""
    from rag_assets.core.routing.action_format import routing_messages, view_action_regex
    from rag_assets.core.routing.held_out_routing import SAMPLE_COLUMNS
    from rag_assets.core.routing.samples import restore, sample_from_row
    from rag_assets.core.store.connections import catalogue_connection
    from rag_assets.core.store.routing_tables import labelled_collections, load_labelled_rows
    from rag_assets.core.store.tree_tables import load_trees

    with catalogue_connection(catalogue, read_only=True) as con:
        written = 0
        with out.open("w") as handle:
            for collection in labelled_collections(con):
                mine = load_labelled_rows(con, collection, SAMPLE_COLUMNS, ["fold", "target"])
                samples = [sample_from_row(r[:-2]) for r in mine]
                trees = {
                    d: n
                    for d, (n, _) in load_trees(con, collection, doc_ids=sorted({s.doc_id for s in samples})).items()
                }
                for sample, row in zip(samples, mine):
                    view = restore(sample, trees[sample.doc_id])[1]
                    handle.write(
                        json.dumps(
                            {
                                "collection": collection,
                                "subtree_id": sample.subtree_id,
                                "fold": row[-2],
                                "target": row[-1],
                                "messages": routing_messages(sample.query, sample.rendered),
                                "regex": view_action_regex(view),
                            }
                        )
                        + "\n"
                    )
                    written += 1
    return written


def _peak_gib() -> float:
    return torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else float("nan")


def bench_training(
    checkpoint: Path, examples: list[dict], batches: list[int], steps: int, workdir: Path
) -> Path | None:
    training = [TrainingExample(e["messages"], e["target"]) for e in examples]
    print(f"\n## LoRA training: {len(training)} examples, {steps} steps per batch size")
    print("| batch | device | dtype | s/step | examples/s | peak GPU GiB | first->last loss | vs first |")
    print("|---|---|---|---|---|---|---|---|")
    baseline, adapter = None, None
    for batch in batches:
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()
        result = train_lora(
            checkpoint,
            training,
            workdir / f"adapters-{batch}",
            LoraSettings(batch_size=batch, max_steps=steps, epochs=100),
            progress=False,
        )
        rate = batch / result.seconds_per_step
        baseline = baseline or rate
        adapter = adapter or result.adapter_dir
        print(
            f"| {batch} | {result.device} | {result.dtype} | {result.seconds_per_step:.3f} | {rate:.1f} | "
            f"{_peak_gib():.2f} | {result.losses[0]:.3f}->{result.losses[-1]:.3f} | {rate / baseline:.2f}x |"
        )
    return adapter


def bench_generation(
    checkpoint: Path, adapter: Path | None, examples: list[dict], batches: list[int], chats: int, max_new_tokens: int
) -> None:
    chosen = (examples * (chats // max(len(examples), 1) + 1))[:chats]
    messages = [e["messages"] for e in chosen]
    grammars = [e["regex"] for e in chosen]
    print(
        f"\n## Routing generation: {len(chosen)} router chats, {max_new_tokens} new tokens at most, "
        f"adapter {'yes' if adapter else 'no'}"
    )
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
            outputs = engine.generate(
                messages, adapter=name, max_new_tokens=max_new_tokens, regex=grammars if constrained else None
            )
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            seconds = time.perf_counter() - started
            tokens = sum(o.output_tokens for o in outputs)
            prompt = sum(o.prompt_tokens for o in outputs) / len(outputs)
            baseline = baseline or tokens / seconds
            print(
                f"| {batch} | {'yes' if constrained else 'no'} | {seconds:.2f} | {len(outputs) / seconds:.1f} | "
                f"{tokens / seconds:.0f} | {prompt:.0f} | {tokens / seconds / baseline:.2f}x |"
            )
        del engine
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


def train_and_route(
    checkpoint: Path, examples: list[dict], epochs: int, batch: int, out: Path, workdir: Path, max_new_tokens: int
) -> None:
    """Per collection: a LoRA adapter trained for whole epochs on the train fold, then the
    validation fold routed under each view's grammar by the base model and by the adapter; the
    outputs go to `out` for `--score` (which parses them against the catalogue's views)."""
    print(f"\n## Router trained {epochs} epoch(s) at batch {batch} per collection, validation routed")
    print("| collection | train examples | steps | s/step | loss first->last | validation chats | routing s |")
    print("|---|---|---|---|---|---|---|")
    with out.open("w") as handle:
        for collection in sorted({e["collection"] for e in examples}):
            train = [
                TrainingExample(e["messages"], e["target"])
                for e in examples
                if e["collection"] == collection and e["fold"] == "train"
            ]
            validation = [e for e in examples if e["collection"] == collection and e["fold"] == "validation"]
            result = train_lora(
                checkpoint,
                train,
                workdir / f"adapters-{collection}",
                LoraSettings(batch_size=batch, epochs=epochs),
                progress=False,
            )
            engine = TransformersEngine(checkpoint, adapters={"router": result.adapter_dir})
            started = time.perf_counter()
            for model, adapter in (("base", None), (f"adapter-{epochs}ep", "router")):
                outputs = engine.generate(
                    [e["messages"] for e in validation],
                    adapter=adapter,
                    max_new_tokens=max_new_tokens,
                    regex=[e["regex"] for e in validation],
                )
                for example, output in zip(validation, outputs):
                    handle.write(
                        json.dumps(
                            {
                                "collection": collection,
                                "subtree_id": example["subtree_id"],
                                "model": model,
                                "output": output.text,
                            }
                        )
                        + "\n"
                    )
            print(
                f"| {collection} | {len(train)} | {result.steps} | {result.seconds_per_step:.3f} | "
                f"{result.losses[0]:.3f}->{result.losses[-1]:.3f} | {len(validation)} | "
                f"{time.perf_counter() - started:.1f} |"
            )
            del engine


def score_outputs(outputs: Path, catalogue: Path) -> None:
    """Router metrics (as the `router_metrics` asset computes them) of `train_and_route`'s outputs."""
    from rag_assets.core.routing.action_format import parse_router_output
    from rag_assets.core.routing.held_out_routing import RoutedSample, load_routing_samples, score_routed
    from rag_assets.core.routing.samples import restore
    from rag_assets.core.store.connections import catalogue_connection
    from rag_assets.core.store.tree_tables import load_trees

    rows = [json.loads(line) for line in outputs.read_text().splitlines() if line.strip()]
    print("| collection | model | samples | ANS-F1 | EXP-PRE | REF-ACC | expelled/output |")
    print("|---|---|---|---|---|---|---|")
    with catalogue_connection(catalogue, read_only=True) as con:
        for collection in sorted({r["collection"] for r in rows}):
            pairs = {s.subtree_id: (s, g) for s, g in load_routing_samples(con, collection, fold="validation")}
            trees = {
                d: n
                for d, (n, _) in load_trees(
                    con, collection, doc_ids=sorted({s.doc_id for s, _ in pairs.values()})
                ).items()
            }
            for model in sorted({r["model"] for r in rows if r["collection"] == collection}):
                mine = [
                    r
                    for r in rows
                    if r["collection"] == collection and r["model"] == model and r["subtree_id"] in pairs
                ]
                routed, golds = [], []
                for r in mine:
                    sample, gold = pairs[r["subtree_id"]]
                    view = restore(sample, trees[sample.doc_id])[1]
                    routed.append(RoutedSample(sample, parse_router_output(r["output"], view), r["output"]))
                    golds.append(gold)
                s = score_routed(routed, golds)
                print(
                    f"| {collection} | {model} | {s.samples} | {s.ans_f1:.3f} | {s.exp_pre:.3f} | {s.ref_acc:.3f} | "
                    f"{s.expelled_per_output:.3f} |"
                )


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
    parser.add_argument(
        "--train-epochs",
        type=int,
        default=0,
        help="also train each collection's router for this many epochs (batch: the last of "
        "--train-batches) and route its validation fold; outputs to --routed",
    )
    parser.add_argument("--routed", type=Path, default=Path("routed.jsonl"))
    parser.add_argument("--score", type=Path, help="routed.jsonl to score against --catalogue's views, then exit")
    parser.add_argument("--catalogue", type=Path, help="catalogue.duckdb for --score")
    args = parser.parse_args()

    if args.export:
        print(f"wrote {export_examples(args.export, args.out)} examples to {args.out}")
        return
    if args.score:
        if not args.catalogue:
            parser.error("--score needs --catalogue")
        score_outputs(args.score, args.catalogue)
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
        if args.train_batches:
            adapter = bench_training(checkpoint, examples, args.train_batches, args.steps, workdir)
            if args.engine_batches:
                bench_generation(checkpoint, adapter, examples, args.engine_batches, args.chats, args.max_new_tokens)
        if args.train_epochs:
            train_and_route(
                checkpoint,
                examples,
                args.train_epochs,
                (args.train_batches or [32])[-1],
                args.routed,
                workdir,
                args.max_new_tokens,
            )


if __name__ == "__main__":
    main()
