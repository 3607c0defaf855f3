"""What a reader uses: the catalogue's published index rows, read on a short read-only connection,
and the LanceDB table at the published version, opened once per version.

A request reads the publication again whenever the catalogue changed since the last read (a
search checks the file's stamp; an ask reads it afresh), so a newly published index (a scheduled
re-index, a sensor run) is used from the next request on, without a restart; the catalogue file
is never held between reads, so a running materialization never waits on us.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rag_assets.core.errors import ConfigError
from rag_assets.core.store.publication import IndexPin, pin_index

# as resources/vectors.py resolves it (a unit test keeps the two equal); not imported from there,
# because that module imports Dagster, which a BM25 search does not need
DEFAULT_TABLE = "passages"


def catalogue_path() -> Path:
    from rag_assets.core.settings import catalogue_file

    return catalogue_file()


def lancedb_uri() -> str:
    from rag_assets.core.settings import lancedb_uri as configured_uri

    return configured_uri()


@contextmanager
def read_catalogue(on_wait: Callable[[str], None] | None = None) -> Iterator[Any]:
    """A short read-only catalogue connection (waits, visibly and bounded, for a writer)."""
    from rag_assets.core.store.connections import catalogue_connection

    with catalogue_connection(catalogue_path(), read_only=True, on_wait=on_wait) as con:
        yield con


def check_collections(con: Any, wanted: list[str] | None) -> list[str]:
    """`wanted` (None: every collection), each checked against the catalogue's trees; an unknown
    name (a typo, a path such as ../../x) is a ConfigError naming the known ones."""
    from rag_assets.core.store.answers import tree_collections

    return checked_names(tree_collections(con), wanted)


def checked_names(known: list[str], wanted: list[str] | None) -> list[str]:
    """`wanted` (None: all of `known`), each one of `known` or a ConfigError naming them."""
    if not known:
        raise ConfigError("the catalogue holds no document trees yet: run `rag run` (or `rag index`) first")
    unknown = [name for name in wanted or [] if name not in known]
    if unknown:
        raise ConfigError(f"unknown collection {', '.join(map(repr, unknown))}: the catalogue has {', '.join(known)}")
    return list(wanted) if wanted else known


def catalogue_stamp(path: Path) -> tuple[tuple[int, int, int] | None, ...]:
    """What changes whenever a transaction commits to the DuckDB catalogue: the identity, size and
    modification time of its file and of its write-ahead log (a commit appends to the log, a
    checkpoint rewrites the file and drops the log)."""
    stamp = []
    for file in (path, path.with_name(path.name + ".wal")):
        try:
            info = file.stat()
        except FileNotFoundError:
            stamp.append(None)
            continue
        stamp.append((info.st_ino, info.st_size, info.st_mtime_ns))
    return tuple(stamp)


class PublishedPairs:
    """Every collection's published pair, read again only when the catalogue changed.

    A search is a few milliseconds of LanceDB; opening the catalogue and reading the publication
    costs more than that. So a request compares the catalogue's stamp (file and log size and
    mtime, one stat each) with the one the pairs were read under, and reads again only when a
    write committed since: a newly published index is still served from the next request on.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stamp: tuple | None = None
        self._known: list[str] | None = None
        self._pairs: dict[str, IndexPin] = {}

    def get(
        self, wanted: list[str] | None, on_wait: Callable[[str], None] | None = None
    ) -> tuple[list[str], list[IndexPin]]:
        """(`wanted` checked, their published pairs); None: every collection."""
        from rag_assets.core.store.answers import tree_collections

        stamp = catalogue_stamp(catalogue_path())
        with self._lock:
            if stamp != self._stamp:
                self._stamp, self._known, self._pairs = stamp, None, {}
            if self._known is None or any(name not in self._pairs for name in wanted or self._known):
                # stamped before this read: a commit landing during it shows as a change next time
                with read_catalogue(on_wait) as con:
                    if self._known is None:
                        self._known = tree_collections(con)
                    for name in checked_names(self._known, wanted):
                        if name not in self._pairs:
                            self._pairs[name] = pin_index(con, name)
            names = checked_names(self._known, wanted)
            return names, [self._pairs[name] for name in names]


class _Pinned:
    """What `retrieval.search` reads: `.table`, here one LanceDB table checked out at a version."""

    def __init__(self, table: Any) -> None:
        self.table = table


class LanceTables:
    """The passage table opened once per published version (opening costs more than a query)."""

    def __init__(self, uri: str | None = None, table_name: str = DEFAULT_TABLE) -> None:
        self.uri = uri or lancedb_uri()
        self.table_name = table_name
        self._db = None
        self._tables: dict[int, Any] = {}
        self._lock = threading.Lock()

    @property
    def dataset_uri(self) -> str:
        """The Lance dataset LanceDB keeps the table in (what pylance opens)."""
        return f"{self.uri.rstrip('/')}/{self.table_name}.lance"

    def _open(self) -> Any:
        import lancedb

        if self._db is None:
            self._db = lancedb.connect(self.uri)
        if self.table_name not in self._db.list_tables().tables:
            raise FileNotFoundError(
                f"no passage index table {self.table_name!r} in {self.uri}: materialize `passage_index` first (`rag run`)"
            )
        return self._db.open_table(self.table_name)

    def known_collections(self, wanted: list[str] | None) -> list[str] | None:
        """`wanted` checked against the newest index version's rows (None: every collection), for
        searches made while the catalogue is busy; an unknown name is a ConfigError."""
        from rag_assets.core.index.full_text import load_lance
        from rag_assets.core.index.retrieval import collection_filter

        if not wanted:
            return None
        try:
            dataset = load_lance().dataset(self.dataset_uri)
        except (FileNotFoundError, ValueError) as error:
            raise FileNotFoundError(
                f"no passage index table {self.table_name!r} in {self.uri}: materialize `passage_index` first (`rag run`)"
            ) from error
        unknown = [name for name in wanted if not dataset.count_rows(filter=collection_filter([name]))]
        if unknown:
            raise ConfigError(f"unknown collection {', '.join(map(repr, unknown))}: the passage index has no such rows")
        return list(wanted)

    def at(self, version: int | None) -> _Pinned:
        """The table as of `version` (None: the newest, opened afresh)."""
        with self._lock:
            if version is None:
                return _Pinned(self._open())
            if version not in self._tables:
                if len(self._tables) >= 8:  # old publications: let them go
                    self._tables.pop(next(iter(self._tables)))
                table = self._open()
                table.checkout(version)
                self._tables[version] = table
            return _Pinned(self._tables[version])


def published_reranker(which: str, collections: list[str]) -> str:
    """What the service's `reranker=` may name: `latest` or the id of a passage reranker published
    for one of `collections` (its folder is returned); anything else, a folder path above all, is
    a ConfigError that reads nothing from the disk."""
    from rag_assets.core.store.published_models import published_models

    if which == "latest":
        return which
    with read_catalogue() as con:
        published = {
            model.model_id: model.path
            for name in collections
            if (model := published_models(con, name).get("reranker")) is not None and model.model_id and model.path
        }
    if which not in published:
        ids = ", ".join(sorted(published)) or "none published"
        raise ConfigError(f"unknown reranker {which!r}: use `latest` or a published reranker id ({ids})")
    return published[which]
