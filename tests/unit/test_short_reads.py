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
