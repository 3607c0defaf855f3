"""The passage index: LanceDB rows of passage + ids + vector, with a native full-text index.

Re-indexing is incremental: a passage whose content hash and place (node ids, spans) are unchanged
is neither re-embedded nor rewritten; one whose text is unchanged at another place (an edit earlier
in its document shifted its offsets) is rewritten with its stored vector, so its citations point at
the new place; new and changed passages are embedded and upserted with `merge_insert`, and passages
of a collection that disappeared are deleted. Every LanceDB write is a new table version (the previous one stays
readable until it is cleaned up), and each published version is tagged so answers can cite it.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TypeVar

import numpy as np
import pyarrow as pa

from rag_assets.core.index.embedding import Embedder
from rag_assets.core.index.passages import Passage, passage_columns
from rag_assets.core.store.schemas import passage_index_schema

DEFAULT_TABLE = "passages"
_DELETE_CHUNK = 500
_COMMIT_ATTEMPTS = 8

T = TypeVar("T")


def is_commit_conflict(error: BaseException) -> bool:
    """Lance commits optimistically: a writer preempted by another one's commit may retry."""
    text = str(error).lower()
    return "commit conflict" in text or "retryable" in text or "preempted by concurrent" in text


def retry_commit(
    write: Callable[[], T], *, attempts: int = _COMMIT_ATTEMPTS, on_retry: Callable[[], None] = lambda: None
) -> T:
    """Run one LanceDB write, again after a commit conflict with a concurrent writer (another
    collection's step on the same table). Only idempotent writes go through here: merge_insert
    keyed on passage_id, deletes by id, index rebuilds, tag moves."""
    for attempt in range(1, attempts + 1):
        try:
            return write()
        except (RuntimeError, OSError, ValueError) as error:
            if attempt == attempts or not is_commit_conflict(error):
                raise
            on_retry()
            time.sleep(min(0.1 * 2**attempt, 3.0) * random.uniform(0.5, 1.0))
    raise AssertionError("unreachable")


def sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _place(passage: Passage) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...]]:
    return tuple(passage.node_ids), tuple(passage.spans)


def _places(rows: pa.Table) -> list[tuple[tuple[int, ...], tuple[tuple[int, int], ...]]]:
    """(node ids, spans) of each stored row, as `_place` gives them for a passage."""
    return [
        (tuple(nodes), tuple(zip(starts, ends, strict=True)))
        for nodes, starts, ends in zip(
            rows["node_ids"].to_pylist(), rows["span_starts"].to_pylist(), rows["span_ends"].to_pylist(), strict=True
        )
    ]


def search_text(passage_heading: Sequence[str], text: str) -> str:
    """What is embedded and full-text indexed: the heading path gives a passage its context
    (the document title and section names), which the bare paragraph often lacks."""
    return " > ".join(passage_heading) + "\n" + text


@dataclass(slots=True)
class SyncReport:
    table_name: str
    version: int
    tag: str | None
    added: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    embedded_ids: list[str] = field(default_factory=list)
    moved: int = 0  # same text at another place: rows rewritten with their stored vectors
    rows_in_collection: int = 0
    commit_retries: int = 0  # commits retried after a concurrent writer's commit preempted them


@dataclass(slots=True)
class CleanupReport:
    tags_deleted: list[str]
    versions_before: int
    versions_after: int
    bytes_removed: int


def spare_tagged_versions(older_than: timedelta, versions: list[dict], tagged: set[int]) -> timedelta:
    """The cleanup age to ask Lance for: `older_than`, stretched so that no tagged version falls
    under it. Lance refuses the whole cleanup when a tagged version is older than the cutoff
    ("tagged version(s) have been marked for cleanup"), which would fail every index sync once
    the oldest kept publication is older than the retention; untagged versions older than the
    oldest tag are still removed."""
    stamps = [v["timestamp"] for v in versions if v["version"] in tagged]
    if not stamps:
        return older_than
    oldest = min(stamps)
    now = datetime.now(oldest.tzinfo) if oldest.tzinfo else datetime.now()
    return max(older_than, now - oldest + timedelta(minutes=1))


