"""The results page's headline tables, generated from a report's summary.json (hand-made here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_assets.core.evaluation.results_page import (
    ResultsPageError,
    generated_block,
    headline_markdown,
    latest_summaries,
    write_generated,
)

pytestmark = pytest.mark.unit

SUMMARY = {
    "collection": "tiny",
    "created_at": "2026-01-02T03:04:05Z",
    "split": "test",
    "results": {"tiny": {"rag-hybrid": {"right": 0.5, "f1": 0.25, "questions": 4.0, "evidence_words": 120.0}}},
    "evidence": {
        "tiny": {
            "rows": {"rag-hybrid": {"passage_hit": {"mean": 0.75, "low": 0.5, "high": 1.0, "n": 4}}},
        }
    },
    "router_metrics": {"tiny": {"encoder": {"samples": 9.0, "ans_f1": 0.4, "ans_f1_low": 0.2, "ans_f1_high": 0.6}}},
    "versions": {
        "assets": {
            "answers": {"run_id": "run-answers"},
            "evidence_evaluation": {"run_id": "run-evidence"},
            "router_metrics": {"run_id": "run-router"},
        }
    },
}


def test_each_headline_table_names_the_run_it_comes_from() -> None:
    markdown = headline_markdown([SUMMARY])
    assert "### tiny" in markdown
    assert "**Evidence over every evaluation question (no reader)** — run `run-evidence`" in markdown
    assert "| rag-hybrid | 0.750 (0.500-1.000) |" in markdown
    assert "**Reader rows (test split)** — run `run-answers`" in markdown
    assert "| strategy | questions | right | f1 | evidence_words |" in markdown
    assert "| rag-hybrid | 4 | 0.500 | 0.250 | 120 |" in markdown
    assert "**Router metrics (held-out views)** — run `run-router`" in markdown
    assert "| encoder | 9 | 0.400 (0.200-0.600) | - | - |" in markdown
    assert "Answer forms" not in markdown  # no extractive row was answered: no forms table


def forms_summary(default: str, low: float, high: float) -> dict:
    """Two rows of one strategy, generated right 0.5 and extractive right 0.25 of 4 questions."""
    results = {
        "rdr2": {"right": 0.5, "questions": 4.0},
        "rdr2-extractive": {"right": 0.25, "questions": 4.0},
    }
    paired = {
        "system": "rdr2-extractive",
        "base": "rdr2",
        "questions": 4,
        "differences": {"right": {"mean": -0.25, "low": low, "high": high, "n": 4}},
    }
    return {
        **SUMMARY,
        "results": {"tiny": results},
        "intervals": {"tiny": {"rdr2": {"right": [0.25, 0.75]}}},
        "answer_forms": {"tiny": {"default": default, "paired": [paired]}},
    }


def test_the_forms_table_says_whether_the_default_is_right_as_often_as_the_better_form() -> None:
    header = "| strategy | questions | right, generated | right, extractive | extractive - generated (95% CI) |"
    generated = headline_markdown([forms_summary("generated", -0.5, 0.0)])
    assert "**Answer forms: the share of right answers, paired** — run `run-answers`" in generated
    assert header in generated
    assert "| rdr2 | 4 | 0.500 | 0.250 | -0.250 (-0.50 to +0.00) | generated | yes |" in generated
    # the quote is the default and is right less often: within noise where the interval holds 0, else no
    assert "| extractive | within noise |" in headline_markdown([forms_summary("extractive", -0.5, 0.0)])
    assert "| extractive | no |" in headline_markdown([forms_summary("extractive", -0.5, -0.25)])
    # the share of right answers carries its interval where the report has one
    assert "| rdr2 | 4 | 0.500 (0.250-0.750) |" in generated
    assert "| rdr2-extractive | 4 | 0.250 |" in generated


def test_correctness_shows_its_interval_and_its_table_by_question_type() -> None:
    section = [
        "Answer correctness by question type",
        ["strategy", "question type", "correct (95% CI)", "gold contained (95% CI)"],
        [["rdr2", "metrics-generated", "0.333 (0.000–0.667) n=9", ""]],
        "",
        "footnote",
    ]
    summary = {
        **SUMMARY,
        "results": {"tiny": {"rdr2": {"right": 0.0, "correct": 0.333, "questions": 9.0}}},
        "intervals": {"tiny": {"rdr2": {"correct": [0.0, 0.667]}}},
        "correctness": {"tiny": section},
    }
    markdown = headline_markdown([summary])
    assert "| rdr2 | 9 | 0.000 | 0.333 (0.000-0.667) |" in markdown
    assert "**Answer correctness by question type** — run `run-answers`" in markdown
    assert "| rdr2 | metrics-generated | 0.333 (0.000–0.667) n=9 |  |" in markdown
    assert "Answer correctness" not in headline_markdown([SUMMARY])  # a set without question types


def test_the_generated_block_replaces_only_its_own_markers(tmp_path: Path) -> None:
    page = tmp_path / "results.md"
    page.write_text("# Results\n\nTyped text stays.\n", encoding="utf-8")
    write_generated(page, "built-in corpus", "first")
    write_generated(page, "real sets", "other")
    write_generated(page, "built-in corpus", "second")
    text = page.read_text(encoding="utf-8")
    assert text.startswith("# Results\n\nTyped text stays.\n")
    assert "first" not in text and generated_block(page, "built-in corpus") == "second"
    assert generated_block(page, "real sets") == "other"
    assert generated_block(page, "nothing") == ""


def test_a_page_with_a_broken_marker_or_a_missing_report_is_named(tmp_path: Path) -> None:
    page = tmp_path / "results.md"
    page.write_text("<!-- generated by `rag results --write` (x): start -->\nno end\n", encoding="utf-8")
    with pytest.raises(ResultsPageError, match="has no end marker"):
        write_generated(page, "x", "tables")
    with pytest.raises(ResultsPageError, match="holds no evaluation reports"):
        latest_summaries(tmp_path / "nowhere")
    (tmp_path / "reports" / "tiny" / "latest").mkdir(parents=True)
    with pytest.raises(ResultsPageError, match="no evaluation report for collection 'tiny'"):
        latest_summaries(tmp_path / "reports")
    (tmp_path / "reports" / "tiny" / "latest" / "summary.json").write_text(json.dumps(SUMMARY), encoding="utf-8")
    assert latest_summaries(tmp_path / "reports")[0]["collection"] == "tiny"
