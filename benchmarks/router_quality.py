"""Router kinds side by side on a materialized catalogue: evidence quality and speed, no reader.

For each collection of a catalogue that `rag run` (or `make run DATA=../shared/datasets`) built,
the evaluation questions (dev + test by default, never seen in training) are answered up to the
evidence, by retrieve-and-read (rag-hybrid, top 5 passages) and by RDR2 routed with each router
kind: hit-nodes (floor), similarity (untrained encoder), encoder (trained), oracle (ceiling) and,
with --llm, the LoRA-adapted LLM, generating its actions (llm) and ranking them by likelihood
(llm-rank). Every RDR2 row is measured at most at the words rag-hybrid gave the same question
(the budget, unused words filled with the router's best-scored unselected nodes), free, and for
the scoring kinds at the budget without the fill ("no fill"). Printed: passage hit (short
answers), evidence recall (gold evidence
lines), section hit (gold manual section), evidence words, routing seconds.

--synthetic-ablation trains the encoder router twice per collection, on the labelled train fold
alone and with the synthetic (corpus-made) questions, and prints both routers' validation ANS-F1
/ REF-ACC and evidence. --encoder-variants trains one router per EncoderSettings variant (e.g.
'max_steps=30; epochs=2,negatives=3') on the same data, for choosing the defaults with figures.

--fill-orders router,retrieval,fused adds, for every kind, the budgeted row with the budget's
unused words filled in each of those orders (`routing.fill_scores`) instead of the router's own
calibrated order (the trained encoder's is chosen on held-out questions; the others fill by score).

--speed adds the speed comparison of the two trainable kinds in one run: training seconds per
training view (the encoder for one epoch of the catalogue's train views, the LLM for --llm-steps
LoRA steps) and routing throughput (validation subtrees per second), with the ratio.

    .venv/bin/python -m benchmarks.router_quality --data-dir dagster_home/data-datasets [--llm] [--speed]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from benchmarks.common import catalogue_in, project_resources, session_models, use_data_dir
from benchmarks.common import parse_variants as parse_assignments
from rag_assets.core.answering.policy.budgets import evidence_budgets
from rag_assets.core.answering.policy.catalogue import StrategySettings, strategy_specs
from rag_assets.core.answering.policy.sessions import open_session
from rag_assets.core.answering.session import AnsweringSession
from rag_assets.core.answering.strategies import gather_evidence
from rag_assets.core.answering.types import StrategySpec
from rag_assets.core.evaluation.held_out_evidence import evidence_metrics, held_out_evidence
from rag_assets.core.index.embedding import Embedder
from rag_assets.core.routing.encoder_training import load_encoder_router
from rag_assets.core.routing.held_out_routing import (
    load_routing_examples,
    load_routing_samples,
    route_samples_with,
    score_routed,
)
from rag_assets.core.routing.samples import SYNTHETIC_QID_PREFIX
from rag_assets.core.store.connections import catalogue_connection
from rag_assets.core.store.question_table import load_question_rows, question_collections

METRICS = ("passage_hit", "evidence_recall", "section_hit")
SCORING_KINDS = ("hit-nodes", "similarity", "encoder", "oracle")


def mean_metrics(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    keys = dict.fromkeys(k for r in rows for k in r)
    return {k: float(np.mean([r[k] for r in rows if k in r])) for k in keys}


def session_routers(session: AnsweringSession, llm: bool) -> dict:
    """The routers of every kind this collection can route with, from its session: the trained
    encoder and LLM only where published (the LLM's ranking kind where the engine can score)."""
    kinds = [k for k in SCORING_KINDS if k != "encoder" or "encoder" in session.published.routers]
    routers = {kind: session.router(kind) for kind in kinds}
    if llm and session.published.llm_adapter and session.can_rank():
        routers["llm-rank"] = session.router("llm-rank")
    return routers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, help="the data folder (default: RAG_DATA_DIR's)")
    parser.add_argument("--collections", default="", help="comma-separated (default: every collection with questions)")
    parser.add_argument("--split", default="dev,test")
    parser.add_argument("--max-questions", type=int, default=0, help="0 = all")
    parser.add_argument("--top-k", type=int, default=2, help="documents rdr2 routes")
    parser.add_argument("--expand-iterations", type=int, default=1)
    parser.add_argument("--llm", action="store_true", help="also route with the trained LLM adapter (slow on CPU)")
    parser.add_argument("--speed", action="store_true", help="training and routing speed of both trainable kinds")
    parser.add_argument("--llm-steps", type=int, default=2)
    parser.add_argument(
        "--synthetic-ablation",
        action="store_true",
        help="train the encoder router with and without the corpus-made questions and compare them",
    )
    parser.add_argument(
        "--encoder-variants",
        default="",
        help="train encoder routers with these EncoderSettings, e.g. 'max_steps=30; epochs=2,negatives=3' "
        "(';' between variants; a tuple field takes '/'-separated values: section_weights=0/2), "
        "on train + synthetic questions, and compare them",
    )
    parser.add_argument("--only-variants", action="store_true", help="skip the router rows, train the variants only")
    parser.add_argument(
        "--fill-orders",
        default="",
        help="also measure the budget fill in these orders (comma-separated, routing.FILL_ORDERS: router, "
        "retrieval, fused) for every kind, beside the strategy's default",
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    use_data_dir(args.data_dir)

    resources = project_resources()
    models = session_models(resources)
    settings = StrategySettings(top_k=args.top_k, expand_iterations=args.expand_iterations, evidence_budget=False)
    report: dict[str, dict] = {}
    with catalogue_connection(catalogue_in(), read_only=True) as con:
        collections = [c for c in args.collections.split(",") if c] or question_collections(con)
        for collection in collections:
            questions = load_question_rows(con, collection, args.split)
            if args.max_questions:
                questions = questions[: args.max_questions]
            if not questions:
                print(f"{collection}: no {args.split} questions")
                continue
            # retrieval at the LanceDB version published with this collection's passages, as
            # `answers` and the held-out judge in `router_adapter` read it
            session = open_session(con, collection, models, gold=questions)
            report[collection] = measure_collection(con, session, questions, settings, resources, args)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


def measure_collection(con, session: AnsweringSession, questions, settings: StrategySettings, resources, args) -> dict:
    """The evidence rows of every router kind on `questions` (and the --speed and encoder-variant
    figures when asked), printed and returned."""
    collection, trees, retrieve = session.collection, session.trees, session.retrieve
    llm = args.llm and session.published.llm_adapter is not None
    routers = session_routers(session, llm)
    engine = session.engine if llm else None
    queries = [q.query for q in questions]
    specs = strategy_specs(settings, "short", session.published.llm_adapter)
    budgeted = strategy_specs(dataclasses.replace(settings, evidence_budget=True), "short", None)["rdr2"]
    rag = gather_evidence(queries, specs["rag-hybrid"], retrieve=retrieve, trees=trees)
    budgets = evidence_budgets(session, queries, budgeted)  # rag-hybrid's words per question
    rows = {"rag-hybrid": (mean_metrics([evidence_metrics(g, q) for g, q in zip(rag, questions)]), 0.0)}
    kinds = [] if args.only_variants else list(SCORING_KINDS)
    kinds += ["llm", "llm-rank"] if llm and not args.only_variants else []
    for kind in kinds:
        if kind != "llm" and kind not in routers:
            continue
        spec = specs[f"rdr2-{kind}"]
        variants = [("", budgets, spec), (" free", None, spec)]
        if kind in ("similarity", "encoder"):  # what the budget fill adds to the router's own picks
            variants.insert(1, (" no fill", budgets, dataclasses.replace(spec, fill_budget=False)))
        for order in [o for o in args.fill_orders.split(",") if o and o != spec.fill_order]:
            variants.insert(1, (f" fill={order}", budgets, dataclasses.replace(spec, fill_order=order)))
        for label, budget, variant in variants:
            started = time.perf_counter()
            gathered = gather_evidence(
                queries,
                variant,
                retrieve=retrieve,
                trees=trees,
                engine=engine,
                routers=routers,
                evidence_budgets=budget,
            )
            seconds = (time.perf_counter() - started) / len(queries)
            rows[f"rdr2-{kind}{label}"] = (
                mean_metrics([evidence_metrics(g, q) for g, q in zip(gathered, questions)]),
                seconds,
            )
    print(f"\n{collection}: {len(questions)} {args.split} questions, rdr2 top_k={args.top_k}, "
          f"expand_iterations={args.expand_iterations}; rows without 'free' at <= rag-hybrid's words per question")  # fmt: skip
    present = [m for m in METRICS if any(m in r for r, _ in rows.values())]
    print(f"  {'strategy':24s} " + " ".join(f"{m:>16s}" for m in present) + f" {'words':>7s} {'s/question':>10s}")
    for name, (metrics, seconds) in rows.items():
        print(
            f"  {name:24s} "
            + " ".join(f"{metrics.get(m, float('nan')):16.3f}" for m in present)
            + f" {metrics['words']:7.0f} {seconds:10.2f}"
        )
    out: dict = {name: {**m, "seconds_per_question": s} for name, (m, s) in rows.items()}
    if args.speed:
        out["speed"] = speed(con, collection, trees, session.embedder, resources, args.llm_steps)
    variants = [("labelled", {}, False), ("labelled+synthetic", {}, True)] if args.synthetic_ablation else []
    variants += [(label, overrides, True) for label, overrides in parse_variants(args.encoder_variants)]
    if variants:
        out["encoder_routers"] = encoder_comparison(
            con, collection, questions, retrieve, trees, session.embedder, specs, budgets, variants
        )
    return out


def parse_variants(text: str) -> list[tuple[str, dict]]:
    """`--encoder-variants "max_steps=30; epochs=2,negatives=3"` -> [(label, EncoderSettings overrides)]."""
    from rag_assets.core.routing.encoder_settings import EncoderSettings

    known = {f.name: f.type for f in dataclasses.fields(EncoderSettings)}
    out = []
    for label, pairs in parse_assignments(text, named=False):
        overrides: dict = {}
        for key, value in pairs.items():
            if key not in known:
                raise SystemExit(f"--encoder-variants: {key!r} is not an EncoderSettings field ({', '.join(known)})")
            if known[key].startswith("tuple"):  # annotations are strings; a tuple is '/'-separated: 0/1.5
                overrides[key] = tuple(float(v) for v in value.split("/"))
            else:
                overrides[key] = float(value) if known[key] == "float" else int(value)
        out.append((label, overrides))
    return out


def train_and_measure(
    label: str, train, validation, samples, golds, settings, questions, retrieve, trees, embedder, spec, budgets,
    held_out=None,
) -> dict:  # fmt: skip
    """One encoder router trained on `train` and calibrated on `validation`: its validation router
    metrics against the teacher and the evaluation questions' evidence at rag-hybrid's words."""
    import tempfile

    from rag_assets.core.routing.encoder_training import train_encoder

    queries = [q.query for q in questions]
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        result = train_encoder(
            embedder.model_path, [e.example for e in train], [e.example for e in validation], Path(tmp), settings,
            progress=False, held_out=held_out,
        )  # fmt: skip
        seconds = time.perf_counter() - started
        router = load_encoder_router(result.folder)
        scores = score_routed(route_samples_with(router, samples, trees), golds)
        gathered = gather_evidence(
            queries, spec, retrieve=retrieve, trees=trees, routers={"encoder": router}, evidence_budgets=budgets
        )
    metrics = mean_metrics([evidence_metrics(g, q) for g, q in zip(gathered, questions)])
    out = {"train_views": len(train), "steps": result.steps, "train_seconds": seconds, "ans_f1": scores.ans_f1,
           "ans_f1_interval": [scores.ans_f1_low, scores.ans_f1_high], "ans_f1_views": scores.answer_views,
           "exp_pre": scores.exp_pre, "ref_acc": scores.ref_acc, "section_weight": result.section_weight,
           "fill_order": result.fill_order, "node_text": result.node_text, **metrics}  # fmt: skip
    shown = " ".join(f"{m}={metrics[m]:.3f}" for m in METRICS if m in metrics)
    print(
        f"    {label:32s} {len(train):4d} views {result.steps:4d} steps {seconds:5.0f} s: ANS-F1 {scores.ans_f1:.3f} "
        f"[{scores.ans_f1_interval} over {scores.answer_views} views] "
        f"EXP-PRE {scores.exp_pre:.3f} REF-ACC {scores.ref_acc:.3f} (weight {result.section_weight:g}, fill "
        f"{result.fill_order}, {result.node_text}) | {shown} words={metrics['words']:.0f}",
        flush=True,
    )
    return out


def encoder_comparison(
    con, collection: str, questions, retrieve, trees, embedder: Embedder, specs: dict[str, StrategySpec],
    budgets: list[int] | None, variants: Sequence[tuple[str, dict, bool]],
) -> dict:  # fmt: skip
    """Encoder routers trained with different settings and data (`variants`: label, EncoderSettings
    overrides, with the synthetic corpus-made questions or not), all calibrated on the validation
    fold and measured the same way (`train_and_measure`)."""
    from rag_assets.core.routing.encoder_settings import EncoderSettings

    spec = specs["rdr2-encoder"]
    validation = load_routing_examples(con, collection, fold="validation")
    # The held-out judge `router_adapter` chooses the section weight and fill order with: the
    # validation fold's real questions, routed as `spec` routes, at rag-hybrid's words.
    qids = {v.qid for v in validation if not v.qid.startswith(SYNTHETIC_QID_PREFIX)}
    held_out = held_out_evidence(
        [q for q in load_question_rows(con, collection) if q.qid in qids],
        baseline=specs["rag-hybrid"],
        routed=spec,
        retrieve=retrieve,
        trees=trees,
    )
    pairs = load_routing_samples(con, collection, fold="validation")
    samples, golds = [s for s, _ in pairs], [g for _, g in pairs]
    print(f"  encoder routers ({len(samples)} validation subtrees, {len(questions)} evaluation questions):")
    out: dict[str, dict] = {}
    folds = {flag: load_routing_examples(con, collection, fold="train", synthetic=flag) for _, _, flag in variants}
    for label, overrides, synthetic in variants:
        train = folds[synthetic]
        if not train:
            print(f"    {label:32s} no train views")
            continue
        settings = EncoderSettings(**overrides)
        out[label] = train_and_measure(
            label, train, validation, samples, golds, settings, questions, retrieve, trees, embedder, spec, budgets,
            held_out,
        )  # fmt: skip
    return out


def speed(con, collection: str, trees, embedder: Embedder, resources: dict, llm_steps: int) -> dict:
    """Training seconds per view and routing subtrees/s of the encoder and the LLM, same data."""
    import tempfile

    from rag_assets.core.routing.action_format import routing_messages
    from rag_assets.core.routing.encoder_settings import EncoderSettings
    from rag_assets.core.routing.encoder_training import train_encoder
    from rag_assets.core.routing.held_out_routing import route_samples
    from rag_assets.core.training.lora import LoraSettings, TrainingExample, train_lora

    train = load_routing_examples(con, collection, fold="train")
    validation = [s for s, _ in load_routing_samples(con, collection, fold="validation")]
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        result = train_encoder(
            embedder.model_path, [e.example for e in train], [], Path(tmp), EncoderSettings(epochs=1), progress=False
        )
        out["encoder_train_s_per_view"] = (time.perf_counter() - started) / max(len(train), 1)
        router = load_encoder_router(result.folder)
        started = time.perf_counter()
        route_samples_with(router, validation, trees)
        out["encoder_subtrees_per_s"] = len(validation) / max(time.perf_counter() - started, 1e-9)
        settings = LoraSettings(max_steps=llm_steps, batch_size=4, max_length=1024)
        examples = [TrainingExample(routing_messages(e.query, e.rendered), e.target) for e in train]
        started = time.perf_counter()
        lora = train_lora(resources["base_model"].path(), examples, Path(tmp), settings, progress=False)
        out["llm_train_s_per_view"] = (time.perf_counter() - started) / max(lora.steps * settings.batch_size, 1)
        engine = resources["llm"].engine({"bench": lora.adapter_dir})
        sample = validation[:16]
        started = time.perf_counter()
        route_samples(engine, sample, trees, adapter="bench")
        out["llm_subtrees_per_s"] = len(sample) / max(time.perf_counter() - started, 1e-9)
    out["train_ratio_llm_over_encoder"] = out["llm_train_s_per_view"] / max(out["encoder_train_s_per_view"], 1e-9)
    out["routing_ratio_encoder_over_llm"] = out["encoder_subtrees_per_s"] / max(out["llm_subtrees_per_s"], 1e-9)
    print(
        f"  speed: training {out['encoder_train_s_per_view']:.3f} s/view (encoder) vs "
        f"{out['llm_train_s_per_view']:.3f} s/view (llm) = {out['train_ratio_llm_over_encoder']:.1f}x; routing "
        f"{out['encoder_subtrees_per_s']:.1f} vs {out['llm_subtrees_per_s']:.2f} subtrees/s = "
        f"{out['routing_ratio_encoder_over_llm']:.0f}x"
    )
    return out


if __name__ == "__main__":
    main()
