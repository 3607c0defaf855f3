"""Copying each store while it is in use: a LanceDB table (versioned, its files never rewritten),
a Dagster sqlite database (sqlite's online backup API) and a published model folder (written
whole before it is published)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import lance

from rag_assets.core.errors import ConfigError

# The order a LanceDB table is copied in: a version's manifest is committed after the files it
# lists, and a tag after its version, so tags, then manifests, then the rest gives versions
# whose files are all there. The latest-version hint may name a version committed after the
# manifests were copied: it is left out (LanceDB then lists the manifests).
_LANCE_FIRST = ("_refs", "_versions")
_LANCE_HINT = "latest_version_hint.json"
# the published model folders of the data dir (core/settings.py and the training steps)
MODEL_FOLDERS = ("adapters", "models", "rerankers", "namespaces", "reorder")
DAGSTER_FILES = ("dagster.yaml", "workspace.yaml")


def lance_tables(uri: Path) -> list[Path]:
    """The LanceDB tables (`NAME.lance` folders) under `uri`."""
    return sorted(p for p in uri.glob("*.lance") if p.is_dir()) if uri.is_dir() else []


def lance_versions(table: Path) -> list[int]:
    """The versions of the LanceDB table folder `table`, oldest first."""
    return sorted(int(v["version"]) for v in lance.dataset(str(table)).versions())


def copy_lance_table(table: Path, target: Path) -> None:
    """Copy `table` to `target` while writers may append: tags, manifests, then the files they list."""
    parts = [table / name for name in _LANCE_FIRST] + sorted(p for p in table.iterdir() if p.name not in _LANCE_FIRST)
    for part in parts:
        if not part.exists():
            continue
        files = sorted(part.rglob("*")) if part.is_dir() else [part]
        for source in files:
            if source.is_dir() or source.name == _LANCE_HINT:
                continue
            copy = target / source.relative_to(table)
            copy.parent.mkdir(parents=True, exist_ok=True)
            try:
                shutil.copy2(source, copy)
            except FileNotFoundError:
                raise ConfigError(
                    f"{source} was removed while it was being backed up (an index clean-up ran): back up again"
                ) from None


def copy_sqlite(source: Path, target: Path) -> None:
    """A consistent copy of a sqlite database in use (Dagster's run, event and schedule storage)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    try:
        dst = sqlite3.connect(target)
        try:
            src.backup(dst)
        finally:
            dst.close()
    finally:
        src.close()


def dagster_databases(home: Path, skip: Path) -> list[Path]:
    """The sqlite databases of the Dagster instance at `home`; not those under `skip` (the data dir,
    by default DAGSTER_HOME/data) when it lies inside `home`."""
    if not home.is_dir():
        return []
    home, skip = home.resolve(), skip.resolve()
    inside = skip != home and skip.is_relative_to(home)
    return sorted(p for p in home.rglob("*.db") if p.is_file() and not (inside and p.is_relative_to(skip)))


def copy_tree(source: Path, target: Path) -> None:
    if source.is_dir():
        shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True)
