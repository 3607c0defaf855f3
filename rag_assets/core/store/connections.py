"""Short-lived catalogue connections that wait for a busy lock, visibly and for a bounded time.

DuckDB lets one process write a database file, and while it has it open read-write no other
process may open it at all (not even read-only). So commands that only read open a read-only
connection for the reads, commands that write open read-write only for the write, and nobody
keeps the file open while a model loads or generates. When another process holds the file, the
connection is retried until `timeout_s`, after telling the user once who holds it; then a
`CatalogueBusy` error says so in one line.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from rag_assets.core.errors import CatalogueBusy, ConfigError

LOCK_TIMEOUT_ENV = "RAG_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT_S = 120.0
_RETRY_EVERY_S = 0.5
# DuckDB refuses, within one process, a read-write connection to a file another thread has open
# read-only (and the reverse): the service's threads take turns per file (each holds it briefly)
_IN_PROCESS: dict[str, threading.RLock] = {}
_IN_PROCESS_GUARD = threading.Lock()
_HOLDER = re.compile(r"held in (?P<program>\S+) \(PID (?P<pid>\d+)\)")


def lock_timeout_s() -> float:
    """Seconds to wait for a busy catalogue: RAG_LOCK_TIMEOUT, else 120."""
    raw = os.environ.get(LOCK_TIMEOUT_ENV)
    try:
        return float(raw) if raw else DEFAULT_LOCK_TIMEOUT_S
    except ValueError:
        raise ConfigError(f"{LOCK_TIMEOUT_ENV}={raw!r} is not a number of seconds") from None


def is_lock_error(err: BaseException) -> bool:
    return isinstance(err, duckdb.IOException) and "lock" in str(err).lower()


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
    on_wait: Callable[[str], None] | None = None,
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to the catalogue file, closed on exit; waits up to `timeout_s` for a lock
    held by another process, calling `on_wait` once with a message saying who holds it."""
    path = Path(path)
    if read_only and not path.exists():
        raise ConfigError(f"no catalogue at {path} yet: run `rag run` (or `rag index`) first")
    timeout_s = lock_timeout_s() if timeout_s is None else timeout_s
    with _IN_PROCESS_GUARD:
        turn = _IN_PROCESS.setdefault(str(path.resolve()), threading.RLock())
    with turn, _connect(path, read_only, timeout_s, on_wait) as con:
        yield con


@contextmanager
def _connect(
    path: Path, read_only: bool, timeout_s: float, on_wait: Callable[[str], None] | None
) -> Iterator[duckdb.DuckDBPyConnection]:
    deadline = time.monotonic() + timeout_s
    told = False
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only)
            break
        except duckdb.IOException as err:
            if not is_lock_error(err):
                raise
            if time.monotonic() >= deadline:
                raise CatalogueBusy(
                    f"the catalogue {path} is still in use by {lock_holder(err)} after {timeout_s:g} s; "
                    f"try again when it finishes (or raise {LOCK_TIMEOUT_ENV})"
                ) from None
            if not told and on_wait is not None:
                on_wait(
                    f"the catalogue {path} is in use by {lock_holder(err)}; "
                    f"waiting for it (up to {timeout_s:g} s, {LOCK_TIMEOUT_ENV})"
                )
                told = True
            time.sleep(_RETRY_EVERY_S)
    try:
        yield con
    finally:
        con.close()


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
