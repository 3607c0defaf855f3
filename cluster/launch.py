"""One collection's run of the main job, orchestrated in this process, its steps on Celery workers.

`python -m cluster.launch COLLECTION [--select a,b] [--config run.yaml]`; `python -m cluster run`
starts one of these per collection at once, so collections (partitions) run in parallel and the
steps of each run spread over the workers. Exit status 0 only when the run succeeded.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import dagster as dg
import yaml

from cluster.jobs import main_job
from rag_assets.defs.partitions import register_collections


def launch(
    collection: str, select: list[str] | None, run_config: dict, *, checks: bool = True
) -> dg.JobExecutionResult:
    job = dg.reconstructable(main_job)
    if select or not checks:
        # the workers rebuild this same subset from the run's job origin
        keys = {dg.AssetKey(name) for name in select} if select else None
        job = job.get_subset(asset_selection=keys, asset_check_selection=None if checks else set())
    with dg.DagsterInstance.get() as instance:
        register_collections(instance, [collection])
        return dg.execute_job(
            job,
            instance=instance,
            run_config=run_config,
            tags={"dagster/partition": collection, "rag/profile": "cluster"},
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cluster.launch", description=__doc__)
    parser.add_argument("collection")
    parser.add_argument("--select", default="", help="comma-separated asset names (default: the whole job)")
    parser.add_argument("--config", type=Path, default=None, help="a Dagster run-config YAML")
    parser.add_argument("--no-checks", action="store_true", help="materialize without the asset checks")
    args = parser.parse_args(argv)
    run_config = {}
    if args.config is not None:
        run_config = yaml.safe_load(args.config.read_text()) or {}
    select = [s.strip() for s in args.select.split(",") if s.strip()] or None
    result = launch(args.collection, select, run_config, checks=not args.no_checks)
    failed = [e.step_key for e in result.all_events if e.is_step_failure]
    print(
        json.dumps(
            {"collection": args.collection, "run_id": result.run_id, "success": result.success, "failed_steps": failed}
        )
    )
    return 0 if result.success else 1


if __name__ == "__main__":
    sys.exit(main())
