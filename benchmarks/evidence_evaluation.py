"""The evidence evaluation on real collections without the reader-based rows: materializes
`evidence_evaluation` and everything upstream of it (index, questions, routing data, the routers)
for each collection, with the run config's settings for those assets, then prints the evidence
table. Minutes per set instead of `make run`'s reader passes; `answers` is not run.

    DAGSTER_HOME=/tmp/ev-home RAG_DATA_DIR=/tmp/ev-home/data RAG_DATA=$PWD/../shared/datasets \\
    RAG_COLLECTIONS=collections.datasets.yaml \\
        .venv/bin/python benchmarks/evidence_evaluation.py --config run.datasets.yaml -c nq_wiki

`--router-kinds encoder` trains only the encoder router (the run config may also train the LLM
adapter, which takes longer on a CPU); `--kinds` chooses the router kinds measured.

`--word-target 0.6` then tries a router whose own choices are the evidence: the trained encoder's
answer threshold and answer count are chosen on the validation fold's real questions (never the
dev/test ones) as the setting with the best evidence metric among those whose own choices use at
most that share of rag-hybrid's words, and the chosen setting's own choices are measured on the
evaluation questions against rag-hybrid. `--skip-run` reuses the materialized catalogue.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import yaml


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-c", "--collection", action="append", required=True, help="collection(s) to evaluate")
    parser.add_argument("--config", type=Path, help="run config YAML (ops: ...); only the selected assets' keys apply")
    parser.add_argument("--router-kinds", default="", help="override router_adapter's kinds, e.g. 'encoder'")
    parser.add_argument("--kinds", default="", help="override evidence_evaluation's router kinds (comma-separated)")
    parser.add_argument("--word-target", type=float, default=0.0, help="own choices' share of rag-hybrid's words")
    parser.add_argument("--skip-run", action="store_true", help="do not materialize; use the catalogue as it is")
    args = parser.parse_args()

    import dagster as dg

    from rag_assets.core.evaluation.evidence import evidence_footnote, evidence_table, summarise_evidence
    from rag_assets.core.store.evidence import load_evidence
    from rag_assets.core.tables import markdown_table
    from rag_assets.definitions import ALL_ASSETS, ALL_CHECKS, defs
    from rag_assets.partitions import register_collections
    from resources.project import project_resources

    selection = dg.AssetSelection.assets("evidence_evaluation").upstream()
    graph = defs.resolve_asset_graph()
    selected = {key.to_user_string() for key in selection.resolve(graph)}
    ops = (yaml.safe_load(args.config.read_text()) or {}).get("ops", {}) if args.config else {}
    ops = {name: value for name, value in ops.items() if name in selected}
    if args.router_kinds:
        ops.setdefault("router_adapter", {}).setdefault("config", {})["kinds"] = args.router_kinds.split(",")
    if args.kinds:
        ops.setdefault("evidence_evaluation", {}).setdefault("config", {})["kinds"] = args.kinds.split(",")
    instance = dg.DagsterInstance.get()
    register_collections(instance, args.collection)
    resources = project_resources(progress=False)
    for collection in args.collection:
        if args.skip_run:
            if args.word_target:
                own_choices_at_word_target(resources, collection, args.word_target)
            continue
        started = time.perf_counter()
        result = dg.materialize(
            [*ALL_ASSETS, *ALL_CHECKS],
            selection=selection,
            partition_key=collection,
            resources=resources,
            instance=instance,
            run_config={"ops": ops},
        )
        seconds = time.perf_counter() - started
        with resources["catalogue"].get_connection() as con:
            rows = load_evidence(con, collection)
        summary = summarise_evidence(rows)
        print(f"\n{collection}: run {result.run_id} {'succeeded' if result.success else 'FAILED'} in {seconds:.0f} s")
        if summary is not None:
            header, body = evidence_table(summary)
            print(f"{summary.questions} questions\n\n{markdown_table(header, body)}\n\n{evidence_footnote(summary)}")
        if args.word_target:
            own_choices_at_word_target(resources, collection, args.word_target)


THRESHOLD_GRID = (0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0)
MAX_ANSWERS_GRID = (1, 2, 3, 5, 8)


def own_choices_at_word_target(resources: dict, collection: str, target: float) -> None:
    """Choose the encoder's answer threshold and count on the validation questions at `target` of
    rag-hybrid's words, then measure that router's own choices on the dev + test questions."""
    import dataclasses

    from rag_assets.core.evaluation.evidence import evidence_table, measure_evidence, summarise_evidence
    from rag_assets.core.index.retrieval import search
    from rag_assets.core.routing.encoder_training import load_encoder_router
    from rag_assets.core.routing.held_out_routing import load_routing_examples
    from rag_assets.core.routing.samples import SYNTHETIC_QID_PREFIX
    from rag_assets.core.store.publication import index_pairing
    from rag_assets.core.store.question_table import load_question_rows
    from rag_assets.core.store.router_registry import latest_router
    from rag_assets.core.store.tree_tables import load_trees
    from rag_assets.core.tables import markdown_table
    from rag_assets.strategy_config import AnswersConfig, strategy_specs

    embedder = resources["embedder"].get()
    with resources["catalogue"].get_connection() as con:
        record = latest_router(con, collection, "encoder")
        if record is None:
            print(f"{collection}: no trained encoder router")
            return
        validation_qids = {
            v.qid
            for v in load_routing_examples(con, collection, fold="validation")
            if not v.qid.startswith(SYNTHETIC_QID_PREFIX)
        }
        validation = [q for q in load_question_rows(con, collection) if q.qid in validation_qids]
        evaluation = load_question_rows(con, collection, "dev,test")
        trees = {d: nodes for d, (nodes, _) in load_trees(con, collection).items()}
        publication = index_pairing(con, collection).publication
    index = resources["vectors"].index(embedder).pin(publication.version if publication else None)

    def retrieve(query: str, mode: str, k: int, **_: object):
        return search(index, embedder, query, mode=mode, k=k, collections=[collection])

    specs = strategy_specs(AnswersConfig(), "short", None)
    trained = load_encoder_router(Path(record.path), device=embedder.device)

    def own(router, questions):
        rows = measure_evidence(
            questions,
            baseline=specs["rag-hybrid"],
            routed=dataclasses.replace(specs["rdr2"], fill_budget=False),
            kinds=["encoder"],
            routers={"encoder": router},
            retrieve=retrieve,
            trees=trees,
            fills=(False,),
        )
        return summarise_evidence(rows)

    candidates = []
    for answer in THRESHOLD_GRID:
        for count in MAX_ANSWERS_GRID:
            thresholds = dataclasses.replace(trained.thresholds, answer=answer, max_answers=count)
            twin = trained.with_section_weight(trained.section_weight, thresholds=thresholds)
            summary = own(twin, validation)
            metric = summary.metrics[0] if summary and summary.metrics else None
            if metric is None:
                continue
            figures = summary.rows["rdr2-encoder own"]
            share = summary.words_share("rdr2-encoder own")
            candidates.append((share <= target, figures[metric].mean, -share, answer, count, metric))
            print(f"  validation ({len(validation)} q): answer>={answer:.1f} max {count}: {metric} "
                  f"{figures[metric].mean:.3f} at {share:.0%} of rag-hybrid's words")  # fmt: skip
    within = [c for c in candidates if c[0]]
    if not within:
        print(f"{collection}: no setting within {target:.0%} of rag-hybrid's words on the validation questions")
        return
    _, _, _, answer, count, metric = max(within)
    thresholds = dataclasses.replace(trained.thresholds, answer=answer, max_answers=count)
    chosen = trained.with_section_weight(trained.section_weight, thresholds=thresholds)
    summary = own(chosen, evaluation)
    header, body = evidence_table(summary)
    print(f"\n{collection}: own choices at <= {target:.0%} of rag-hybrid's words (chosen on {len(validation)} "
          f"validation questions: answer threshold {answer}, at most {count} answers; trained: "
          f"{trained.thresholds.answer:.2f}, {trained.thresholds.max_answers}), {summary.questions} dev+test questions"
          f"\n\n{markdown_table(header, body)}")  # fmt: skip


if __name__ == "__main__":
    main()
