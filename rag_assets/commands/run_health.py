"""Runs whose process is gone: find them, fail them, so the run queue moves.

A run killed with SIGKILL (or by the OOM killer) never reports its end: it stays `STARTED` in the
instance for ever, and with `max_concurrent_runs: 1` every queued run waits behind it. Two kinds
of run can be judged here, both on this machine only:
- runs started by `rag run` / `rag index` (in-process): tagged with the pid, the process start
  time and the host, so a dead or reused pid is told apart from a live run;
- runs launched by the UI, the schedule or the sensor through a local code server (Dagster's
  default run launcher): the run worker reports its pid in its first engine event ("Started
  process for run (pid: N)"); a run whose worker pid is gone, or now belongs to a process started
  after that event, is dead.
`dead_run_sensor` (automation.py) fails them every 30 seconds under the daemon; `recover_dead_runs`
does the same on demand (`rag run`, `rag index`, `rag recover`). Runs that never start, or never
finish cancelling, are Dagster's own run monitoring (`run_monitoring` in dagster.yaml).
Public Dagster APIs only: the instance's runs, their tags and their engine events.
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass

import dagster as dg
import psutil

PID_TAG = "rag/pid"
PID_STARTED_TAG = "rag/pid_started"
HOST_TAG = "rag/host"
# Set by the default run launcher on the runs it launched through a code server: where that server
# is (host and port, or a socket). Its run workers are its own subprocesses, on its machine.
CODE_SERVER_TAG = ".dagster/grpc_info"
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})
IN_PROGRESS = (dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING)


def process_tags() -> dict[str, str]:
    """Tags naming this process, for a run executed in it."""
    me = psutil.Process()
    return {PID_TAG: str(me.pid), PID_STARTED_TAG: f"{me.create_time():.2f}", HOST_TAG: socket.gethostname()}


def process_gone(pid: int, started_by: float | None, *, recorded_start: float | None = None) -> str | None:
    """Why process `pid` cannot be the run's any more (None: it may be): it is gone, a zombie, or
    the pid now names another process (started at another time than `recorded_start`, or after
    `started_by`, the time the run reported it)."""
    try:
        process = psutil.Process(pid)
        started = process.create_time()
        zombie = process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return f"its process {pid} is gone"
    except psutil.Error:  # e.g. access denied: it exists, so it may be the run
        return None
    reused = (recorded_start is not None and abs(started - recorded_start) > 1.0) or (
        started_by is not None and started > started_by + 1.0
    )
    if reused:
        return f"its process {pid} is gone (the pid now belongs to another process)"
    return f"its process {pid} is a zombie" if zombie else None


def _local_code_server(tags: dict[str, str]) -> bool:
    try:
        info = json.loads(tags[CODE_SERVER_TAG])
    except (KeyError, ValueError):
        return False
    return bool(info.get("socket")) or info.get("host", "localhost") in LOCAL_HOSTS | {socket.gethostname()}


def worker_pid(instance: dg.DagsterInstance, run_id: str) -> tuple[int, float] | None:
    """(pid, when it was reported) of the run's worker process, from the run's engine events."""
    for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
        data = entry.dagster_event.engine_event_data if entry.dagster_event else None
        pid = data.metadata.get("pid") if data is not None else None
        if pid is not None and str(pid.value).isdigit():
            return int(pid.value), entry.timestamp
    return None


def dead_run_reason(instance: dg.DagsterInstance, run: dg.DagsterRun) -> str | None:
    """Why `run` (in progress in the instance) can no longer be running, or None if it may be."""
    tags = dict(run.tags)
    if PID_TAG in tags:
        if tags.get(HOST_TAG) != socket.gethostname():
            return None  # another machine's process: not ours to judge
        return process_gone(int(tags[PID_TAG]), None, recorded_start=float(tags.get(PID_STARTED_TAG) or 0) or None)
    if _local_code_server(tags):
        worker = worker_pid(instance, run.run_id)
        return process_gone(*worker) if worker is not None else None  # no worker yet: the start timeout's case
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
        reason = dead_run_reason(instance, run)
        if reason is None:
            continue
        instance.report_run_failed(run, message=f"Run {run.run_id} marked failed: {reason}")
        recovered.append(RecoveredRun(run.run_id, run.job_name, run.tags.get("dagster/partition"), reason))
    return recovered
