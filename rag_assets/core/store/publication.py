"""Which LanceDB version goes with the catalogue's passages: the publication record.

DuckDB (passages) and LanceDB (their vectors) are two stores written one after the other, so a
run killed between the two leaves them out of step. `passage_index` therefore *publishes* each
collection's index only after both are written: one catalogue row naming the LanceDB table
version and a digest of the (passage id, content hash) pairs it holds. Readers open LanceDB at
the published version (never a half-written one) and compare the digest with the catalogue's
passages to say whether the pair they use is consistent; a check fails a collection whose two
stores disagree.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import duckdb

from rag_assets.core.store.passage_table import passage_hashes
from rag_assets.core.store.transactions import ensure_schema, table_exists, transaction

TABLE = "index_publications"


@dataclass(frozen=True, slots=True)
class Publication:
    collection: str
    table_name: str
    version: int
    tag: str | None
    passages: int
    digest: str
    published_at: datetime


def passages_digest(pairs: Iterable[tuple[str, str]]) -> str:
    """sha256 over the sorted (passage id, content hash) pairs: equal digests, equal passages."""
    h = hashlib.sha256()
    for passage_id, content_hash in sorted(pairs):
        h.update(f"{passage_id}\t{content_hash}\n".encode())
    return h.hexdigest()


def catalogue_passages(con: duckdb.DuckDBPyConnection, collection: str) -> list[tuple[str, str]]:
    """(passage id, content hash) of the collection's catalogue passages, by passage id."""
    return passage_hashes(con, collection)


def publish(con: duckdb.DuckDBPyConnection, publication: Publication) -> None:
    """Record `publication` as the collection's current index, replacing the previous one atomically."""
    ensure_schema(con, [TABLE])
    with transaction(con):
        con.execute(f"DELETE FROM {TABLE} WHERE collection = ?", [publication.collection])
        con.execute(
            f"INSERT INTO {TABLE} VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                publication.collection,
                publication.table_name,
                publication.version,
                publication.tag,
                publication.passages,
                publication.digest,
                publication.published_at,
            ],
        )


def new_publication(
    collection: str, table_name: str, version: int, tag: str | None, pairs: Iterable[tuple[str, str]]
) -> Publication:
    pairs = list(pairs)
    return Publication(
        collection, table_name, version, tag, len(pairs), passages_digest(pairs), datetime.now(UTC).replace(tzinfo=None)
    )


def load_publication(con: duckdb.DuckDBPyConnection, collection: str) -> Publication | None:
    if not table_exists(con, TABLE):
        return None
    row = con.execute(
        f"SELECT collection, table_name, version, tag, passages, digest, published_at FROM {TABLE} "
        "WHERE collection = ?",
        [collection],
    ).fetchone()
    return Publication(*row) if row else None


@dataclass(frozen=True, slots=True)
class IndexPairing:
    """The (catalogue passages, LanceDB version) pair a reader uses, and whether they agree."""

    collection: str
    publication: Publication | None
    catalogue_passages: int
    catalogue_digest: str

    @property
    def consistent(self) -> bool:
        return self.publication is not None and self.publication.digest == self.catalogue_digest

    def describe(self) -> str:
        p = self.publication
        if p is None:
            return (
                f"index of {self.collection!r}: no published version (indexed before publication records "
                f"existed, or never); using the newest LanceDB version; re-run `rag index -c {self.collection}`"
            )
        head = f"index of {self.collection!r}: {p.table_name} v{p.version} (tag {p.tag}, {p.passages} passages)"
        if self.consistent:
            return f"{head}, consistent with the catalogue's {self.catalogue_passages} passages"
        return (
            f"{head} LAGS the catalogue's {self.catalogue_passages} passages (a run stopped between the two "
            f"stores); answers use the published version; re-run `rag index -c {self.collection}`"
        )


def index_pairing(con: duckdb.DuckDBPyConnection, collection: str) -> IndexPairing:
    pairs = catalogue_passages(con, collection)
    return IndexPairing(collection, load_publication(con, collection), len(pairs), passages_digest(pairs))


@dataclass(frozen=True, slots=True)
class IndexPin:
    """The (catalogue passages, LanceDB version) pair a collection's answers read."""

    collection: str
    table: str | None
    version: int | None
    tag: str | None
    passages: int
    consistent: bool
    note: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "table": self.table,
            "version": self.version,
            "tag": self.tag,
            "passages": self.passages,
            "consistent": self.consistent,
            "note": self.note,
        }

    def index_info(self) -> dict[str, Any]:
        """The `versions.index` of an answer read from this pair."""
        return {
            "table": self.table,
            "version": self.version,
            "tag": self.tag,
            "consistent_with_catalogue": self.consistent,
        }


def pin_index(con: duckdb.DuckDBPyConnection, collection: str) -> IndexPin:
    """The collection's published LanceDB version and whether the catalogue's passages agree."""
    pairing = index_pairing(con, collection)
    p = pairing.publication
    return IndexPin(
        collection=collection,
        table=p.table_name if p else None,
        version=p.version if p else None,
        tag=p.tag if p else None,
        passages=pairing.catalogue_passages,
        consistent=pairing.consistent,
        note=pairing.describe(),
    )


@dataclass(frozen=True, slots=True)
class StoreAgreement:
    """How one collection's catalogue passages and LanceDB rows compare."""

    collection: str
    catalogue_passages: int
    index_rows: int
    missing_from_index: tuple[str, ...]
    not_in_catalogue: tuple[str, ...]
    duplicate_rows: int
    publication: Publication | None
    published_matches: bool

    @property
    def agree(self) -> bool:
        return (
            not self.missing_from_index
            and not self.not_in_catalogue
            and not self.duplicate_rows
            and self.published_matches
        )


def compare_stores(
    collection: str, catalogue_pairs: list[tuple[str, str]], index_pairs: list[tuple[str, str]], publication
) -> StoreAgreement:
    """Compare (passage id, content hash) pairs of the two stores and the publication record."""
    expected, actual = set(catalogue_pairs), set(index_pairs)
    return StoreAgreement(
        collection=collection,
        catalogue_passages=len(catalogue_pairs),
        index_rows=len(index_pairs),
        missing_from_index=tuple(sorted(pid for pid, _ in expected - actual)),
        not_in_catalogue=tuple(sorted(pid for pid, _ in actual - expected)),
        duplicate_rows=len(index_pairs) - len(actual),
        publication=publication,
        published_matches=publication is not None and publication.digest == passages_digest(catalogue_pairs),
    )
