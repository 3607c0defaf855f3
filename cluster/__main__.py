"""`python -m cluster up|run|down`: see cluster/profile.py and README "Scale out"."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from cluster import profile as cp
from cluster import services as svc
from rag_assets.core.settings import cluster_data_dir, load_collections, run_config_file


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cluster", description=cp.__doc__.split("\n\n")[0])
    parser.add_argument("--state-dir", type=Path, default=None, help="default: $DAGSTER_HOME/cluster")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("up", help="start redis-server and PostgreSQL on 127.0.0.1")
    run = sub.add_parser("run", help="start workers, run every collection in parallel, stop the workers")
    run.add_argument("--workers", type=int, default=2)
    run.add_argument("--collection", "-c", action="append", default=None, help="default: all collections")
    run.add_argument("--select", default="", help="comma-separated asset names (default: the whole main job)")
    run.add_argument("--config", type=Path, default=None, help="run config YAML (default: $RAG_RUN_CONFIG)")
    run.add_argument("--no-checks", action="store_true", help="materialize without the asset checks")
    run.add_argument(
        "--pool-limit", type=int, default=0, help="catalogue_writes pool limit (default 0: none, the file lock only)"
    )
    sub.add_parser("down", help="stop the workers and the services")
    args = parser.parse_args(argv)
    state_dir = (args.state_dir or cp.default_state_dir()).resolve()

    try:
        if args.command == "up":
            profile = cp.up(state_dir, cluster_data_dir(state_dir))
            print(f"redis {profile.services.broker_url}  postgres {profile.services.postgres_url}  state {state_dir}")
            return 0
        if args.command == "down":
            print("stopped" if cp.down(state_dir) else "nothing was running")
            return 0
        names = args.collection or [spec.name for spec in load_collections()]
        config = args.config or run_config_file()
        select = [s.strip() for s in args.select.split(",") if s.strip()] or None
        profile = cp.up(state_dir, cluster_data_dir(state_dir), pool_limit=args.pool_limit or None)
        print(f"services: redis {profile.services.broker_url}, postgres {profile.services.postgres_url}")
        started = time.monotonic()
        cp.start_workers(profile, args.workers, wait=False)
        print(f"{args.workers} Celery workers starting; running {names} in parallel (data: {profile.data_dir})")
        try:
            outcomes = cp.run_collections(
                profile, names, select=select, config=config, workers=args.workers, checks=not args.no_checks
            )
        finally:
            cp.stop_workers(state_dir)
        for o in outcomes:
            state = "succeeded" if o.success else f"FAILED (steps {o.failed_steps or '?'})"
            print(f"  {o.collection}: run {o.run_id} {state}")
            if not o.success:
                print(o.output[-4000:], file=sys.stderr)
        print(f"{len(outcomes)} run(s) in {time.monotonic() - started:.0f} s; services stay up (`make cluster-down`)")
        return 0 if all(o.success for o in outcomes) else 1
    except (svc.ServiceError, cp.ClusterError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
