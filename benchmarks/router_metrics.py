"""Re-materializes `router_metrics` (and, with --report, `evaluation_report`) on an existing
catalogue, nothing upstream, and prints how long it took and the stored router metrics: what to
run after a change to how routers are scored, without retraining them.

    DAGSTER_HOME=/tmp/rm-home RAG_DATA_DIR=/tmp/rm-home/data \\
        .venv/bin/python -m benchmarks.router_metrics -c python-reference --report

A real-set catalogue also needs its collections file (RAG_COLLECTIONS=collections.datasets.yaml
RAG_DATA=$PWD/../shared/datasets) and, for the same LLM views as `make run`, its run config
(--config run.datasets.yaml: only router_metrics' and evaluation_report's keys apply).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import yaml

SELECTED = ("router_metrics", "evaluation_report")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-c", "--collection", action="append", required=True, help="collection(s) to score")
    parser.add_argument("--config", type=Path, help="run config YAML (ops: ...); only the selected assets' keys apply")
    parser.add_argument("--report", action="store_true", help="also re-materialize evaluation_report")
    args = parser.parse_args()

    import dagster as dg

    from rag_assets.definitions import ALL_ASSETS, ALL_CHECKS
    from rag_assets.defs.partitions import register_collections
    from resources.project import project_resources

    keys = SELECTED if args.report else SELECTED[:1]
    ops = (yaml.safe_load(args.config.read_text()) or {}).get("ops", {}) if args.config else {}
    instance = dg.DagsterInstance.get()
    register_collections(instance, args.collection)
    resources = project_resources(progress=False)
    for collection in args.collection:
        started = time.perf_counter()
        result = dg.materialize(
            [*ALL_ASSETS, *ALL_CHECKS],
            selection=dg.AssetSelection.assets(*keys),
            partition_key=collection,
            resources=resources,
            instance=instance,
            run_config={"ops": {name: value for name, value in ops.items() if name in keys}},
        )
        seconds = time.perf_counter() - started
        print(f"\n{collection}: {' + '.join(keys)} {'succeeded' if result.success else 'FAILED'} in {seconds:.1f} s")
        for event in result.get_asset_materialization_events():
            metadata = event.materialization.metadata
            if event.asset_key.to_user_string() == "router_metrics":
                for name in ("views_from", "questions", "samples", "seconds"):
                    if name in metadata:
                        print(f"{name}: {metadata[name].value}")
                print(metadata["metrics"].value)
            elif "report_markdown" in metadata:
                print(f"report: {metadata['report_markdown'].value}")


if __name__ == "__main__":
    main()
