"""The DuckDB catalogue resource (dagster-duckdb), pointed at the project's data folder.

Its connections are opened by the one catalogue connection path
(`rag_assets.core.store.connections.catalogue_connection`): a file locked by another process is
waited for (capped exponential backoff with jitter) instead of failing, up to `lock_timeout_s`,
then `CatalogueBusy` names the holder. With the Celery or multiprocess executor every step is
its own process and two partitions' steps reach the file at once; each stage holds its
connection only around its reads and its one-transaction write, so the wait is bounded by the
other step's write.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb
from dagster_duckdb import DuckDBResource
from pydantic import Field

from rag_assets.core.settings import catalogue_file
from rag_assets.core.store.connections import catalogue_connection

log = logging.getLogger(__name__)

PIPELINE_LOCK_TIMEOUT_S = 900.0


class CatalogueResource(DuckDBResource):
    """A `DuckDBResource` whose connections wait for a file locked by another process."""

    lock_timeout_s: float = Field(
        default=PIPELINE_LOCK_TIMEOUT_S,
        description="How long a step waits for the catalogue file while another process writes it.",
    )

    @contextmanager
    def get_connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        started = time.monotonic()
        with catalogue_connection(
            self.database,
            read_only=False,
            timeout_s=self.lock_timeout_s,
            timeout_name="the catalogue resource's lock_timeout_s",
            on_wait=log.info,
            config={"custom_user_agent": "dagster", **self.connection_config},
        ) as con:
            waited = time.monotonic() - started
            if waited >= 1.0:
                log.info("waited %.1f s for the catalogue lock on %s", waited, self.database)
            yield con


def default_catalogue() -> CatalogueResource:
    path = catalogue_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    return CatalogueResource(database=str(path))
