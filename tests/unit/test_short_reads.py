"""ShortReads answers like a DuckDB connection (rows and column description) on a fresh
read-only connection per query, so nothing holds the catalogue between reads."""

from __future__ import annotations

from pathlib import Path

import duckdb

from rag_assets.core.store.connections import ShortReads


def test_rows_and_description_and_no_connection_left_open(tmp_path: Path) -> None:
    db = tmp_path / "catalogue.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE t (a INTEGER, b VARCHAR)")
        con.execute("INSERT INTO t VALUES (1, 'x'), (2, 'y')")
    reads = ShortReads(db)
    assert reads.execute("SELECT a, b FROM t WHERE a > ? ORDER BY a", [0]).fetchall() == [(1, "x"), (2, "y")]
    assert reads.execute("SELECT b FROM t WHERE a = ?", [2]).fetchone() == ("y",)
    assert [c[0] for c in reads.execute("SELECT * FROM t LIMIT 0").description] == ["a", "b"]
    with duckdb.connect(str(db)) as writer:  # a writer gets in between reads: nothing was held
        writer.execute("INSERT INTO t VALUES (3, 'z')")
    assert reads.execute("SELECT count(*) FROM t").fetchone() == (3,)


def test_threads_of_one_process_read_and_write_the_catalogue_in_turn(tmp_path: Path) -> None:
    """A read-only and a read-write connection to one file from two threads of one process (the
    service's concurrent requests) take turns instead of failing on DuckDB's configuration clash."""
    import threading
    import time

    from rag_assets.core.store.connections import catalogue_connection

    db = tmp_path / "catalogue.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE t (a INTEGER)")
    reading = threading.Event()

    def read() -> None:
        with catalogue_connection(db, read_only=True) as con:
            reading.set()
            time.sleep(0.3)
            con.execute("SELECT count(*) FROM t").fetchone()

    reader = threading.Thread(target=read)
    reader.start()
    reading.wait()
    with catalogue_connection(db, read_only=False, timeout_s=5) as con:
        con.execute("INSERT INTO t VALUES (1)")
    reader.join()
    with catalogue_connection(db, read_only=True) as con:
        assert con.execute("SELECT count(*) FROM t").fetchone() == (1,)
