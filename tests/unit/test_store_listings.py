"""The store's listings the benchmarks and `rag run`'s report read: which collections have
questions, and how many trained routers a collection has published."""

from __future__ import annotations

import duckdb
import pytest

from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.store.collections import replace_collection, stage_counts
from rag_assets.core.store.published_models import PublishedModel, publish_models
from rag_assets.core.store.question_table import question_collections, questions_table

pytestmark = pytest.mark.unit


def test_question_collections_lists_each_collection_once_sorted(tmp_path) -> None:
    with duckdb.connect(str(tmp_path / "c.duckdb")) as con:
        assert question_collections(con) == []  # no questions table yet
        for name in ("zeta", "alpha"):
            asked = [Question(f"{name}-{i}", f"question {i}?") for i in range(3)]
            replace_collection(con, name, {"questions": questions_table(name, asked)})
        assert question_collections(con) == ["alpha", "zeta"]
        assert question_collections(con, table="synthetic_questions") == []
        with pytest.raises(ValueError, match="not a question table"):
            question_collections(con, table="passages")


def test_the_run_report_counts_the_published_trained_routers(tmp_path) -> None:
    with duckdb.connect(str(tmp_path / "c.duckdb")) as con:
        publish_models(
            con,
            "tiny",
            [
                PublishedModel("encoder", "enc-1", "/adapters/enc-1"),
                PublishedModel("llm", "lora-1", "/adapters/lora-1"),
                PublishedModel("similarity", details={"answer": 0.5, "expand": 0.4}),  # untrained: not counted
            ],
            kinds=("encoder", "llm", "similarity"),
        )
        publish_models(con, "other", [PublishedModel("encoder", "enc-2", "/adapters/enc-2")], kinds=("encoder",))
        assert stage_counts(con, "tiny")["trained routers"] == 2
        # a retraining replaces the published routers: they are counted once, as published now
        publish_models(con, "tiny", [PublishedModel("encoder", "enc-3", "/adapters/enc-3")], kinds=("encoder", "llm"))
        assert stage_counts(con, "tiny")["trained routers"] == 1
