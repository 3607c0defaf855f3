"""What several benchmarks share: the catalogue they read, the models a session answers with, a
collection's session and questions, and the `--variants` parser.

Benchmarks read the catalogue as everything else does (`catalogue_connection`, the store's
functions) and answer through the answering session the assets answer through
(`open_session`, with the assets' models), so a figure measures what the pipeline runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag_assets.core.answering.policy.sessions import open_session
from rag_assets.core.answering.session import AnsweringSession
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.settings import CATALOGUE_FILE_NAME, catalogue_file
from rag_assets.core.store.connections import catalogue_connection
from rag_assets.core.store.question_table import load_question_rows

if TYPE_CHECKING:  # the resources import Dagster: loaded only by the benchmarks that answer
    from resources.session_models import ResourceModels


def catalogue_in(data_dir: Path | None = None) -> Path:
    """The catalogue file of `data_dir` (None: the configured one, RAG_DATA_DIR)."""
    return catalogue_file() if data_dir is None else data_dir / CATALOGUE_FILE_NAME


def project_resources() -> dict[str, Any]:
    """The code location's resources, without progress bars (nothing loads until used)."""
    from resources.project import project_resources as resources

    return resources(progress=False)


def session_models(resources: dict[str, Any] | None = None, **llm_changes: object) -> ResourceModels:
    """The models the assets answer with (`ResourceModels`), the LLM resource with `llm_changes`
    (e.g. batch_size)."""
    from resources.session_models import ResourceModels

    resources = resources or project_resources()
    llm = resources["llm"].model_copy(update=llm_changes) if llm_changes else resources["llm"]
    return ResourceModels(resources["embedder"], resources["vectors"], llm)


def open_collection(
    collection: str,
    splits: str = "dev,test",
    *,
    keep: Callable[[Question], bool] | None = None,
    models: ResourceModels | None = None,
) -> tuple[AnsweringSession, list[Question]]:
    """`collection`'s answering session (its trees, what was published for it, the questions of
    `splits` that `keep` keeps as the oracle's gold, in the order they are asked) and those
    questions, read from the configured catalogue."""
    with catalogue_connection(catalogue_file(), read_only=True) as con:
        questions = [q for q in dev_test(con, collection, splits.split(",")) if keep is None or keep(q)]
        session = open_session(con, collection, models or session_models(), gold=questions)
    return session, questions


def parse_variants(text: str, *, named: bool) -> list[tuple[str, dict[str, str]]]:
    """`key=value, ...; ...` -> [(label, {key: value})], values as written. With `named`, each
    variant is `name: key=value, ...` and labelled by its name; else by its own text."""
    variants = []
    for chunk in filter(None, (part.strip() for part in text.split(";"))):
        name, assignments = (part.strip() for part in chunk.partition(":")[::2]) if named else (chunk, chunk)
        pairs: dict[str, str] = {}
        for item in filter(None, (a.strip() for a in assignments.split(","))):
            key, sign, value = (part.strip() for part in item.partition("="))
            if not sign or not key or not value:
                raise SystemExit(f"variant {name!r}: {item!r} is not key=value")
            pairs[key] = value
        variants.append((name, pairs))
    return variants


def parse_value(text: str) -> object:
    """A variant's value as written: True / False, an int, a float, else the text."""
    if text in ("True", "False"):
        return text == "True"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def dev_test(con: Any, collection: str, splits: Sequence[str] = ("dev", "test")) -> list[Question]:
    """The collection's questions of `splits`, split by split."""
    return [q for split in splits for q in load_question_rows(con, collection, split)]


def use_data_dir(data_dir: Path | None) -> None:
    """Read the catalogue, index and models of `data_dir` from here on (it becomes RAG_DATA_DIR,
    before any resource is built); None: the configured folder."""
    if data_dir is not None:
        os.environ["RAG_DATA_DIR"] = str(data_dir.resolve())
