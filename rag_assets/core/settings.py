"""Every environment variable the project reads, read here and nowhere else, as small typed
functions; and the layout of the data folder, derived here once.

| variable | default | function | what |
|---|---|---|---|
| `DAGSTER_HOME` | `<project>/dagster_home` | `dagster_home()`, `export_dagster_home()` | Dagster's instance; parent of the default data folder |
| `RAG_DATA_DIR` | `$DAGSTER_HOME/data` | `data_dir()`, `data_dir_is_set()` | catalogue, index, models, routers, reports |
| `RAG_COLLECTIONS` | `<project>/collections.yaml` | `collections_file()` | the collections file |
| `RAG_LANCEDB_URI` | `<data dir>/lancedb` | `lancedb_uri()` | the passage index (a folder, s3://...) |
| `RAG_LOCK_TIMEOUT` | 120 (seconds) | `lock_timeout_s()` | how long a command waits for a busy catalogue |
| `RAG_RUN_CONFIG` | none | `run_config_file()` | asset config YAML for `rag run` and the cluster run |
| `RAG_DEBUG` | off | `debug_enabled()` | print the traceback of a command's error |
| `RAG_SERVICE_URL` | none | `service_url()` | the running `rag serve` the CLI sends its queries to |
| `RAG_SERVICE_TOKEN` | none | `service_token()` | the API token the CLI sends to that service |
| `RAG_EXECUTOR` | `in_process` | `executor_kind()` | `in_process`, `multiprocess`, `celery` or `k8s` |
| `RAG_CELERY_BROKER` | none | `celery_broker()` | the Celery executor's broker |
| `RAG_CELERY_BACKEND` | the broker | `celery_backend()` | the Celery executor's result backend |
| `RAG_REINDEX_CRON` | `0 3 * * *` | `reindex_cron()` | the reindex schedule |
| `RAG_PIPELINE_NICE` | 10 | `pipeline_niceness()` | the CPU priority (niceness) of pipeline processes |
| `RAG_BASE_MODEL` | empty: the packaged SmolLM2 | `base_model_path()` | a local Hugging Face model folder |
| `RAG_LLM_BACKEND` | `transformers` | `llm_backend()` | `transformers`, `vllm` or `openai` |
| `RAG_OPENAI_BASE_URL` | empty | `openai_base_url()` | the OpenAI-compatible endpoint (…/v1) |
| `RAG_OPENAI_MODEL` | empty | `openai_model()` | the served model name |
| `RAG_OPENAI_API_KEY` | empty | `openai_api_key()` | the key, read when the engine starts |
| `RAG_CLUSTER_DATA_DIR` | `<cluster state>/../data-cluster` | `cluster_data_dir()` | the cluster profile's data folder |

The data folder: `catalogue_file()` (the DuckDB catalogue), `lancedb_uri()`, `models_dir()` (the
converted base model), `adapters_dir()` (router adapters), `rerankers_dir()` (passage
rerankers), `reports_root()` (evaluation reports, `latest_summary_path()`).

The collections file: `load_collections()` reads and validates it (YAML; every problem is one
`CollectionsFileError` naming the file, the entry and the problem).

Values are read on every call, never cached: tests and commands set variables at run time.
Variables that configure third-party libraries (HF_HUB_OFFLINE, TRANSFORMERS_OFFLINE,
GX_ANALYTICS_ENABLED) are set where those libraries are imported, not here. No Dagster import:
the CLI's light commands and the core read these too.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rag_assets.core.errors import ConfigError

if TYPE_CHECKING:
    from rag_assets.core.corpus.sources import CollectionSpec

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_COLLECTIONS_FILE = PROJECT_ROOT / "collections.yaml"
CATALOGUE_FILE_NAME = "catalogue.duckdb"

LOCK_TIMEOUT_ENV = "RAG_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT_S = 120.0
SERVICE_URL_ENV = "RAG_SERVICE_URL"
EXECUTOR_ENV = "RAG_EXECUTOR"
API_KEY_ENV = "RAG_OPENAI_API_KEY"


# --- where things are -------------------------------------------------------------------------


def dagster_home() -> Path:
    """DAGSTER_HOME, else the project's dagster_home folder."""
    return Path(os.environ.get("DAGSTER_HOME") or PROJECT_ROOT / "dagster_home")


def export_dagster_home() -> Path:
    """`dagster_home()`, also set as DAGSTER_HOME when unset, so that Dagster's instance (which
    reads the variable itself) is the one the command checked."""
    return Path(os.environ.setdefault("DAGSTER_HOME", str(dagster_home())))


