"""The routing tables' reads (store/routing_tables.py) on a real DuckDB catalogue."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from rag_assets.core.store.collections import replace_collection
from rag_assets.core.store.routing_tables import load_labelled_rows, load_subtree_rows, load_usable_targets
from rag_assets.core.store.schemas import ROUTING_ACTIONS_ARROW_SCHEMA

SUBTREE_COLUMNS = ("subtree_id", "qid", "query", "doc_id", "view", "rendered")


def _catalogue(path: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(str(path / "catalogue.duckdb"))
    ids = ["s3", "s1", "s2", "s4"]
    subtrees = pa.table(
        {
            "collection": ["c"] * 4,
            "subtree_id": ids,
            "qid": ["q3", "q1", "q2", "q4"],
            "query": ["three", "one", "two", "four"],
            "doc_id": ["d"] * 4,
            "view": ["initial"] * 4,
            "rendered": [f"view {i}" for i in ids],
            "visible_ids": [[0, 1]] * 4,
            "collapsed_ids": [[]] * 4,
            "seen_ids": [[1]] * 4,
        },
        schema=pa.schema(
            [
                *[(n, pa.string()) for n in ("collection", *SUBTREE_COLUMNS)],
                *[(n, pa.list_(pa.int32())) for n in ("visible_ids", "collapsed_ids", "seen_ids")],
            ]
        ),
    )
    actions = pa.table(
        {
            "collection": ["c"] * 4,
            "subtree_id": ids,
            "qid": ["q3", "q1", "q2", "q4"],
            "fold": ["train", "train", "validation", "train"],
            "teacher": ["oracle"] * 4,
            "target": ["[ANSWER] 1", "[ANSWER] 1", "Cannot answer", "garbled"],
            "answer_ids": [[1], [1], [], []],
            "expand_ids": [[], [], [], []],
            "kind": ["answer", "answer", "refuse", "failed"],
            "raw": ["", "", "", "garbled"],
        },
        schema=ROUTING_ACTIONS_ARROW_SCHEMA,
    )
    replace_collection(con, "c", {"routing_subtrees": subtrees, "routing_actions": actions})
    return con


def test_labelled_rows_leave_out_failed_labels_filter_by_fold_and_keep_subtree_order(tmp_path: Path) -> None:
    con = _catalogue(tmp_path)
    rows = load_labelled_rows(con, "c", ["subtree_id", "query"], ["target", "answer_ids"])
    assert rows == [
        ("s1", "one", "[ANSWER] 1", [1]),
        ("s2", "two", "Cannot answer", []),
        ("s3", "three", "[ANSWER] 1", [1]),
    ]
    assert [r[0] for r in load_labelled_rows(con, "c", ["subtree_id"], [], fold="train")] == ["s1", "s3"]
    assert [r[0] for r in load_labelled_rows(con, "c", ["subtree_id"], [], limit=1)] == ["s1"]
    assert load_usable_targets(con, "c", ["subtree_id"]) == [
        ("s1", "[ANSWER] 1"),
        ("s2", "Cannot answer"),
        ("s3", "[ANSWER] 1"),
    ]


def test_subtree_rows_in_subtree_order_and_unknown_columns_refused(tmp_path: Path) -> None:
    con = _catalogue(tmp_path)
    assert [r[0] for r in load_subtree_rows(con, "c", SUBTREE_COLUMNS)] == ["s1", "s2", "s3", "s4"]
    with pytest.raises(ValueError, match="routing_subtrees has no column"):
        load_subtree_rows(con, "c", ["subtree_id", "nope"])
    with pytest.raises(ValueError, match="routing_actions has no column"):
        load_labelled_rows(con, "c", ["subtree_id"], ["nope"])


def test_usable_targets_empty_before_the_routing_tables_exist(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "empty.duckdb"))
    assert load_usable_targets(con, "c", ["subtree_id"]) == []