class PassageIndex:
    def __init__(self, uri: str | Path, embedder: Embedder, *, table_name: str = DEFAULT_TABLE) -> None:
        import lancedb

        self.uri = str(uri)
        self.embedder = embedder
        self.table_name = table_name
        self.db = lancedb.connect(self.uri)
        self.pinned_version: int | None = None

    def pin(self, version: int | None) -> PassageIndex:
        """Read the table as of `version` from now on (None: the newest); a pinned index is for
        reading only. Readers pin the version published with the catalogue's passages."""
        self.pinned_version = version
        return self

    def schema(self) -> pa.Schema:
        return passage_index_schema(self.embedder.dimension)

    def exists(self) -> bool:
        return self.table_name in self.db.list_tables().tables

    @property
    def table(self):
        if not self.exists():
            raise FileNotFoundError(
                f"no passage index table {self.table_name!r} in {self.uri}: materialize `passage_index` "
                "first (`rag run`)"
            )
        table = self.db.open_table(self.table_name)
        if self.pinned_version is not None:
            table.checkout(self.pinned_version)
        return table

    def _scan(self, columns: list[str], where: str | None = None) -> pa.Table:
        """Only these columns of the (filtered) rows: vectors stay on disk unless asked for."""
        table = self.table
        total = table.count_rows(where) if where else table.count_rows()
        if total == 0:
            return pa.table({c: pa.array([], self.schema().field(c).type) for c in columns})
        query = table.search().select(columns)
        if where:
            query = query.where(where)
        return query.limit(total).to_arrow()

    def scan(self, columns: list[str], where: str | None = None) -> pa.Table:
        """These columns of every (filtered) row, e.g. the vectors namespace routing averages."""
        return self._scan(columns, where)

    def _rows(self, passages: Sequence[Passage], collection: str, vectors: np.ndarray) -> pa.Table:
        columns = passage_columns(passages, collection)
        columns["search_text"] = [search_text(p.heading_path, p.text) for p in passages]
        columns["vector"] = pa.FixedSizeListArray.from_arrays(
            pa.array(vectors.reshape(-1), pa.float32()), self.embedder.dimension
        )
        return pa.Table.from_pydict({f.name: columns[f.name] for f in self.schema()}, schema=self.schema())

    def sync(self, passages: Sequence[Passage], collection: str, *, tag: str | None = None) -> SyncReport:
        """Make the collection's rows equal `passages`, embedding only what is new or changed."""
        if self.pinned_version is not None:
            raise ValueError(f"the passage index is pinned at version {self.pinned_version}: it is read-only")
        table = self.db.create_table(self.table_name, schema=self.schema(), exist_ok=True)
        where = f"collection = {sql_string(collection)}"
        existing = self._scan(["passage_id", "content_hash", "node_ids", "span_starts", "span_ends"], where)
        old = dict(zip(existing["passage_id"].to_pylist(), existing["content_hash"].to_pylist()))
        places = dict(zip(existing["passage_id"].to_pylist(), _places(existing)))
        wanted = {p.passage_id: p for p in passages}
        if len(wanted) != len(passages):
            raise ValueError(f"duplicate passage ids in collection {collection!r}")
        changed = [p for p in passages if old.get(p.passage_id) != p.content_hash]
        # the same text at another place (an edit earlier in its document shifted its offsets, or
        # renumbered its nodes): its row must cite the new place, with the vector it already has
        moved = [p for p in passages if old.get(p.passage_id) == p.content_hash and places[p.passage_id] != _place(p)]
        report = SyncReport(
            self.table_name,
            table.version,
            None,
            added=sum(p.passage_id not in old for p in changed),
            updated=sum(p.passage_id in old for p in changed),
            unchanged=len(passages) - len(changed) - len(moved),
            embedded_ids=[p.passage_id for p in changed],
            moved=len(moved),
        )

        def conflict() -> None:
            # this handle still reads the version it opened: see the other writer's commit first
            report.commit_retries += 1
            table.checkout_latest()

        if changed or moved:
            self._upsert(table, collection, changed, moved, where, conflict)
        gone = sorted(set(old) - set(wanted))
        for start in range(0, len(gone), _DELETE_CHUNK):
            ids = ", ".join(sql_string(i) for i in gone[start : start + _DELETE_CHUNK])
            retry_commit(lambda ids=ids: table.delete(f"{where} AND passage_id IN ({ids})"), on_retry=conflict)
        report.deleted = len(gone)
        if changed or moved or gone or not self.has_fts_index():
            # create_index(config=FTS()) is the current native full-text index API (create_fts_index
            # is deprecated since lancedb 0.25).
            from lancedb.index import FTS

            retry_commit(lambda: table.create_index("search_text", config=FTS(), replace=True), on_retry=conflict)
        report.version = table.version
        if tag:

            def move_tag() -> None:
                if tag in table.tags.list():
                    table.tags.update(tag, report.version)
                else:
                    table.tags.create(tag, report.version)

            retry_commit(move_tag, on_retry=conflict)
            report.tag = tag
        report.rows_in_collection = table.count_rows(where)
        return report

    def _upsert(
        self,
        table: object,
        collection: str,
        changed: Sequence[Passage],
        moved: Sequence[Passage],
        where: str,
        on_retry: Callable[[], None],
    ) -> None:
        """Embed the changed passages, take the moved ones' stored vectors, and upsert both rows."""
        dimension = self.embedder.dimension
        vectors = np.zeros((0, dimension), dtype=np.float32)
        if changed:
            encoded = self.embedder.encode([search_text(p.heading_path, p.text) for p in changed])
            vectors = np.asarray(encoded, dtype=np.float32).reshape(len(changed), dimension)
        if moved:
            vectors = np.concatenate([vectors, self._vectors_of(moved, where)])
        rows = self._rows([*changed, *moved], collection, vectors)
        retry_commit(
            lambda: (
                table.merge_insert("passage_id").when_matched_update_all().when_not_matched_insert_all().execute(rows)
            ),
            on_retry=on_retry,
        )

    def _vectors_of(self, passages: Sequence[Passage], where: str) -> np.ndarray:
        """The stored vectors of these passages, in their order (read in chunks of ids)."""
        found: dict[str, np.ndarray] = {}
        ids = [p.passage_id for p in passages]
        for start in range(0, len(ids), _DELETE_CHUNK):
            chunk = ", ".join(sql_string(i) for i in ids[start : start + _DELETE_CHUNK])
            rows = self._scan(["passage_id", "vector"], f"{where} AND passage_id IN ({chunk})").to_pydict()
            found.update(zip(rows["passage_id"], (np.asarray(v, dtype=np.float32) for v in rows["vector"])))
        return np.stack([found[i] for i in ids])

    def passage_pairs(self, collection: str) -> list[tuple[str, str]]:
        """(passage id, content hash) of every row of `collection`, sorted (duplicates kept)."""
        if not self.exists():
            return []
        rows = self._scan(["passage_id", "content_hash"], f"collection = {sql_string(collection)}").to_pydict()
        return sorted(zip(rows["passage_id"], rows["content_hash"]))

    def cleanup(self, collection: str, *, keep_tags: int, older_than: timedelta) -> CleanupReport:
        """Drop the collection's publication tags but the newest `keep_tags`, then compact the
        table and delete every untagged version older than `older_than` (tagged versions, i.e.
        the published ones answers cite, stay readable)."""
        table = self.table
        own = sorted(
            ((info["version"], name) for name, info in table.tags.list().items() if name.startswith(f"{collection}-")),
            reverse=True,
        )
        dropped = [name for _, name in own[max(keep_tags, 1) :]]
        for name in dropped:
            table.tags.delete(name)
        versions = table.list_versions()
        before = len(versions)
        cutoff = spare_tagged_versions(older_than, versions, {info["version"] for info in table.tags.list().values()})
        # compaction is a commit too: another collection's sync may preempt it (retry on the newest version)
        stats = retry_commit(lambda: table.optimize(cleanup_older_than=cutoff), on_retry=table.checkout_latest)
        removed = getattr(getattr(stats, "prune", None), "bytes_removed", 0) or 0
        return CleanupReport(dropped, before, len(self.table.list_versions()), int(removed))

    def counts_by_collection(self) -> dict[str, int]:
        if not self.exists():
            return {}
        column = self._scan(["collection"]).column("collection").to_pylist()
        counts: dict[str, int] = {}
        for name in column:
            counts[name] = counts.get(name, 0) + 1
        return counts

    def check_vectors(self, collection: str | None = None) -> list[str]:
        """Passage ids (of one collection, or all) whose vector is not finite or not of the embedder's dimension."""
        if not self.exists():
            return []
        data = self._scan(["passage_id", "vector"], f"collection = {sql_string(collection)}" if collection else None)
        dimension = self.embedder.dimension
        if data.schema.field("vector").type.list_size != dimension:
            return [f"vector column has dimension {data.schema.field('vector').type.list_size}, model has {dimension}"]
        ids = data.column("passage_id").to_pylist()
        vectors = data.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False)
        finite = np.isfinite(vectors.reshape(len(ids), dimension)).all(axis=1) if ids else np.array([], bool)
        return [pid for pid, ok in zip(ids, finite) if not ok]

    def has_fts_index(self) -> bool:
        if not self.exists():
            return False
        return any(i.index_type == "FTS" for i in self.table.list_indices())

    def version(self) -> int:
        return self.table.version

    def tags(self) -> dict[str, int]:
        return {name: info["version"] for name, info in self.table.tags.list().items()}
