"""The cluster profile on one machine: Redis + PostgreSQL, a Postgres-backed Dagster instance,
Celery workers, and one run per collection launched at once.

    python -m cluster up                 start redis-server and PostgreSQL (127.0.0.1, free ports)
    python -m cluster run --workers 2    start the workers, run the main job for every collection
                                         in parallel on them, stop the workers
    python -m cluster down               stop the services

Everything lives under one state folder (default `$DAGSTER_HOME/cluster`): the services' data,
the profile's DAGSTER_HOME (cluster/dagster.yaml), worker logs. The catalogue and index go to
`RAG_DATA_DIR` (default `$DAGSTER_HOME/data-cluster`, so an in-process run's data stays apart).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from cluster import services as svc
from rag_assets.core.settings import dagster_home

CLUSTER_DIR = Path(__file__).resolve().parent
PROJECT_ROOT = CLUSTER_DIR.parent
WORKERS_FILE = "workers.json"


class ClusterError(RuntimeError):
    """The profile could not start or a run failed; the message says what and where to look."""


def default_state_dir() -> Path:
    return dagster_home() / "cluster"


@dataclass(slots=True)
class Profile:
    state_dir: Path
    services: svc.Services
    data_dir: Path
    pool_limit: int | None = None  # None: the pool has no limit (steps meet only the file lock)

    @property
    def dagster_home(self) -> Path:
        return self.state_dir / "dagster_home"

    def env(self) -> dict[str, str]:
        """The environment of the launcher and of every worker: same instance, broker and data."""
        env = dict(os.environ)
        paths = [str(self.state_dir / "celery"), str(PROJECT_ROOT)]
        if env.get("PYTHONPATH"):
            paths.append(env["PYTHONPATH"])
        env.update(
            {
                "DAGSTER_HOME": str(self.dagster_home),
                "RAG_DAGSTER_PG_URL": self.services.postgres_url,
                "RAG_CLUSTER_ARTIFACTS": str(self.state_dir / "artifacts"),
                "RAG_EXECUTOR": "celery",
                "RAG_CELERY_BROKER": self.services.broker_url,
                "RAG_CELERY_BACKEND": self.services.backend_url,
                "RAG_DATA_DIR": str(self.data_dir),
                "PYTHONPATH": os.pathsep.join(paths),
            }
        )
        return env

    def write_config(self) -> None:
        """The instance's dagster.yaml (pool limit applied) and the Celery workers' config module."""
        self.dagster_home.mkdir(parents=True, exist_ok=True)
        (self.state_dir / "artifacts").mkdir(parents=True, exist_ok=True)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        instance = yaml.safe_load((CLUSTER_DIR / "dagster.yaml").read_text())
        if self.pool_limit is not None:
            instance["concurrency"]["pools"]["default_limit"] = self.pool_limit
        (self.dagster_home / "dagster.yaml").write_text(yaml.safe_dump(instance, sort_keys=False))
        # `celery -A dagster_celery.app` reads a module of this name for its broker and backend
        celery_dir = self.state_dir / "celery"
        celery_dir.mkdir(parents=True, exist_ok=True)
        (celery_dir / "dagster_celery_config.py").write_text(
            f"broker_url = {self.services.broker_url!r}\n"
            f"result_backend = {self.services.backend_url!r}\n"
            "worker_prefetch_multiplier = 1\n"
        )


def start_workers(profile: Profile, count: int, *, wait: bool = True) -> list[int]:
    """`count` Celery workers, each one process running one step at a time (solo pool: the heavy
    imports and model loads stay warm between steps). Each imports the code location as it boots
    (`-I`), so with `wait=False` that overlaps with the launchers' own start-up."""
    logs = profile.state_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    env = profile.env()
    pids = []
    for i in range(1, count + 1):
        log = open(logs / f"worker-{i}.log", "ab")  # noqa: SIM115 - the worker keeps writing after we return
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "dagster_celery.app",
                "worker",
                "--pool=solo",
                "--prefetch-multiplier=1",
                "--without-gossip",
                "--without-mingle",
                "-Q",
                "dagster",
                "-n",
                f"rag-worker-{i}@%h",
                "-I",
                "rag_assets.definitions",
                "--loglevel=INFO",
            ],
            env=env,
            cwd=PROJECT_ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        pids.append(process.pid)
    (profile.state_dir / WORKERS_FILE).write_text(json.dumps(pids))
    if wait:
        wait_for_workers(profile, count)
    return pids


def wait_for_workers(profile: Profile, count: int, timeout_s: float = 180.0) -> None:
    from celery import Celery

    app = Celery(broker=profile.services.broker_url, backend=profile.services.backend_url)
    deadline = time.monotonic() + timeout_s
    seen: list = []
    while time.monotonic() < deadline:
        seen = app.control.ping(timeout=1.0) or []
        if len(seen) >= count:
            return
        time.sleep(1.0)
    raise ClusterError(
        f"only {len(seen)} of {count} Celery workers answered within {timeout_s:.0f} s; "
        f"see {profile.state_dir / 'logs'}"
    )


def stop_workers(state_dir: Path, timeout_s: float = 30.0) -> int:
    path = state_dir / WORKERS_FILE
    if not path.is_file():
        return 0
    pids = json.loads(path.read_text())
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)  # warm shutdown: a worker finishes its step first
    deadline = time.monotonic() + timeout_s
    for pid in pids:
        while time.monotonic() < deadline:
            try:
                if os.waitpid(pid, os.WNOHANG) != (0, 0):
                    break
            except ChildProcessError:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
            time.sleep(0.2)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    path.unlink()
    return len(pids)


@dataclass(slots=True)
class RunOutcome:
    collection: str
    returncode: int
    run_id: str | None
    success: bool
    failed_steps: list[str]
    output: str


def run_collections(
    profile: Profile,
    collections: list[str],
    *,
    select: list[str] | None = None,
    config: Path | None = None,
    workers: int = 0,
    checks: bool = True,
) -> list[RunOutcome]:
    """One launcher process per collection, all at once; each orchestrates its run on the workers.
    `workers` > 0: check (while the launchers start) that this many workers answer, else stop."""
    env = profile.env()
    command = [sys.executable, "-m", "cluster.launch"]
    extra = (["--select", ",".join(select)] if select else []) + (["--config", str(config)] if config else [])
    extra += [] if checks else ["--no-checks"]
    launched = [
        (
            name,
            subprocess.Popen(
                [*command, name, *extra],
                env=env,
                cwd=PROJECT_ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            ),
        )
        for name in collections
    ]
    if workers:
        try:
            wait_for_workers(profile, workers)
        except ClusterError:
            for _, process in launched:
                process.kill()
                process.wait()
            raise
    outcomes = []
    for name, process in launched:
        output, _ = process.communicate()
        summary: dict = {}
        for line in reversed(output.splitlines()):
            if line.startswith("{") and '"run_id"' in line:
                summary = json.loads(line)
                break
        outcomes.append(
            RunOutcome(
                name,
                process.returncode,
                summary.get("run_id"),
                bool(summary.get("success")) and process.returncode == 0,
                summary.get("failed_steps", []),
                output,
            )
        )
    return outcomes


def up(state_dir: Path, data_dir: Path, *, pool_limit: int | None = None) -> Profile:
    services = svc.up(state_dir)
    profile = Profile(state_dir, services, data_dir, pool_limit)
    profile.write_config()
    return profile


def down(state_dir: Path) -> bool:
    stopped = stop_workers(state_dir)
    had_services = svc.down(state_dir)
    shutil.rmtree(state_dir / "artifacts", ignore_errors=True)
    return bool(stopped) or had_services
