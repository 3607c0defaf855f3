"""Which collections the project ingests, read from the collections file.

Collections are read from a YAML file (``collections.yaml`` at the project root by default, or
the file named by ``RAG_COLLECTIONS``) when the code location loads, because they are the
partitions of every per-collection asset and Dagster needs partitions at definition time. Where
things are (the data folder, the collections file) and every other environment variable are read
in `rag_assets.core.settings`.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Callable
from pathlib import Path

import yaml

from rag_assets.core.corpus.parsers import FORMATS
from rag_assets.core.corpus.question_sets import BUILTIN_PYTHON_REFERENCE_QUESTIONS
from rag_assets.core.corpus.sources import AUTO, BUILTIN_PYTHON_REFERENCE, PAGE_FORMATS, CollectionSpec
from rag_assets.core.errors import ConfigError
from rag_assets.core.settings import collections_file, reports_root


def latest_summary_path(collection: str) -> Path:
    return reports_root() / collection / "latest" / "summary.json"


_ENTRY_KEYS = ("name", "path", "format", "questions")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_UNSET_VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")
KNOWN_FORMATS = (AUTO, *FORMATS, *PAGE_FORMATS)
BUILTIN_SOURCES = (BUILTIN_PYTHON_REFERENCE,)
BUILTIN_QUESTIONS = (BUILTIN_PYTHON_REFERENCE_QUESTIONS,)


class CollectionsFileError(ConfigError):
    """The collections file cannot be used; the message names the file, the entry and the problem."""


def load_collections(path: Path | None = None) -> list[CollectionSpec]:
    """Parse and validate the collections file, before any run: every entry needs a valid name, a
    path that exists (a file, a folder, a glob matching something, or a built-in source) and a
    known format. Relative paths are relative to the file's folder. Any problem raises one
    `CollectionsFileError` naming the file and the entry."""
    path = Path(path or collections_file())
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CollectionsFileError(f"collections file {path} does not exist (set RAG_COLLECTIONS)") from None
    except (OSError, UnicodeDecodeError) as err:
        raise CollectionsFileError(f"collections file {path} cannot be read: {err}") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise CollectionsFileError(f"collections file {path} is not valid YAML{where}: {problem}") from None
    entries = raw.get("collections") if isinstance(raw, dict) else None
    if not isinstance(entries, list) or not entries:
        raise CollectionsFileError(
            f"collections file {path}: expected a non-empty 'collections:' list of {{name, path, format}} entries"
        )
    specs = [_collection_entry(path, i, entry) for i, entry in enumerate(entries, start=1)]
    seen: set[str] = set()
    for i, spec in enumerate(specs, start=1):
        if spec.name in seen:
            raise CollectionsFileError(
                f"collections file {path}, entry #{i}: collection name {spec.name!r} is used twice"
            )
        seen.add(spec.name)
    return specs


def _collection_entry(path: Path, number: int, entry: object) -> CollectionSpec:
    label = f"collections file {path}, entry #{number}"
    if not isinstance(entry, dict):
        raise CollectionsFileError(f"{label}: expected a mapping with name, path and format, got {entry!r}")
    if entry.get("name") is not None:
        label += f" ({entry['name']!r})"

    def fail(problem: str) -> CollectionsFileError:
        return CollectionsFileError(f"{label}: {problem}")

    unknown = sorted(str(k) for k in entry if k not in _ENTRY_KEYS)
    if unknown:
        raise fail(f"unknown key(s) {', '.join(unknown)}; expected {', '.join(_ENTRY_KEYS)}")
    name, where = entry.get("name"), entry.get("path")
    if not isinstance(name, str) or not _NAME.match(name):
        raise fail("'name' must be 1-64 letters, digits, '-' or '_', starting with a letter or digit")
    if not isinstance(where, str) or not where.strip():
        raise fail("'path' must be a file, a folder, a glob or builtin:python-reference")
    fmt = str(entry.get("format") or AUTO)
    if fmt not in KNOWN_FORMATS:
        raise fail(f"unknown format {fmt!r}; expected one of {', '.join(KNOWN_FORMATS)}")
    where = _source_path(path, where, fail)
    questions = _questions_path(path, entry.get("questions"), fail)
    return CollectionSpec(name=name, path=where, format=fmt, questions=questions)


def _source_path(collections: Path, raw: str, fail: Callable[[str], CollectionsFileError]) -> str:
    """The entry's documents: a built-in source, a glob that matches a file, or an existing path."""
    where = _resolve(collections, _expand(raw, fail, "path"))
    if where.startswith("builtin:"):
        if where not in BUILTIN_SOURCES:
            raise fail(f"unknown built-in source {where!r}; expected one of {', '.join(BUILTIN_SOURCES)}")
    elif any(ch in where for ch in "*?["):
        if not any(Path(p).is_file() for p in glob.iglob(where, recursive=True)):
            raise fail(f"path {where} matches no file")
    elif not Path(where).exists():
        raise fail(f"path {where} does not exist")
    return where


def _questions_path(collections: Path, raw: object, fail: Callable[[str], CollectionsFileError]) -> str | None:
    """The entry's optional question set: a built-in set or an existing JSONL file."""
    if raw is None:
        return None
    if not isinstance(raw, str) or not raw.strip():
        raise fail("'questions' must be a JSONL file or builtin:python-reference-questions")
    questions = _resolve(collections, _expand(raw, fail, "questions"))
    if questions.startswith("builtin:"):
        if questions not in BUILTIN_QUESTIONS:
            raise fail(f"unknown built-in question set {questions!r}; expected {', '.join(BUILTIN_QUESTIONS)}")
    elif not Path(questions).is_file():
        raise fail(f"questions file {questions} does not exist")
    return questions


def _expand(value: str, fail, key: str) -> str:
    expanded = os.path.expandvars(value)
    unset = _UNSET_VARIABLE.search(expanded)
    if unset:
        raise fail(f"{key} {value!r} uses the environment variable {unset.group(1)}, which is not set")
    return expanded


def _resolve(collections: Path, value: str) -> str:
    if value.startswith("builtin:") or Path(value).is_absolute():
        return value
    return str((collections.parent / value).resolve())
