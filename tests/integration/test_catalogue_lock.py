"""The one catalogue connection path (which the catalogue resource uses) waits for a DuckDB file
that another process holds, instead of failing, and names the holder when it gives up."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from rag_assets.core.errors import CatalogueBusy
from rag_assets.core.store.connections import catalogue_connection
from resources.catalogue import CatalogueResource

HOLDER = textwrap.dedent(
    """
    import sys, time, duckdb
    con = duckdb.connect(sys.argv[1])
    con.execute("CREATE TABLE IF NOT EXISTS t (x INTEGER)")
    print("locked", flush=True)
    sys.stdin.readline()  # hold the lock until the test says so
    con.execute("INSERT INTO t VALUES (1)")
    con.close()
    """
)


def _hold(db: Path) -> subprocess.Popen:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    return holder


def test_connection_waits_for_the_other_process(tmp_path: Path) -> None:
    db = tmp_path / "catalogue.duckdb"
    holder = _hold(db)
    try:
        # the holder releases the lock only after our first attempts have met it
        with (
            pytest.raises(CatalogueBusy, match=r"still in use by process \d+ .*raise RAG_LOCK_TIMEOUT"),
            catalogue_connection(db, read_only=False, timeout_s=0.3),
        ):
            pass
        # the resource names its own setting
        with (
            pytest.raises(CatalogueBusy, match="lock_timeout_s"),
            CatalogueResource(database=str(db), lock_timeout_s=0.3).get_connection(),
        ):
            pass
        assert holder.stdin is not None
        holder.stdin.write("go\n")
        holder.stdin.flush()
        with CatalogueResource(database=str(db), lock_timeout_s=120).get_connection() as con:
            assert con.execute("SELECT count(*) FROM t").fetchone() == (1,)
    finally:
        holder.wait(timeout=60)
    assert holder.returncode == 0


def test_other_errors_are_not_retried(tmp_path: Path) -> None:
    not_a_db = tmp_path / "garbage.duckdb"
    not_a_db.write_text("this is not a database file")
    with (
        pytest.raises(Exception, match=r"(?i)not a valid duckdb|corrupt|database"),
        catalogue_connection(not_a_db, read_only=False, timeout_s=30),
    ):
        pass


def test_a_catalogue_another_process_is_creating_is_waited_for(tmp_path: Path) -> None:
    """Two partitions' first steps on a fresh catalogue: one has created the file, not yet its
    headers; the other waits for it instead of failing with "not a valid DuckDB database"."""
    db = tmp_path / "catalogue.duckdb"
    db.touch()  # the other process's file, its headers still to come
    finished = tmp_path / "finished.duckdb"
    with catalogue_connection(finished, read_only=False) as con:
        con.execute("CREATE TABLE t AS SELECT 7 AS x")

    def finish_creating() -> None:
        time.sleep(0.5)
        os.replace(finished, db)

    creator = threading.Thread(target=finish_creating)
    creator.start()
    try:
        with catalogue_connection(db, read_only=False, timeout_s=30) as con:
            assert con.execute("SELECT x FROM t").fetchone() == (7,)
    finally:
        creator.join()


def test_a_half_written_catalogue_nobody_finishes_is_named(tmp_path: Path, monkeypatch) -> None:
    from rag_assets.core.errors import ConfigError
    from rag_assets.core.store import connections

    monkeypatch.setattr(connections, "CREATING_WAIT_S", 0.5)
    db = tmp_path / "catalogue.duckdb"
    db.touch()
    with (
        pytest.raises(ConfigError, match=r"catalogue\.duckdb is half-written \(0 bytes\).*remove the file"),
        catalogue_connection(db, read_only=False, timeout_s=30),
    ):
        pass
    assert db.stat().st_size == 0  # nothing written over what somebody else may be creating
