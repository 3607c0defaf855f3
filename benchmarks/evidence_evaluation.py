"""The evidence evaluation on real collections without the reader-based rows: materializes
`evidence_evaluation` and everything upstream of it (index, questions, routing data, the routers)
for each collection, with the run config's settings for those assets, then prints the evidence
table. Minutes per set instead of `make run`'s reader passes; `answers` is not run.

    DAGSTER_HOME=/tmp/ev-home RAG_DATA_DIR=/tmp/ev-home/data RAG_DATA=$PWD/../shared/datasets \\
    RAG_COLLECTIONS=collections.datasets.yaml \\
        .venv/bin/python -m benchmarks.evidence_evaluation --config run.datasets.yaml -c nq_wiki

`--router-kinds encoder` trains only the encoder router (the run config may also train the LLM
adapter, which takes longer on a CPU); `--kinds` chooses the router kinds measured.

`--skip-run` prints the table stored by the last materialization. The trained encoder's own
choices (`rdr2-encoder own`) follow the rule its training chose at a word target;
`benchmarks/router_own_choices.py` measures that rule and the other selection policies tried.
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
    parser.add_argument("--skip-run", action="store_true", help="do not materialize; use the catalogue as it is")
    args = parser.parse_args()

    import dagster as dg

    from benchmarks.common import catalogue_in
    from rag_assets.core.evaluation.evidence import evidence_footnote, evidence_table, summarise_evidence
    from rag_assets.core.store.connections import catalogue_connection
    from rag_assets.core.store.evidence import load_evidence
    from rag_assets.core.tables import markdown_table
    from rag_assets.definitions import ALL_ASSETS, ALL_CHECKS, defs
    from rag_assets.defs.partitions import register_collections
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
        if not args.skip_run:
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
            outcome = "succeeded" if result.success else "FAILED"
            print(f"\n{collection}: run {result.run_id} {outcome} in {seconds:.0f} s")
        with catalogue_connection(catalogue_in(), read_only=True) as con:
            rows = load_evidence(con, collection)
        summary = summarise_evidence(rows)
        if summary is None:
            print(f"{collection}: no evidence_evaluation rows in the catalogue")
            continue
        header, body = evidence_table(summary)
        print(f"{summary.questions} questions\n\n{markdown_table(header, body)}\n\n{evidence_footnote(summary)}")


if __name__ == "__main__":
    main()
