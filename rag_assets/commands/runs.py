"""`rag run`, `rag index`, `rag recover`: materialize jobs in this process and report failures."""

from __future__ import annotations

import os
import re
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

from rag_assets.commands.errors import EXIT_FAILED, EXIT_INTERRUPTED, checked_home, console, errors, say_waiting
from rag_assets.commands.progress import error_line, interrupt_error
from rag_assets.core.errors import ConfigError, ConfigMistakes
from rag_assets.core.settings import run_config_file

# how long an interrupted command may take to unwind on its own before the watchdog stops it
INTERRUPT_GRACE_S = 5.0

INTERRUPTED_NOTE = (
    "the step in progress was stopped; every write is atomic and an index is published only once both "
    "stores hold it, so readers keep the last published index"
)


def quiet_model_loading() -> None:
    """No weight-loading progress bars on stderr: it is the channel for errors and waits."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()


def run_config(config: Path | None, job: Any, resources: dict[str, Any]) -> dict:
    """The run config YAML (`--config`, else $RAG_RUN_CONFIG), checked whole against the job: its
    keys and types, then every op's and resource's values against their config classes' bounds."""
    import dagster as dg
    import yaml

    from rag_assets.commands.config_check import bound_mistakes

    config = config or run_config_file()
    if config is None:
        return {}
    try:
        loaded = yaml.safe_load(config.read_text()) or {}
    except (OSError, yaml.YAMLError) as err:
        raise ConfigError(f"run config {config}: {' '.join(str(err).split())}") from None
    if not isinstance(loaded, dict):
        raise ConfigError(f"run config {config}: expected a mapping such as `ops: ...`")
    try:
        dg.validate_run_config(job, loaded)  # fail before the first collection runs, not midway
    except dg.DagsterInvalidConfigError as err:
        raise ConfigError(f"run config {config} does not fit the job: {' '.join(str(err).split())}") from None
    mistakes = bound_mistakes(job, resources, loaded)  # the bounds the steps and resources enforce
    if mistakes:
        raise ConfigMistakes([f"run config {config}: {mistake}" for mistake in mistakes])
    console.print(f"run config: [cyan]{config}[/cyan]", soft_wrap=True)
    return loaded


def failure_lines(result: Any) -> list[str]:
    """One line per cause of a finished in-process run's failure (through the result's public
    accessors, which hold across Dagster's event classes): each failed step with its error's first
    line, each failed check, a resource that failed to start with its cause, else the run's own
    failure."""
    lines: list[str] = []
    for event in result.get_step_failure_events():
        error = event.step_failure_data.error if event.step_failure_data else None
        lines.append(f"step {event.step_key} failed: {error_line(error)}")
    for evaluation in result.get_asset_check_evaluations():
        if not evaluation.passed:
            description = f": {evaluation.description}" if evaluation.description else ""
            lines.append(f"check {evaluation.asset_key.to_user_string()}.{evaluation.check_name} failed{description}")
    run_failure = next((e for e in result.all_events if e.event_type_value == "PIPELINE_FAILURE"), None)
    if run_failure is not None:
        lines.extend(_run_failure_lines(run_failure, bool(lines)))
    return lines


def _run_failure_lines(event: Any, explained: bool) -> list[str]:
    """The run's own failure: a resource that failed to start (`ResourceDefinition NAME`, with its
    cause), else, when no step or check explains it, the run's error or message."""
    error = getattr(event.event_specific_data, "error", None)
    if error is not None and error.cls_name == "DagsterResourceFunctionError":
        name = re.search(r"ResourceDefinition (\S+)", error.message)
        return [f"resource {name.group(1) if name else '?'} failed to start: {error_line(error.cause or error)}"]
    if explained:
        return []
    return [f"run failed before its steps: {error_line(error)}" if error else f"run failed: {event.message}"]


def run_interrupted(result: Any) -> bool:
    """Whether a finished in-process run ended because it was interrupted (Ctrl-C or SIGTERM):
    an error of an interrupt class in any of its events (a step's failure or the run's)."""
    return any(interrupt_error(event) for event in result.all_events)


def stop_interrupted_run(instance: Any, run_id: str) -> None:
    """Called (from the progress thread) once an interrupted step has unwound: Dagster would
    retry it under its retry policy and start the steps that do not depend on it, so the
    command stops here instead, after marking the run failed. Every write is atomic (a DuckDB
    transaction, a LanceDB commit, a publication row), so nothing is left half-published."""
    run = instance.get_run_by_id(run_id)
    if run is not None:
        instance.report_run_failed(run, message=f"Run {run_id} interrupted (Ctrl-C or SIGTERM)")
    errors.print(f"  run {run_id} interrupted: {INTERRUPTED_NOTE}", soft_wrap=True)
    errors.print("[red]error:[/red] interrupted")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(EXIT_INTERRUPTED)