def data_dir_is_set() -> bool:
    """Whether RAG_DATA_DIR names the data folder (else it is derived from DAGSTER_HOME)."""
    return bool(os.environ.get("RAG_DATA_DIR"))


def data_dir() -> Path:
    """Runtime data (catalogue, vector index, models, reports); git-ignored."""
    return Path(os.environ.get("RAG_DATA_DIR") or dagster_home() / "data")


def catalogue_file() -> Path:
    """The DuckDB catalogue: every table of every stage."""
    return data_dir() / CATALOGUE_FILE_NAME


def lancedb_uri() -> str:
    """The LanceDB passage index: RAG_LANCEDB_URI (e.g. s3://bucket/lancedb for workers on
    several machines), else <data dir>/lancedb."""
    return os.environ.get("RAG_LANCEDB_URI") or str(data_dir() / "lancedb")


def models_dir() -> Path:
    """Base-model checkpoints converted once from their packages."""
    return data_dir() / "models"


def adapters_dir() -> Path:
    """Trained router adapters."""
    return data_dir() / "adapters"


def rerankers_dir() -> Path:
    """Trained passage rerankers."""
    return data_dir() / "rerankers"


def reports_root() -> Path:
    """Evaluation reports: <reports root>/<collection>/<run id>/ and .../latest/."""
    return data_dir() / "reports"


def latest_summary_path(collection: str) -> Path:
    """The collection's latest evaluation summary: <reports root>/<collection>/latest/summary.json."""
    return reports_root() / collection / "latest" / "summary.json"


def collections_file() -> Path:
    """RAG_COLLECTIONS, else collections.yaml at the project root."""
    return Path(os.environ.get("RAG_COLLECTIONS") or DEFAULT_COLLECTIONS_FILE)


def run_config_file() -> Path | None:
    """RAG_RUN_CONFIG: the asset config YAML used when no --config is given, or None."""
    raw = os.environ.get("RAG_RUN_CONFIG")
    return Path(raw) if raw else None


def cluster_data_dir(state_dir: Path) -> Path:
    """The cluster profile's data folder: RAG_CLUSTER_DATA_DIR, else next to its state folder."""
    return Path(os.environ.get("RAG_CLUSTER_DATA_DIR") or state_dir.parent / "data-cluster")


# --- how commands behave ----------------------------------------------------------------------


def lock_timeout_s() -> float:
    """Seconds a command waits for a busy catalogue: RAG_LOCK_TIMEOUT, else 120."""
    raw = os.environ.get(LOCK_TIMEOUT_ENV)
    try:
        return float(raw) if raw else DEFAULT_LOCK_TIMEOUT_S
    except ValueError:
        raise ConfigError(f"{LOCK_TIMEOUT_ENV}={raw!r} is not a number of seconds") from None


def debug_enabled() -> bool:
    """RAG_DEBUG set (to anything non-empty): errors also print their traceback."""
    return bool(os.environ.get("RAG_DEBUG"))


def service_url() -> str | None:
    """The service the CLI talks to (RAG_SERVICE_URL, e.g. http://127.0.0.1:8765), or None."""
    url = os.environ.get(SERVICE_URL_ENV, "").strip()
    return url.rstrip("/") or None


def service_token() -> str | None:
    """The API token the CLI sends to the service (RAG_SERVICE_TOKEN), or None."""
    return os.environ.get("RAG_SERVICE_TOKEN", "").strip() or None


# --- how the graph is deployed (read when the definitions load) -------------------------------


def executor_kind() -> str:
    """RAG_EXECUTOR, lower-cased: in_process (the default), multiprocess, celery or k8s."""
    return os.environ.get(EXECUTOR_ENV, "in_process").strip().lower() or "in_process"


def celery_broker() -> str:
    """RAG_CELERY_BROKER (empty when unset)."""
    return os.environ.get("RAG_CELERY_BROKER", "")


def celery_backend() -> str:
    """RAG_CELERY_BACKEND, else the broker."""
    return os.environ.get("RAG_CELERY_BACKEND", celery_broker())


def reindex_cron() -> str:
    """RAG_REINDEX_CRON, else daily at 03:00."""
    return os.environ.get("RAG_REINDEX_CRON", "0 3 * * *")


PIPELINE_NICE_ENV = "RAG_PIPELINE_NICE"
DEFAULT_PIPELINE_NICENESS = 10


