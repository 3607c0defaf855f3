"""The one way to open the catalogue: a connection that waits for a busy lock, visibly and for a
bounded time. The CLI, the service and the pipeline's catalogue resource all connect here.

DuckDB lets one process write a database file, and while it has it open read-write no other
process may open it at all (not even read-only). So commands that only read open a read-only
connection for the reads, commands that write open read-write only for the write, and nobody
keeps the file open while a model loads or generates. With the Celery or multiprocess executor
every step is its own process, and two partitions' steps reach the file at once.

When another process holds the file, the connection is retried with capped exponential backoff
and jitter (two waiters that collided do not retry in lock-step) until `timeout_s`: a command's
is RAG_LOCK_TIMEOUT (120 s by default, `rag_assets.core.settings.lock_timeout_s`), a pipeline
step's is the catalogue resource's `lock_timeout_s` (900 s: steps of concurrent partitions wait
for each other's writes). `on_wait` is told once who holds the file; past the timeout one
`CatalogueBusy` error names the holder.

A file another process is creating this instant (created, its lock and headers not yet written)
reads as "not a valid DuckDB database file"; two partitions' first steps meet that window on a
fresh catalogue. An empty or header-only file shorter than a new database is waited for up to
`CREATING_WAIT_S`, then named as half-written. Any other error is raised at once.
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from rag_assets.core.errors import CatalogueBusy, ConfigError
from rag_assets.core.settings import LOCK_TIMEOUT_ENV, lock_timeout_s

FIRST_WAIT_S = 0.05
MAX_WAIT_S = 2.0
# a new DuckDB file is 3 headers of 4 KiB; its main header carries the magic "DUCK" at byte 8
NEW_DATABASE_BYTES = 3 * 4096
_MAGIC = (8, b"DUCK")
CREATING_WAIT_S = 10.0
_NOT_A_DATABASE = "not a valid DuckDB database file"
# DuckDB refuses, within one process, a read-write connection to a file another thread has open
# read-only (and the reverse): the service's threads take turns per file (each holds it briefly)
_IN_PROCESS: dict[str, threading.RLock] = {}
_IN_PROCESS_GUARD = threading.Lock()
# DuckDB's message: Could not set lock on file "...": Conflicting lock is held in PROGRAM (PID N) ...
_LOCK_CONFLICT = "Could not set lock on file"
_HOLDER = re.compile(r"held in (?P<program>\S+) \(PID (?P<pid>\d+)\)")


def is_lock_conflict(err: BaseException) -> bool:
    """Whether `err` is DuckDB refusing the file because another process holds its lock."""
    return isinstance(err, duckdb.IOException) and _LOCK_CONFLICT in str(err)


def is_being_created(path: Path, err: BaseException) -> bool:
    """Whether DuckDB refused `path` as no database because another process is still writing its
    first headers: the file is empty, or shorter than a new database and starts like one."""
    if not (isinstance(err, duckdb.IOException) and _NOT_A_DATABASE in str(err)):
        return False
    try:
        with path.open("rb") as f:
            head = f.read(NEW_DATABASE_BYTES)
    except OSError:
        return False
    offset, magic = _MAGIC
    return len(head) < NEW_DATABASE_BYTES and (not head.strip(b"\0") or head[offset : offset + len(magic)] == magic)


def lock_holder(err: BaseException) -> str:
    """'process 1234 (python3.11)' from DuckDB's lock message, or 'another process'."""
    match = _HOLDER.search(str(err))
    if not match:
        return "another process"
    return f"process {match['pid']} ({Path(match['program']).name})"


@contextmanager
def catalogue_connection(
    path: Path | str,
    *,
    read_only: bool,
    timeout_s: float | None = None,
    timeout_name: str = LOCK_TIMEOUT_ENV,
    on_wait: Callable[[str], None] | None = None,
    config: Mapping[str, Any] | None = None,
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to the catalogue file, closed on exit; waits up to `timeout_s` (default
    RAG_LOCK_TIMEOUT, else 120 s) for a lock held by another process, calling `on_wait` once with
    a message saying who holds it. `timeout_name` is the setting a `CatalogueBusy` error tells
    the user to raise; `config` is DuckDB's connection config."""
    path = Path(path)
    if read_only and not path.exists():
        raise ConfigError(f"no catalogue at {path} yet: run `rag run` (or `rag index`) first")
    timeout_s = lock_timeout_s() if timeout_s is None else timeout_s
    with _IN_PROCESS_GUARD:
        turn = _IN_PROCESS.setdefault(str(path.resolve()), threading.RLock())
    with turn:
        con = _connect_waiting(path, read_only, dict(config or {}), timeout_s, timeout_name, on_wait)
        try:
            yield con
        finally:
            con.close()


def _connect_waiting(
    path: Path,
    read_only: bool,
    config: dict[str, Any],
    timeout_s: float,
    timeout_name: str,
    on_wait: Callable[[str], None] | None,
) -> duckdb.DuckDBPyConnection:
    """The one lock wait loop: capped exponential backoff with jitter, up to `timeout_s`."""
    started = time.monotonic()
    wait = FIRST_WAIT_S
    told = False
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only, config=config)
        except duckdb.IOException as err:
            waited = time.monotonic() - started
            # the two waits share one backoff: for a file another process is creating, and for
            # one another process holds
            if is_being_created(path, err):
                limit = min(timeout_s, CREATING_WAIT_S)
                if waited >= limit:
                    raise ConfigError(
                        f"the catalogue {path} is half-written ({path.stat().st_size} bytes) and nobody "
                        f"finished creating it in {limit:g} s: if no run is starting, remove the file and run again"
                    ) from err
            elif not is_lock_conflict(err):
                raise
            else:
                limit = timeout_s
                if waited >= limit:
                    raise CatalogueBusy(
                        f"the catalogue {path} is still in use by {lock_holder(err)} after {timeout_s:g} s; "
                        f"try again when it finishes (or raise {timeout_name})"
                    ) from None
                if not told and on_wait is not None:
                    on_wait(
                        f"the catalogue {path} is in use by {lock_holder(err)}; "
                        f"waiting for it (up to {timeout_s:g} s, {timeout_name})"
                    )
                    told = True
            time.sleep(min(wait, limit - waited) * random.uniform(0.5, 1.0))
            wait = min(wait * 2, MAX_WAIT_S)


class _Rows:
    """A finished query's rows and column description (what DuckDB's cursor offers after it)."""

    def __init__(self, rows: list[tuple], description: list[tuple] | None) -> None:
        self._rows = rows
        self.description = description

    def fetchall(self) -> list[tuple]:
        return self._rows

    def fetchone(self) -> tuple | None:
        return self._rows[0] if self._rows else None


class ShortReads:
    """Quacks like a DuckDB connection for `execute(sql, params).fetchall()/fetchone()`, but each
    query opens a read-only connection and closes it at once: a lazy reader (trees fetched as a
    question needs them) can then run for minutes without locking writers out in between."""

    def __init__(self, path: Path | str, *, on_wait: Callable[[str], None] | None = None) -> None:
        self.path = Path(path)
        self.on_wait = on_wait

    def execute(self, sql: str, params: Sequence[Any] = ()) -> _Rows:
        with catalogue_connection(self.path, read_only=True, on_wait=self.on_wait) as con:
            cursor = con.execute(sql, list(params))
            return _Rows(cursor.fetchall(), cursor.description)
