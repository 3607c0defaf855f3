"""Where the project keeps things, and which collections it ingests.

Collections are read from a YAML file (``collections.yaml`` at the project root by default, or
the file named by ``RAG_COLLECTIONS``) when the code location loads, because they are the
partitions of every per-collection asset and Dagster needs partitions at definition time.
"""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from rag_assets.core.sources import AUTO, BUILTIN_PYTHON_REFERENCE, CollectionSpec

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_COLLECTIONS_FILE = PROJECT_ROOT / "collections.yaml"


def dagster_home() -> Path:
    return Path(os.environ.get("DAGSTER_HOME") or PROJECT_ROOT / "dagster_home")


def data_dir() -> Path:
    """Runtime data (catalogue, vector index, models, reports); git-ignored."""
    return Path(os.environ.get("RAG_DATA_DIR") or dagster_home() / "data")


def collections_file() -> Path:
    return Path(os.environ.get("RAG_COLLECTIONS") or DEFAULT_COLLECTIONS_FILE)


def load_collections(path: Path | None = None) -> list[CollectionSpec]:
    """Parse the collections file; relative paths are relative to the file's folder."""
    path = path or collections_file()
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise FileNotFoundError(f"collections file {path} does not exist (set RAG_COLLECTIONS)") from None
    entries = raw.get("collections") if isinstance(raw, dict) else None
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{path}: expected a non-empty 'collections:' list of {{name, path, format}}")
    specs: list[CollectionSpec] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not entry.get("name") or not entry.get("path"):
            raise ValueError(f"{path}: collection #{i + 1} needs a 'name' and a 'path'")
        name, where = str(entry["name"]), os.path.expandvars(str(entry["path"]))
        if not name.replace("-", "").replace("_", "").isalnum():
            raise ValueError(f"{path}: collection name {name!r} may only hold letters, digits, '-' and '_'")
        if where != BUILTIN_PYTHON_REFERENCE and not Path(where).is_absolute():
            where = str((path.parent / where).resolve())
        questions = os.path.expandvars(str(entry["questions"])) if entry.get("questions") else None
        if questions and not questions.startswith("builtin:") and not Path(questions).is_absolute():
            questions = str((path.parent / questions).resolve())
        specs.append(CollectionSpec(name=name, path=where, format=str(entry.get("format", AUTO)), questions=questions))
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise ValueError(f"{path}: collection names must be unique, got {names}")
    return specs
