"""Node scorers compared on where they rank each question's gold node, over every labelled question
of a collection, cross-fitted as `cross_fitted_evidence.py` is (same folds, same training and
choosing questions), from a materialized catalogue.

    DAGSTER_HOME=/tmp/h RAG_DATA_DIR=dagster_home/data-datasets RAG_COLLECTIONS=collections.datasets.yaml \\
    RAG_DATA=$PWD/../shared/datasets \\
        .venv/bin/python -m benchmarks.node_scorers -c nq_wiki --folds 3 --config run.datasets.yaml

Why: the router's own choices are bounded by where its scores rank the gold node
(`core/evaluation/node_ranking.py`), so a better node scorer is the lever the margin curve points
at. For each fold it trains, on the fold's training views and the synthetic ones:

- `encoder`: the encoder router exactly as `router_adapter` trains it (section weight chosen on the
  choosing questions); its scores are the section-smoothed ones its own choices read. The baseline.
- `cross-encoder`: the passage reranker's cross-encoder recipe (`reranking.training.
  fine_tune_cross_encoder`: a one-logit head on the packaged MiniLM, listwise loss over the gold
  node and `--cross-negatives` other nodes of its view) trained on the router's own training pairs
  (`encoder_pairs`: the question against a gold node in its heading context and the view's other
  nodes). It reads (question, node) together: the passage reranker's (query, node in context)
  score as the router's node score.

and scores with the `untrained encoder` too (the packaged MiniLM's cosine over the same node
texts, no smoothing: where training starts), and, for each `--zero-shot DIR`, with another local
sentence-transformers folder the same untrained way (is a bigger packaged encoder a better start?
docs/results.md says where one comes from). `--borrow OTHER` adds the row `encoder + borrowed`:
the same encoder trained also on every labelled view of another collection of the catalogue.
Each scorer ranks the same candidates of the fold's measured questions: the content nodes their
labelled views show. The table pools the folds: the
share of questions whose gold node is ranked first and within the top 3, the mean reciprocal
rank, with 95% intervals, and the paired difference in ranked-first share against the encoder.
`--cross-steps 0` leaves the cross-encoder out. Nothing is written to the catalogue.
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from pathlib import Path

from benchmarks.cross_fitted_evidence import prepare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-c", "--collection", required=True)
    parser.add_argument("--folds", type=int, default=3, help="folds the questions are cut into (>= 2)")
    parser.add_argument("--config", type=Path, help="run config YAML: routing_subtrees' and router_adapter's keys")
    parser.add_argument("--real-repeats", type=int, help="as cross_fitted_evidence.py's (default: the run config's)")
    parser.add_argument("--seed", type=int, help="the training seed of both models (default: the run config's)")
    parser.add_argument(
        "--cross-steps", type=int, default=120,
        help="cross-encoder optimizer steps per fold (0: no cross-encoder; about 5 s a step at batch 8 on 2 CPU cores)",
    )  # fmt: skip
    parser.add_argument("--cross-batch", type=int, default=8, help="cross-encoder groups per step")
    parser.add_argument(
        "--cross-negatives", type=int, default=7, help="negatives per cross-encoder group (other nodes of the view)"
    )
    parser.add_argument(
        "--borrow", action="append", default=[], metavar="COLLECTION",
        help="also train an encoder on all labelled views of this other collection besides the fold's own "
        "(repeatable; one more row, `encoder + borrowed`)",
    )  # fmt: skip
    parser.add_argument(
        "--zero-shot", type=Path, action="append", default=[], metavar="DIR",
        help="also score untrained with this local sentence-transformers model folder (repeatable)",
    )  # fmt: skip
    args = parser.parse_args()
    missing = [str(d) for d in args.zero_shot if not (d / "modules.json").is_file()]
    if missing:
        raise SystemExit(
            f"--zero-shot: not a sentence-transformers model folder (no modules.json): {', '.join(missing)}"
        )
    if args.folds < 2:
        raise SystemExit("--folds must be at least 2")
    if args.cross_steps < 0 or args.cross_batch < 1 or args.cross_negatives < 1:
        raise SystemExit("--cross-steps must be >= 0, --cross-batch and --cross-negatives >= 1")
    run(args)


def run(args: argparse.Namespace) -> None:
    from rag_assets.core.evaluation.node_ranking import (
        question_candidates,
        rank_questions,
        ranking_table,
        summarise_ranks,
    )
    from rag_assets.core.index.embedding import Embedder
    from rag_assets.core.routing.scoring_router import ScoringRouter
    from rag_assets.core.routing.teachers import SimilarityThresholds
    from rag_assets.core.tables import markdown_table

    pooled = prepare(args.collection, args.folds, args.config, args.real_repeats, args.seed, borrow=tuple(args.borrow))
    ctx = dataclasses.replace(pooled, borrowed=[])  # the baseline encoder trains on its own collection alone
    untrained = ScoringRouter(ctx.embedder, SimilarityThresholds(), kind="untrained")
    zero_shot = {}
    for folder in args.zero_shot:
        embedder = Embedder(folder, device=ctx.embedder.device, progress=False)
        zero_shot[f"zero-shot {embedder.model_id}"] = ScoringRouter(embedder, SimilarityThresholds(), kind="untrained")

    def router_scores(router: ScoringRouter):
        def score(question):
            views = ctx.examples(question.qid)
            requests = [(question.query, e.state, sorted(e.view.visible_content_ids), []) for e in views]
            out = {}
            for example, scores in zip(views, router.score(requests)):  # one encoder call per question
                for n, s in scores.answer.items():
                    key = (example.state.doc_id, n)
                    out[key] = max(out.get(key, s), s)
            return out

        return score

    ranks = []
    with tempfile.TemporaryDirectory(prefix="node-scorers-") as scratch:
        for fold in range(args.folds):
            started = time.perf_counter()
            held, choosing, training = ctx.split(fold)
            measured = [question_candidates(q.qid, ctx.examples(q.qid)) for q in held]
            router, result, _ = ctx.train_router(training, choosing, Path(scratch) / f"router-{fold}")
            ranks += rank_questions("encoder", measured, router_scores(router))
            ranks += rank_questions("untrained encoder", measured, router_scores(untrained))
            if pooled.borrowed:
                borrowing, borrowed_result, _ = pooled.train_router(
                    training, choosing, Path(scratch) / f"pooled-{fold}"
                )
                ranks += rank_questions("encoder + borrowed", measured, router_scores(borrowing))
                print(f"  encoder + borrowed: {borrowed_result.steps} steps", flush=True)
            for name, scorer in zero_shot.items():
                ranks += rank_questions(name, measured, router_scores(scorer))
            line = f"encoder {result.steps} steps (section weight {router.section_weight})"
            if args.cross_steps:
                cross_ranks, cross_line = cross_encoder_ranks(ctx, training, measured, args)
                ranks += cross_ranks
                line += cross_line
            ranked = sum(1 for m in measured if m.gold)
            print(f"fold {fold + 1}/{args.folds}: {line}; measured {len(measured)} questions, {ranked} with a gold "
                  f"node among their candidates; "
                  f"{time.perf_counter() - started:.0f} s", flush=True)  # fmt: skip
    header, body = ranking_table(summarise_ranks(ranks, baseline="encoder"))
    questions = len({r.qid for r in ranks})
    print(f"\n{args.collection}: {questions} questions with a gold node among their candidates, each ranked by "
          f"scorers trained without it ({args.folds} folds)\n\n{markdown_table(header, body)}")  # fmt: skip


def cross_encoder_ranks(ctx, training: list, measured: list, args: argparse.Namespace) -> tuple[list, str]:
    """The passage reranker's cross-encoder recipe trained on `training`'s router pairs, ranking
    `measured`'s candidates -> (their ranks, a progress line's part)."""
    from rag_assets.core.evaluation.node_ranking import rank_questions
    from rag_assets.core.index.reranking.scorers import CrossEncoderScorer
    from rag_assets.core.index.reranking.training import RerankerSettings, fine_tune_cross_encoder
    from rag_assets.core.routing.encoder_training import encoder_pairs

    groups = encoder_pairs(ctx.train_views(training), negatives=args.cross_negatives, seed=ctx.settings.seed)
    settings = RerankerSettings(
        model="cross-encoder", max_steps=args.cross_steps, batch_size=args.cross_batch,
        negatives=args.cross_negatives, seed=ctx.settings.seed,
    )  # fmt: skip
    model, losses, steps, seconds = fine_tune_cross_encoder(
        ctx.embedder.model_path, groups, settings, device=ctx.embedder.device, on_step=None,
        progress=False,
    )  # fmt: skip
    cross = CrossEncoderScorer(model)

    def cross_scores(question, cross=cross):
        keys = list(question.texts)
        return dict(zip(keys, cross.scores(question.query, [question.texts[k] for k in keys])))

    line = (f"; cross-encoder {steps} steps on {len(groups)} groups, loss {losses[0]:.3f} -> "
            f"{sum(losses[-5:]) / len(losses[-5:]):.3f}, {seconds:.1f} s a step")  # fmt: skip
    return rank_questions("cross-encoder", measured, cross_scores), line


if __name__ == "__main__":
    main()
