"""Runs whose process is gone: find them, fail them, so the run queue moves.

A run killed with SIGKILL (or by the OOM killer) never reports its end: it stays `STARTED` in the
instance for ever, and with `max_concurrent_runs: 1` every queued run waits behind it. Two kinds
of run can be checked here:
- runs started by `rag run` / `rag index` (in-process): tagged with the pid, the process start
  time and the host, so a dead or reused pid is told apart from a live run;
- runs launched by the UI, the schedule or the sensor (`DefaultRunLauncher`): the code server
  that started the worker lists the runs it still executes; a run it no longer lists, or whose
  code server is gone, is dead.
`MonitoredRunLauncher` is the default launcher plus this health check, so Dagster's run
monitoring daemon (`run_monitoring` in dagster.yaml, on under `dagster dev`) fails dead runs by
itself; `recover_dead_runs` does the same on demand (`rag run`, `rag index`, `rag recover`).
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass

import dagster as dg
import psutil
from dagster._core.launcher import CheckRunHealthResult, DefaultRunLauncher, WorkerStatus
from dagster._core.storage.tags import GRPC_INFO_TAG

PID_TAG = "rag/pid"
PID_STARTED_TAG = "rag/pid_started"
HOST_TAG = "rag/host"
IN_PROGRESS = (dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING)


def process_tags() -> dict[str, str]:
    """Tags naming this process, for a run executed in it."""
    me = psutil.Process()
    return {PID_TAG: str(me.pid), PID_STARTED_TAG: f"{me.create_time():.2f}", HOST_TAG: socket.gethostname()}


def _process_gone(tags: dict[str, str]) -> str | None:
    pid = int(tags[PID_TAG])
    try:
        process = psutil.Process(pid)
        started = process.create_time()
        zombie = process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return f"its process {pid} is gone"
    except psutil.Error:  # e.g. access denied: it exists, so it may be the run
        return None
    recorded = float(tags.get(PID_STARTED_TAG) or started)
    if abs(started - recorded) > 1.0:
        return f"its process {pid} is gone (the pid now belongs to another process)"
    return f"its process {pid} is a zombie" if zombie else None


def _code_server_lost(run: dg.DagsterRun) -> str | None:
    from dagster._grpc.client import DagsterGrpcClient
    from dagster._grpc.types import GetCurrentRunsResult
    from dagster._serdes import deserialize_value

    info = json.loads(run.tags[GRPC_INFO_TAG])
    where = info.get("socket") or f"{info.get('host')}:{info.get('port')}"
    client = DagsterGrpcClient(port=info.get("port"), socket=info.get("socket"), host=info.get("host", "localhost"))
    try:
        current = deserialize_value(client.get_current_runs(), GetCurrentRunsResult).current_runs
    except Exception:  # unreachable: the server (and every worker it started) is gone
        return f"its code server {where} is gone"
    return None if run.run_id in current else f"its code server {where} no longer runs it"


def dead_run_reason(run: dg.DagsterRun) -> str | None:
    """Why `run` (in progress in the instance) can no longer be running, or None if it may be."""
    tags = dict(run.tags)
    if PID_TAG in tags:
        if tags.get(HOST_TAG) != socket.gethostname():
            return None  # another machine's process: not ours to judge
        return _process_gone(tags)
    if GRPC_INFO_TAG in tags:
        return _code_server_lost(run)
    return None


@dataclass(frozen=True, slots=True)
class RecoveredRun:
    run_id: str
    job_name: str
    partition: str | None
    reason: str


def recover_dead_runs(instance: dg.DagsterInstance) -> list[RecoveredRun]:
    """Mark every in-progress run whose process is gone as FAILURE (with the reason as its
    message); returns them. Live runs and runs that cannot be judged are left alone."""
    recovered: list[RecoveredRun] = []
    for run in instance.get_runs(filters=dg.RunsFilter(statuses=list(IN_PROGRESS))):
        reason = dead_run_reason(run)
        if reason is None:
            continue
        instance.report_run_failed(run, message=f"Run {run.run_id} marked failed: {reason}")
        recovered.append(RecoveredRun(run.run_id, run.job_name, run.tags.get("dagster/partition"), reason))
    return recovered


class MonitoredRunLauncher(DefaultRunLauncher):
    """`DefaultRunLauncher` that can tell Dagster's run monitoring whether a run's worker lives."""

    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def check_run_worker_health(self, run: dg.DagsterRun) -> CheckRunHealthResult:
        reason = dead_run_reason(run)
        if reason is None:
            return CheckRunHealthResult(WorkerStatus.RUNNING)
        return CheckRunHealthResult(WorkerStatus.FAILED, reason)
