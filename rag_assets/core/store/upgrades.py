"""The catalogue's schema version and the in-place upgrade of an older catalogue.

Every catalogue records the layout it was written with in its one-row `catalogue_meta` table
(schemas.CATALOGUE_VERSION); one written before versions were recorded has no such row and reads
as version 1. `rag run`, `rag index`, `rag serve` and `rag ask` upgrade an older catalogue before
they use it: the file is copied first (checkpointed, under the write lock, beside it as
`catalogue.duckdb.v<N>.bak`), then every step runs in ONE transaction, so a failed or killed
upgrade leaves the catalogue as it was. A catalogue newer than this code is refused with one line.

The steps, each from the version before:
  1 -> 2: tables and columns added since are created; the published default answer form of kind
          `answer_form` becomes kind `answer_policy` (what the `answer_policy` asset publishes).
          Its relevance floor is kept (measured by the same rule then and now); its form was
          chosen by token F1, a rule since retired, so it becomes the quote (the default where
          nothing is measured, core/answering/policy/default_form.py) until `rag run` measures it
          again; the old row's own values are kept in its details under `migrated_from`.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from rag_assets.core.errors import ConfigError
from rag_assets.core.store.connections import catalogue_connection
from rag_assets.core.store.schemas import CATALOGUE_VERSION, META_TABLE
from rag_assets.core.store.transactions import ensure_schema, table_exists, transaction

RETIRED_FORM_KIND = "answer_form"  # version 1's kind of the published default answer form
POLICY_KIND = "answer_policy"  # published_models.KINDS' kind of it since version 2
UNMEASURED_FORM = "extractive"  # default_form.DEFAULT_FORM: the form where nothing is measured
# what the version-1 row's details said about the form choice (the rest is the relevance floor)
_RETIRED_FORM_DETAILS = ("metric", "generated", "extractive", "questions")


@dataclass(frozen=True, slots=True)
class Upgrade:
    """An upgrade done: from which version to which, and where the copy taken before it is."""

    path: Path
    from_version: int
    to_version: int
    backup: Path
    changed_rows: int

    @property
    def note(self) -> str:
        return (
            f"upgraded the catalogue {self.path} from schema version {self.from_version} to {self.to_version} "
            f"({self.changed_rows} published row(s) carried over; the copy from before: {self.backup})"
        )


def catalogue_version(con: duckdb.DuckDBPyConnection) -> int:
    """The schema version the catalogue was written with: its `catalogue_meta` row; without one,
    1 when it holds tables (written before versions were recorded), else the current version."""
    if table_exists(con, META_TABLE):
        row = con.execute(f"SELECT max(schema_version) FROM {META_TABLE}").fetchone()
        if row and row[0] is not None:
            return int(row[0])
    others = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name <> ?",
        [META_TABLE],
    ).fetchone()[0]
    return 1 if others else CATALOGUE_VERSION


def upgrade_catalogue(path: Path, *, on_wait: Callable[[str], None] | None = None) -> Upgrade | None:
    """Bring the catalogue at `path` to the current version in place (None: it already is, or
    there is none yet). ConfigError when it is newer than this code reads."""
    if not path.exists():
        return None
    with catalogue_connection(path, read_only=True, on_wait=on_wait) as con:
        version = catalogue_version(con)
    if version == CATALOGUE_VERSION:
        return None
    refuse_newer(path, version)
    with catalogue_connection(path, read_only=False, on_wait=on_wait) as con:
        version = catalogue_version(con)  # another process may have upgraded it meanwhile
        if version == CATALOGUE_VERSION:
            return None
        con.execute("CHECKPOINT")  # the file alone is the whole catalogue; nobody writes while we hold it
        backup = path.with_name(f"{path.name}.v{version}.bak")
        shutil.copy2(path, backup)
        with transaction(con):
            changed = _upgrade_steps(con, version)
    return Upgrade(path, version, CATALOGUE_VERSION, backup, changed)


def refuse_newer(path: Path, version: int) -> None:
    if version > CATALOGUE_VERSION:
        raise ConfigError(
            f"the catalogue {path} has schema version {version}, newer than this rag reads ({CATALOGUE_VERSION}): "
            "run the rag release that wrote it, or `rag restore` a backup taken with this one"
        )


def _upgrade_steps(con: duckdb.DuckDBPyConnection, version: int) -> int:
    """Every step from `version` to the current one, in the caller's transaction; rows changed."""
    changed = 0
    if version < 2:
        ensure_schema(con)
        changed += _answer_form_to_policy(con)
    con.execute(f"DELETE FROM {META_TABLE}")
    con.execute(f"INSERT INTO {META_TABLE} VALUES (?, ?)", [CATALOGUE_VERSION, datetime.now(UTC).replace(tzinfo=None)])
    return changed


def _answer_form_to_policy(con: duckdb.DuckDBPyConnection) -> int:
    """Version 1's `answer_form` rows become `answer_policy` rows, in place (no row added or lost);
    a collection that already has an `answer_policy` row keeps its old row as it was."""
    rows = con.execute(
        "SELECT rowid, collection, model_id, details FROM published_models WHERE kind = ? AND collection NOT IN "
        "(SELECT collection FROM published_models WHERE kind = ?)",
        [RETIRED_FORM_KIND, POLICY_KIND],
    ).fetchall()
    for rowid, _collection, model_id, details in rows:
        old = json.loads(details or "{}")
        floor = {k: v for k, v in old.items() if k not in _RETIRED_FORM_DETAILS}
        carried = {
            "measure": "right",
            "questions": 0,
            "generated_right": 0,
            "extractive_right": 0,
            **floor,
            "migrated_from": {"kind": RETIRED_FORM_KIND, "model_id": model_id, "details": old},
        }
        con.execute(
            "UPDATE published_models SET kind = ?, model_id = ?, details = ? WHERE rowid = ?",
            [POLICY_KIND, UNMEASURED_FORM, json.dumps(carried, sort_keys=True), rowid],
        )
    return len(rows)
