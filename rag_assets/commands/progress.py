"""What `rag run` shows while a run executes: one line per materialized asset, one per long step
the asset reports (embedding, training, answering), warnings and failed checks; Dagster's own
DEBUG events stay in the run's event log (the UI's run page) and on screen only with `--verbose`.

The lines are read back from the instance's event log (public `DagsterInstance` API) by a small
polling thread, so the run itself executes exactly as in the UI.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import dagster as dg

PROGRESS_TAG = "rag/progress"
POLL_SECONDS = 0.5
INTERRUPTS = ("KeyboardInterrupt", "DagsterExecutionInterruptedError")


def interrupt_error(event: dg.DagsterEvent | None) -> bool:
    """Whether a Dagster event carries an interrupt (Ctrl-C, SIGTERM) in its error chain: a step
    interrupted, failed or put up for retry because of it."""
    error = getattr(event.event_specific_data, "error", None) if event is not None else None
    while error is not None:
        if error.cls_name in INTERRUPTS:
            return True
        error = error.cause
    return False


def console_log_level(run_config: dict, verbose: bool) -> dict:
    """`run_config` with Dagster's console logger at DEBUG (verbose) or silenced; a level the run
    config sets itself wins. The run's event log keeps every event either way."""
    if "loggers" in run_config:
        return run_config
    level = "DEBUG" if verbose else "CRITICAL"
    return {**run_config, "loggers": {"console": {"config": {"log_level": level}}}}


@dataclass
class ProgressState:
    """What the printer has seen of one run: when each step started, the checks' verdicts."""

    started: dict[str, float] = field(default_factory=dict)
    checks_passed: int = 0
    checks_failed: list[str] = field(default_factory=list)
    running: str = ""
    skipped: int = 0


def _skip_notice(message: str) -> bool:
    """Dagster's warning for a step it does not run because an upstream step failed or was skipped."""
    return message.startswith("Dependencies for step") and message.rstrip().endswith("Not executing.")


def _rows(metadata: dict) -> str:
    for key in ("dagster/partition_row_count", "dagster/row_count"):
        if key in metadata:
            value = getattr(metadata[key], "value", metadata[key])
            return f"{value} rows"
    return ""


# Dagster's wrappers around a step's own error: the step-execution one, and the retry policy's
# "Exceeded max_retries of N" once the last retry failed too.
_WRAPPERS = ("DagsterExecutionStepExecutionError", "RetryRequestedFromPolicy")


def error_line(error: Any) -> str:
    """The first line of the step's own error, under Dagster's wrappers (a retried step's says
    how often it was retried), without the exception's module path (`dagster._core...Failure: x`
    -> `Failure: x`); a pydantic error keeps its field lines (`N validation error for X: field:
    the bound`)."""
    retried = ""
    while error is not None and error.cause is not None and error.cls_name in _WRAPPERS:
        if error.cls_name == "RetryRequestedFromPolicy":
            retried = f" ({error.message.strip().lower()})"
        error = error.cause
    lines = [line.strip() for line in (error.message if error else "").strip().splitlines() if line.strip()]
    if not lines:
        return "no message"
    head, sep, rest = lines[0].partition(": ")
    first = f"{head.rsplit('.', 1)[-1]}{sep}{rest}"
    if error.cls_name == "ValidationError":
        details = [line for line in lines[1:] if not line.startswith("For further information")]
        first = ": ".join([first, *details])
    return first + retried


def _logged_line(entry: Any, step: str, state: ProgressState) -> str | None:
    if _skip_notice(entry.user_message or ""):
        state.skipped += 1  # counted: one line at the end, not one per step
        return None
    if entry.level >= logging.WARNING:
        return f"    ! {step}: {entry.user_message}"
    if entry.level >= logging.INFO and step:
        return f"    · {step}: {entry.user_message}"
    return None