@contextmanager
def sigterm_as_interrupt(instance: Any = None) -> Iterator[None]:
    """SIGTERM handled as Ctrl-C while the block runs (in the main thread): Dagster stops the
    step at once and the command ends with the interrupted exit code, after its cleanup.

    Python runs a signal handler only once the main thread is back in Python code, so an
    interrupt that lands inside a long native call (a batch of embeddings, a LanceDB write)
    would wait for it. The C-level handler writes the signal to the wakeup socket at once, so a
    watchdog thread hears it and, if the command has not ended `INTERRUPT_GRACE_S` later, marks
    this process's runs failed and exits with the interrupted code itself."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    previous_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    threading.Thread(target=_stop_after_grace, args=(reader, instance), name="rag-interrupt", daemon=True).start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous_fd)
        signal.signal(signal.SIGTERM, previous)
        writer.close()  # ends the watchdog's wait


def _stop_after_grace(reader: socket.socket, instance: Any) -> None:
    with reader:
        while True:
            try:
                received = reader.recv(16)
            except OSError:
                return
            if not received:  # the block ended
                return
            if {signal.SIGINT, signal.SIGTERM} & set(received):
                break
    time.sleep(INTERRUPT_GRACE_S)
    try:
        run_ids = _runs_of_this_process(instance) if instance is not None else []
        for run_id in run_ids[1:]:
            instance.report_run_failed(instance.get_run_by_id(run_id), message=f"Run {run_id} interrupted")
        if run_ids:
            stop_interrupted_run(instance, run_ids[0])  # exits
    except Exception:  # the record could not be written: exit all the same (`rag recover` fails the run later)
        pass
    errors.print("[red]error:[/red] interrupted")
    os._exit(EXIT_INTERRUPTED)


def _runs_of_this_process(instance: Any) -> list[str]:
    import dagster as dg

    from rag_assets.commands.run_health import PID_TAG

    try:
        runs = instance.get_runs(
            filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED], tags={PID_TAG: str(os.getpid())})
        )
    except Exception:  # the instance's storage is what hangs: exit without the record (`rag recover` fixes it)
        return []
    return [run.run_id for run in runs]


def report_recovered(recovered: Any) -> None:
    for run in recovered:
        console.print(
            f"[yellow]recovered:[/yellow] run {run.run_id} ({run.job_name}"
            f"{', ' + run.partition if run.partition else ''}) was still marked in progress, but "
            f"{run.reason}: marked it failed",
            highlight=False,
            soft_wrap=True,
        )


def _say_progress(line: str) -> None:
    console.print(line, markup=False, highlight=False, soft_wrap=True)


def materialize(
    job_name: str, collection: list[str] | None, config: Path | None, *, verbose: bool = False
) -> list[str]:
    """Run `job_name` for each collection (all by default) in this process, after failing runs
    whose process is gone; returns the collections run. A failed run exits with code 1 after
    one line per failed step and check. One progress line per asset and long step; Dagster's
    own events only with `verbose` (the run's event log keeps them all)."""
    checked_home(create=True)
    import dagster as dg

    from rag_assets.commands.catalogue_start import start_checks
    from rag_assets.commands.progress import console_log_level
    from rag_assets.commands.run_health import recover_dead_runs
    from rag_assets.core.settings import collections_file, load_collections
    from rag_assets.definitions import defs
    from rag_assets.defs.partitions import register_collections

    configured = [spec.name for spec in load_collections()]  # validated: one line per mistake
    names = collection or configured
    unknown = [name for name in names if name not in configured]
    if unknown:
        raise ConfigError(
            f"collection(s) {', '.join(unknown)} are not in {collections_file()} (it has {', '.join(configured)})"
        )
    start_checks(names)  # an older catalogue upgraded first; what this run has yet to make named
    job = defs.resolve_job_def(job_name)
    config_dict = console_log_level(run_config(config, job, defs.resources), verbose)
    if not verbose:
        quiet_model_loading()
    with dg.DagsterInstance.get() as instance, sigterm_as_interrupt(instance):
        report_recovered(recover_dead_runs(instance))
        register_collections(instance, names)
        failed: list[str] = []
        for name in names:  # one collection's failure does not stop the others
            console.print(f"[bold]materializing[/bold] collection [cyan]{name}[/cyan] ({job_name})")
            if not _run_collection(job, name, instance, config_dict):
                failed.append(name)
    if failed:
        errors.print(f"[red]error:[/red] {len(failed)} of {len(names)} collection run(s) failed: {', '.join(failed)}")
        raise typer.Exit(EXIT_FAILED)
    return names


def _run_collection(job: Any, name: str, instance: Any, config_dict: dict) -> bool:
    """Run `job` for one collection here; False (after one line per cause) if it failed or never
    started."""
    import dagster as dg

    from rag_assets.commands.progress import run_progress
    from rag_assets.commands.run_health import process_tags

    try:
        with run_progress(instance, _say_progress, on_interrupt=stop_interrupted_run) as progress_tags:
            result = job.execute_in_process(
                partition_key=name,
                instance=instance,
                raise_on_error=False,
                run_config=config_dict,
                # the process tags let a later command tell this run died if it is killed
                tags={**process_tags(), **progress_tags},
            )
    except dg.DagsterError as err:  # refused before a run existed (no run id, no event log)
        errors.print(f"  run for {name} did not start: {escape(_first_line(err))}", highlight=False, soft_wrap=True)
        return False
    if result.success:
        console.print(f"  run {result.run_id} succeeded (its full log: `make dev`, Runs)", highlight=False)
        return True
    if run_interrupted(result):  # the other collections are not started
        errors.print(f"  run {result.run_id} for {name} interrupted: {INTERRUPTED_NOTE}", soft_wrap=True)
        raise KeyboardInterrupt
    for line in failure_lines(result):
        errors.print(f"  {escape(line)}", highlight=False, soft_wrap=True)
    errors.print(f"  run {result.run_id} for {name} [red]failed[/red]; see `make dev` for its logs")
    return False


def _first_line(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return f"{type(err).__name__}: {lines[0] if lines else 'no message'}"


def recover() -> None:
    checked_home(create=True)
    import dagster as dg

    from rag_assets.commands.run_health import IN_PROGRESS, recover_dead_runs

    with dg.DagsterInstance.get() as instance:
        recovered = recover_dead_runs(instance)
        report_recovered(recovered)
        left = len(instance.get_run_ids(filters=dg.RunsFilter(statuses=list(IN_PROGRESS))))
    console.print(f"{len(recovered)} dead run(s) marked failed; {left} run(s) still in progress")


__all__ = ["failure_lines", "materialize", "recover", "run_config", "say_waiting"]
