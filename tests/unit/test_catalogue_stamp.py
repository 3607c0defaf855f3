"""The service re-reads the publication only when the catalogue's stamp changed: every committed
write must change it (or a newly published index would not be served), a read must not."""

from __future__ import annotations

from pathlib import Path

import duckdb

from rag_assets.serving.catalogue_reads import catalogue_stamp


def test_every_commit_changes_the_stamp_and_reads_do_not(tmp_path: Path) -> None:
    path = tmp_path / "catalogue.duckdb"
    assert catalogue_stamp(path) == (None, None)
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE publication (collection VARCHAR, version INTEGER)")
    con.close()
    stamps = [catalogue_stamp(path)]
    for version in (1, 2):
        writer = duckdb.connect(str(path))
        writer.execute("INSERT INTO publication VALUES ('c', ?)", [version])
        writer.close()
        stamps.append(catalogue_stamp(path))
        reader = duckdb.connect(str(path), read_only=True)
        assert reader.execute("SELECT max(version) FROM publication").fetchone() == (version,)
        reader.close()
        assert catalogue_stamp(path) == stamps[-1]  # reading changed nothing
    assert len(set(stamps)) == 3
    # a write left in the log (no checkpoint on close) changes the stamp too
    writer = duckdb.connect(str(path))
    writer.execute("SET checkpoint_threshold = '1GB'")
    writer.execute("INSERT INTO publication VALUES ('c', 3)")
    in_log = catalogue_stamp(path)
    writer.close()
    assert in_log != stamps[-1]
