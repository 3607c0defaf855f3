"""The DuckDB catalogue resource (dagster-duckdb), pointed at the project's data folder.

DuckDB lets ONE process hold a database file open for writing (and then no other process may
even read it). With the in-process executor that is one run; with the Celery or multiprocess
executor every step is its own process, and two partitions' steps reach the file at once. So a
connection that finds the file locked waits for it (capped exponential backoff with jitter)
instead of failing, up to `lock_timeout_s`; each stage holds its connection only around its
reads and its one-transaction write, so the wait is bounded by the other step's write.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb
from dagster_duckdb import DuckDBResource
from pydantic import Field

from rag_assets.settings import data_dir

log = logging.getLogger(__name__)

_LOCK_MESSAGE = "Could not set lock on file"


class CatalogueLockTimeout(TimeoutError):
    """Another process kept the catalogue file locked for longer than the resource waits."""


def is_lock_conflict(error: BaseException) -> bool:
    return isinstance(error, duckdb.IOException) and _LOCK_MESSAGE in str(error)


def connect_waiting(
    database: str,
    *,
    config: dict | None = None,
    timeout_s: float = 900.0,
    first_wait_s: float = 0.05,
    max_wait_s: float = 2.0,
) -> tuple[duckdb.DuckDBPyConnection, float]:
    """Open `database` for writing, waiting while another process holds it; returns the
    connection and the seconds spent waiting. Errors other than the lock conflict are raised at once."""
    started = time.monotonic()
    wait = first_wait_s
    while True:
        try:
            con = duckdb.connect(database, read_only=False, config=config or {})
            return con, time.monotonic() - started
        except duckdb.IOException as error:
            if not is_lock_conflict(error):
                raise
            waited = time.monotonic() - started
            if waited >= timeout_s:
                raise CatalogueLockTimeout(
                    f"catalogue {database} stayed locked by another process for {waited:.0f} s "
                    f"(lock_timeout_s={timeout_s:.0f}): {error}"
                ) from None
            # jitter: two waiters that collided must not retry in lock-step
            time.sleep(min(wait, max(0.0, timeout_s - waited)) * random.uniform(0.5, 1.0))
            wait = min(wait * 2, max_wait_s)


class CatalogueResource(DuckDBResource):
    """A `DuckDBResource` whose connections wait for a file locked by another process."""

    lock_timeout_s: float = Field(
        default=900.0,
        description="How long a step waits for the catalogue file while another process writes it.",
    )

    @contextmanager
    def get_connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        con, waited = connect_waiting(
            self.database,
            config={"custom_user_agent": "dagster", **self.connection_config},
            timeout_s=self.lock_timeout_s,
        )
        if waited >= 1.0:
            log.info("waited %.1f s for the catalogue lock on %s", waited, self.database)
        try:
            yield con
        finally:
            con.close()


def default_catalogue() -> CatalogueResource:
    path = data_dir() / "catalogue.duckdb"
    path.parent.mkdir(parents=True, exist_ok=True)
    return CatalogueResource(database=str(path))