def pipeline_niceness() -> int:
    """RAG_PIPELINE_NICE: the niceness (0-19) every process that loads the pipeline runs at, so a
    service on the same machine is scheduled first (`core.process_priority`); 0 keeps the normal
    priority."""
    raw = os.environ.get(PIPELINE_NICE_ENV, "").strip()
    if not raw:
        return DEFAULT_PIPELINE_NICENESS
    if not re.fullmatch(r"\d+", raw) or int(raw) > 19:
        raise ConfigError(f"{PIPELINE_NICE_ENV}={raw!r}: expected a niceness from 0 (normal priority) to 19 (lowest)")
    return int(raw)


# --- which models ---------------------------------------------------------------------------


def base_model_path() -> str:
    """RAG_BASE_MODEL: a local Hugging Face model folder; empty = the packaged SmolLM2."""
    return os.environ.get("RAG_BASE_MODEL", "")


def llm_backend() -> str:
    """RAG_LLM_BACKEND, else transformers (checked against the backends by the LLM resource)."""
    return os.environ.get("RAG_LLM_BACKEND", "transformers")


def openai_base_url() -> str:
    return os.environ.get("RAG_OPENAI_BASE_URL", "")


def openai_model() -> str:
    return os.environ.get("RAG_OPENAI_MODEL", "")


def openai_api_key() -> str:
    """RAG_OPENAI_API_KEY, read when the engine starts; never stored in a resource's config."""
    return os.environ.get(API_KEY_ENV, "")


# --- which collections (the collections file) -------------------------------------------------
# Read when the code location loads: collections are the partitions of every per-collection asset
# and Dagster needs partitions at definition time. The corpus modules (and YAML) are imported in
# the functions that use them, so a light command that only reads a variable does not load the
# parsers' libraries.


_ENTRY_KEYS = ("name", "path", "format", "questions")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_UNSET_VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")


class CollectionsFileError(ConfigError):
    """The collections file cannot be used; the message names the file, the entry and the problem."""


def load_collections(path: Path | None = None) -> list[CollectionSpec]:
    """Parse and validate the collections file, before any run: every entry needs a valid name, a
    path that exists (a file, a folder, a glob matching something, or a built-in source) and a
    known format. Relative paths are relative to the file's folder. Any problem raises one
    `CollectionsFileError` naming the file and the entry."""
    import yaml

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
    from rag_assets.core.corpus.parsers import FORMATS
    from rag_assets.core.corpus.sources import AUTO, PAGE_FORMATS, CollectionSpec

    known_formats = (AUTO, *FORMATS, *PAGE_FORMATS)
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
    if fmt not in known_formats:
        raise fail(f"unknown format {fmt!r}; expected one of {', '.join(known_formats)}")
    where = _source_path(path, where, fail)
    questions = _questions_path(path, entry.get("questions"), fail)
    return CollectionSpec(name=name, path=where, format=fmt, questions=questions)


def _source_path(collections: Path, raw: str, fail: Callable[[str], CollectionsFileError]) -> str:
    """The entry's documents: a built-in source, a glob that matches a file, or an existing path."""
    from rag_assets.core.corpus.sources import BUILTIN_PYTHON_REFERENCE

    builtin_sources = (BUILTIN_PYTHON_REFERENCE,)
    where = _resolve(collections, _expand(raw, fail, "path"))
    if where.startswith("builtin:"):
        if where not in builtin_sources:
            raise fail(f"unknown built-in source {where!r}; expected one of {', '.join(builtin_sources)}")
    elif any(ch in where for ch in "*?["):
        if not any(Path(p).is_file() for p in glob.iglob(where, recursive=True)):
            raise fail(f"path {where} matches no file")
    elif not Path(where).exists():
        raise fail(f"path {where} does not exist")
    return where


def _questions_path(collections: Path, raw: object, fail: Callable[[str], CollectionsFileError]) -> str | None:
    """The entry's optional question set: a built-in set or an existing JSONL file."""
    from rag_assets.core.corpus.question_sets import BUILTIN_PYTHON_REFERENCE_QUESTIONS

    builtin_questions = (BUILTIN_PYTHON_REFERENCE_QUESTIONS,)
    if raw is None:
        return None
    if not isinstance(raw, str) or not raw.strip():
        raise fail("'questions' must be a JSONL file or builtin:python-reference-questions")
    questions = _resolve(collections, _expand(raw, fail, "questions"))
    if questions.startswith("builtin:"):
        if questions not in builtin_questions:
            raise fail(f"unknown built-in question set {questions!r}; expected {', '.join(builtin_questions)}")
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
