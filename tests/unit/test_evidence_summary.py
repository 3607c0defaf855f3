"""The evidence evaluation's arithmetic on hand-made rows: means, bootstrap intervals, paired
differences against rag-hybrid, the table, the stored rows (real DuckDB in tmp_path) and the
problems the asset check fails on."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from rag_assets.core.evaluation.evidence import (
    EvidenceRow,
    evidence_problems,
    evidence_table,
    evidence_title,
    summarise_evidence,
)
from rag_assets.core.store.evidence import load_evidence, store_evidence


def rows_of(
    strategy: str, hits: list[float], words: list[int], router: str = "", filled: bool = False
) -> list[EvidenceRow]:
    return [
        EvidenceRow(strategy, router, filled, f"q{i}", {"passage_hit": h}, w, 0.01)
        for i, (h, w) in enumerate(zip(hits, words))
    ]


BASE = rows_of("rag-hybrid", [1, 0, 1, 0] * 5, [100] * 20)
FILLED = rows_of("rdr2-encoder", [1, 1, 1, 0] * 5, [100] * 20, "encoder", True)
OWN = rows_of("rdr2-encoder own", [1, 0, 0, 0] * 5, [30] * 20, "encoder")


def test_means_intervals_and_paired_differences() -> None:
    summary = summarise_evidence(BASE + FILLED + OWN)
    assert summary is not None and summary.questions == 20 and summary.metrics == ["passage_hit"]
    assert list(summary.rows) == ["rag-hybrid", "rdr2-encoder", "rdr2-encoder own"]
    base = summary.rows["rag-hybrid"]["passage_hit"]
    assert base.mean == 0.5 and base.n == 20 and 0.2 < base.low < 0.5 < base.high < 0.8
    # every question rdr2 hits where rag-hybrid missed, once in four: +0.25, above 0 on 20 paired questions
    gain = summary.differences["rdr2-encoder"]["passage_hit"]
    assert gain.mean == 0.25 and gain.excludes_zero and gain.low > 0
    loss = summary.differences["rdr2-encoder own"]["passage_hit"]
    assert loss.mean == -0.25 and loss.high < 0
    assert summary.differences["rdr2-encoder own"]["words"].mean == -70
    assert summary.words_share("rdr2-encoder own") == pytest.approx(0.3)
    assert "rag-hybrid" not in summary.differences


def test_table_shows_intervals_shares_and_differences() -> None:
    summary = summarise_evidence(BASE + FILLED + OWN)
    header, rows = evidence_table(summary)
    assert header == [
        "strategy",
        "passage hit (95% CI)",
        "words (95% CI)",
        "words vs rag-hybrid",
        "Δ passage hit vs rag-hybrid (95% CI)",
        "s/question",
    ]
    base, _, own = rows
    assert base[0] == "rag-hybrid" and base[2] == "100 (100–100)" and base[3] == "100%" and base[4] == ""
    assert own[1].startswith("0.250 (") and own[3] == "30%" and own[4].startswith("-0.250 (")
    assert evidence_title(summary, "dev+test").startswith("Evidence without the reader: all 20 dev+test questions")


def test_differences_pair_questions_and_skip_missing_metrics() -> None:
    base = [EvidenceRow("rag-hybrid", "", False, "a", {"evidence_recall": 0.5}, 10, 0.0),
            EvidenceRow("rag-hybrid", "", False, "b", {}, 10, 0.0)]  # fmt: skip
    routed = [EvidenceRow("rdr2-oracle", "oracle", True, "a", {"evidence_recall": 1.0}, 8, 0.0),
              EvidenceRow("rdr2-oracle", "oracle", True, "b", {}, 4, 0.0)]  # fmt: skip
    summary = summarise_evidence(base + routed)
    assert summary.rows["rdr2-oracle"]["evidence_recall"].n == 1
    assert summary.differences["rdr2-oracle"]["evidence_recall"].mean == 0.5
    assert summary.differences["rdr2-oracle"]["words"].mean == -4
    assert summarise_evidence(routed) is None and summarise_evidence([]) is None


def test_problems_catch_missing_questions_broken_cap_and_bad_metrics() -> None:
    assert evidence_problems(BASE + FILLED + OWN) == []
    over = [EvidenceRow("rdr2-similarity", "similarity", True, "q0", {"passage_hit": 1.0}, 101, 0.0)]
    bad = [EvidenceRow("rdr2-oracle", "oracle", True, f"q{i}", {"passage_hit": 1.5 if i == 3 else 1.0}, 5, 0.0)
           for i in range(20)]  # fmt: skip
    problems = evidence_problems(BASE + over + bad)
    assert problems == [
        "rdr2-similarity: 19 of 20 questions missing (e.g. q1)",
        "rdr2-similarity: 1 questions over rag-hybrid's words (e.g. q0)",
        "rdr2-oracle: metrics outside [0, 1]: q3.passage_hit=1.5",
    ]
    assert evidence_problems(FILLED) == ["no rag-hybrid rows: nothing to compare against"]


def test_single_store_rows_are_held_to_the_single_store_baseline() -> None:
    # within its own filing rag-hybrid gives more words than on the shared store: the routed
    # single-store rows may use them, and cover only the questions that have a filing
    single = [
        EvidenceRow("rag-hybrid (single store)", "", False, f"q{i}", {"page_hit": 1.0}, 150, 0.0) for i in range(3)
    ]
    routed = [
        EvidenceRow("rdr2-encoder (single store)", "encoder", True, f"q{i}", {"page_hit": 1.0}, 140, 0.0)
        for i in range(3)
    ]
    assert evidence_problems(BASE + single + routed) == []
    over = [
        EvidenceRow("rdr2-oracle (single store)", "oracle", True, f"q{i}", {"page_hit": 1.0}, 151, 0.0)
        for i in range(3)
    ]
    assert evidence_problems(BASE + single + over) == [
        "rdr2-oracle (single store): 3 questions over rag-hybrid (single store)'s words (e.g. q0)"
    ]
    assert evidence_problems(BASE + routed) == [
        "rdr2-encoder (single store): no rag-hybrid (single store) rows to compare against"
    ]


def test_rows_searched_in_every_document_are_held_to_rag_hybrid_searched_there() -> None:
    # unsteered, rag-hybrid gives other words than steered: the routed rows' budgets are its
    every = [
        EvidenceRow("rag-hybrid (all documents)", "", False, f"q{i}", {"passage_hit": 0.0}, 120, 0.0) for i in range(20)
    ]
    routed = [
        EvidenceRow("rdr2-encoder (all documents)", "encoder", True, f"q{i}", {"passage_hit": 1.0}, 110, 0.0)
        for i in range(20)
    ]
    assert evidence_problems(BASE + every + routed) == []
    summary = summarise_evidence(BASE + every + routed)
    # compared with rag-hybrid in every document (+1.0), not the steered rag-hybrid (+0.5)
    assert summary.differences["rdr2-encoder (all documents)"]["passage_hit"].mean == 1.0
    assert summary.differences["rag-hybrid (all documents)"]["passage_hit"].mean == -0.5


def test_rows_stored_in_order_and_replaced_per_collection(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "catalogue.duckdb"))
    assert load_evidence(con, "a") == []
    when = datetime(2026, 11, 25, 21, 0)
    store_evidence(con, "a", BASE + OWN, run_id="r1", created_at=when)
    store_evidence(con, "b", FILLED, run_id="r1", created_at=when)
    assert load_evidence(con, "a") == BASE + OWN
    store_evidence(con, "a", FILLED[:2], run_id="r2", created_at=when)
    assert load_evidence(con, "a") == FILLED[:2] and load_evidence(con, "b") == FILLED
    # a metric a question has no gold for stays absent (NULL), not 0
    store_evidence(con, "c", [EvidenceRow("rag-hybrid", "", False, "x", {}, 3, 0.5)], run_id="r", created_at=when)
    assert load_evidence(con, "c")[0].metrics == {}