def progress_line(entry, state: ProgressState) -> str | None:
    """The line to show for one event-log entry, or None (most Dagster events show nothing)."""
    event = entry.dagster_event
    step = entry.step_key or ""
    if event is None:  # a message the asset (or Dagster) logged
        return _logged_line(entry, step, state)
    kind = event.event_type_value
    if kind == "STEP_START":
        state.started[step] = entry.timestamp
        state.running = step
        return None
    if kind == "ASSET_MATERIALIZATION":
        materialization = event.step_materialization_data.materialization
        name = materialization.asset_key.to_user_string()
        if name != step:  # a side table written by this step: its row count is in the UI
            return None
        seconds = entry.timestamp - state.started.get(step, entry.timestamp)
        details = ", ".join(x for x in (_rows(materialization.metadata or {}), f"{seconds:.1f} s") if x)
        return f"  ✓ {name} ({details})"
    if kind == "ASSET_CHECK_EVALUATION":
        evaluation = event.asset_check_evaluation_data
        if evaluation.passed:
            state.checks_passed += 1
            return None
        severity = evaluation.severity.value.lower() if evaluation.severity else "error"
        name = f"{evaluation.asset_key.to_user_string()}.{evaluation.check_name}"
        state.checks_failed.append(name)
        return f"    ✗ check {name} did not pass ({severity})"
    if kind == "STEP_FAILURE":
        return f"  ✗ {step} failed: {error_line(event.step_failure_data.error)}"
    return None


class _RunFollower:
    """Reads the progress lines of the run tagged with `token`, from where the last read stopped;
    calls `on_interrupt(instance, run_id)` when a step reports an interrupt."""

    def __init__(
        self,
        instance: dg.DagsterInstance,
        token: str,
        state: ProgressState,
        say: Callable[[str], None],
        on_interrupt: Callable[[dg.DagsterInstance, str], None] | None = None,
    ):
        self.instance, self.token, self.state, self.say = instance, token, state, say
        self.on_interrupt = on_interrupt
        self.cursor: str | None = None
        self.run_id: str | None = None

    def drain(self) -> None:
        if self.run_id is None:
            runs = self.instance.get_runs(filters=dg.RunsFilter(tags={PROGRESS_TAG: self.token}), limit=1)
            if not runs:
                return
            self.run_id = runs[0].run_id
        while True:
            connection = self.instance.get_records_for_run(self.run_id, cursor=self.cursor, limit=500)
            for record in connection.records:
                line = progress_line(record.event_log_entry, self.state)
                if line is not None:
                    self.say(line)
                if self.on_interrupt is not None and interrupt_error(record.event_log_entry.dagster_event):
                    self.on_interrupt(self.instance, self.run_id)
            self.cursor = connection.cursor
            if not connection.has_more:
                return


@contextmanager
def run_progress(
    instance: dg.DagsterInstance,
    say: Callable[[str], None],
    on_interrupt: Callable[[dg.DagsterInstance, str], None] | None = None,
) -> Iterator[dict[str, str]]:
    """Yields the tags to give the run; while the block runs, each of its progress lines is passed
    to `say` as soon as the event log has it, and the rest once the block ends; a step's
    interrupt is passed to `on_interrupt` as soon as it is logged."""
    token = uuid.uuid4().hex
    state = ProgressState()
    stop = threading.Event()
    follower = _RunFollower(instance, token, state, say, on_interrupt)
    drain = follower.drain

    def poll() -> None:
        while not stop.wait(POLL_SECONDS):
            try:
                drain()
            except Exception:  # a read racing the writer: the next poll (or the final drain) catches up
                time.sleep(POLL_SECONDS)

    thread = threading.Thread(target=poll, name="rag-progress", daemon=True)
    thread.start()
    try:
        yield {PROGRESS_TAG: token}
    finally:
        stop.set()
        thread.join()
        drain()
        if state.skipped:
            say(f"  {state.skipped} step(s) skipped: an upstream step failed")
        if state.checks_passed or state.checks_failed:
            failed = len(state.checks_failed)
            say(f"  checks: {state.checks_passed} passed" + (f", {failed} did not pass" if failed else ""))
