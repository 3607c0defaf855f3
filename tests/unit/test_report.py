"""Report rendering on hand-made aggregated numbers: files, finite JSON, HTML referencing the plots."""

from __future__ import annotations

import json
import math
from pathlib import Path

from rag_assets.core.evaluation.report import (
    ReportData,
    headline_table,
    non_finite_numbers,
    render_markdown,
    undefined_router_metrics,
    write_report,
)
from rag_assets.core.evaluation.report_plots import router_bars

RESULTS = {
    "no-retrieval": {
        "right": 0.1,
        "f1": 0.2,
        "passage_hit": 0.0,
        "evidence_words": 0.0,
        "router_prompt_tokens": 0.0,
        "engine_calls": 1.0,
        "seconds_p50": 0.2,
        "seconds_p95": 0.3,
        "questions": 8.0,
    },
    "rag-hybrid": {
        "right": 0.4,
        "f1": 0.5,
        "passage_hit": 0.75,
        "evidence_words": 480.0,
        "router_prompt_tokens": 0.0,
        "engine_calls": 1.0,
        "seconds_p50": 0.9,
        "seconds_p95": 1.4,
        "questions": 8.0,
    },
    "rdr2": {
        "right": 0.5,
        "f1": 0.55,
        "passage_hit": 0.625,
        "evidence_words": 120.5,
        "router_prompt_tokens": 2300.0,
        "engine_calls": 3.0,
        "seconds_p50": 2.0,
        "seconds_p95": 3.1,
        "questions": 8.0,
    },
}
SCALING = {
    "expand_iterations": {
        0: {"f1": 0.4, "passage_hit": 0.5},
        1: {"f1": 0.5, "passage_hit": 0.6},
        2: {"f1": 0.55, "passage_hit": 0.625},
    },
    "top_k": {1: {"f1": 0.3, "passage_hit": 0.4}, 3: {"f1": 0.55, "passage_hit": 0.625}},
}
ROUTER = {
    "base": {"ans_f1": 0.1, "exp_pre": 0.0, "ref_acc": 0.3, "collapsed_rate": 0.4, "samples": 20.0},
    "adapter": {"ans_f1": 0.6, "exp_pre": 0.5, "ref_acc": 0.7, "collapsed_rate": 0.0, "samples": 20.0},
}


def _data(run_id: str = "run-1") -> ReportData:
    return ReportData(
        collection="tiny",
        run_id=run_id,
        results=RESULTS,
        scaling=SCALING,
        router_metrics=ROUTER,
        versions={
            "assets": {
                "passage_index": {
                    "materialized": True,
                    "data_version": "v3",
                    "run_id": "abcdefgh-1234",
                    "timestamp": 0,
                },
                "reorder_policy": {"materialized": False},
            },
            "adapter_id": "abc",
        },
        notes=["split 'test' has no questions: evaluated on 'dev'"],
        split="dev",
        questions=8,
        created_at="2026-11-22T20:00:00+00:00",
    )


def test_report_files_summary_and_html(tmp_path: Path) -> None:
    files = write_report(_data(), tmp_path / "reports")
    assert files.folder == tmp_path / "reports" / "tiny" / "run-1"
    for name in (
        "report.md",
        "report.html",
        "summary.json",
        "metrics.png",
        "evidence.png",
        "scaling.png",
        "router.png",
    ):
        assert (files.folder / name).is_file(), name
        assert (files.latest / name).read_bytes() == (files.folder / name).read_bytes()
    assert set(files.plots) == {"metrics", "evidence", "scaling", "router"}
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in files.plots.values())
    html = files.html.read_text()
    for png in ("metrics.png", "evidence.png", "scaling.png", "router.png"):
        assert f"src='{png}'" in html
    assert "<script" not in html and "split &#x27;test&#x27; has no questions" in html
    summary = json.loads(files.summary.read_text())
    assert summary["results"]["tiny"]["rdr2"]["f1"] == 0.55
    assert summary["scaling"]["tiny"]["top_k"]["3"]["passage_hit"] == 0.625
    assert summary["router_metrics"]["tiny"]["adapter"]["ans_f1"] == 0.6
    assert summary["versions"]["adapter_id"] == "abc"
    assert non_finite_numbers(summary) == []
    for section in ("results", "scaling", "router_metrics"):
        numbers = json.dumps(summary[section])
        assert "NaN" not in numbers and "Infinity" not in numbers
    markdown = files.markdown.read_text()
    # counts (words, tokens, calls, questions) as whole numbers, rates and seconds as decimals
    assert "| rdr2 | 0.500 | 0.550 | 0.625 | 120 | 2300 | 3 | 2.000 | 3.100 | 8 |" in markdown
    assert "## Reader-based strategies: 8 dev questions" in markdown
    assert "## Test-time scaling: top-k documents, 8 questions" in markdown  # every table titled with its count
    # the versions as a table, not a JSON dump
    assert "```json" not in markdown and "| adapter_id | abc |" in markdown
    assert "| passage_index | v3 | abcdefgh | 1970-01-01 00:00:00 |" in markdown
    assert "| reorder_policy | never materialized |" in markdown
    assert "<pre>" not in html and "<td>passage_index</td><td>v3</td>" in html


def test_latest_is_replaced_and_old_runs_stay(tmp_path: Path) -> None:
    write_report(_data("run-1"), tmp_path)
    second = write_report(_data("run-2"), tmp_path)
    assert json.loads((second.latest / "summary.json").read_text())["run_id"] == "run-2"
    assert (tmp_path / "tiny" / "run-1" / "summary.json").is_file()
    assert sorted(p.name for p in (tmp_path / "tiny").iterdir()) == ["latest", "run-1", "run-2"]  # no temp left


def test_missing_plots_are_skipped_and_bad_numbers_found(tmp_path: Path) -> None:
    data = ReportData(collection="tiny", run_id="r", results={"no-retrieval": {"evidence_words": 0.0}})
    files = write_report(data, tmp_path)
    assert files.plots == {} and "<img" not in files.html.read_text()
    summary = json.loads(files.summary.read_text())
    assert non_finite_numbers(summary) == []
    summary["results"]["tiny"]["no-retrieval"]["f1"] = math.nan
    summary["router_metrics"]["tiny"] = {"base": {"ans_f1": None}}
    summary["scaling"]["tiny"] = {"top_k": {}}
    assert sorted(non_finite_numbers(summary)) == [
        "results.tiny.no-retrieval.f1 = nan",
        "router_metrics.tiny.base.ans_f1 = None",
        "scaling.tiny.top_k (empty)",
    ]
    assert non_finite_numbers({"results": {"tiny": {}}}) == [
        "results.tiny (empty)",
        "scaling (missing)",
        "router_metrics (missing)",
    ]


def test_headline_table_orders_key_metrics() -> None:
    table = headline_table(RESULTS)
    assert table.splitlines()[0] == (
        "| strategy | right (holds the gold answer) | token F1 | passage hit | evidence words | router in tok | s/question p50 |"
    )
    assert table.splitlines()[2].startswith("| no-retrieval | 0.100 | 0.200 | 0.000 | 0 | 0 | 0.200 |")


def test_router_columns_undefined_for_scoring_routers_are_empty_with_a_footnote(tmp_path: Path) -> None:
    router = {
        **ROUTER,
        "encoder": {"ans_f1": 0.4, "exp_pre": 0.2, "ref_acc": 0.9, "collapsed_rate": 0.0, "samples": 31.0},
    }
    data = _data()
    data.router_metrics = router
    markdown = write_report(data, tmp_path).markdown.read_text()
    assert "| encoder | 0.400 | 0.200 | 0.900 | n/a¹ | 31 |" in markdown
    assert "| adapter | 0.600 | 0.500 | 0.700 | 0.000 | 20 |" in markdown  # the LLM's collapse rate is real
    assert "¹ undefined for a scoring router" in markdown
    # rows of an older catalogue (no question count): the validation fold they were scored on
    assert "## Router on the validation fold (31 views); the LLM kinds on the first 20: each kind" in markdown


def test_router_section_on_dev_test_views_shows_intervals_over_questions(tmp_path: Path) -> None:
    interval = {"ans_f1_low": 0.41, "ans_f1_high": 0.83, "exp_pre_low": 0.0, "exp_pre_high": 0.5}
    interval |= {"ref_acc_low": 0.75, "ref_acc_high": 1.0}
    data = _data()
    data.router_metrics = {
        "encoder": {"ans_f1": 0.631, "exp_pre": 0.25, "ref_acc": 0.917, "samples": 114.0, "questions": 19.0}
        | {"dev_test": 1.0, **interval},
        "base": {"ans_f1": 0.5, "exp_pre": 0.0, "ref_acc": 0.0, "samples": 4.0, "questions": 4.0, "dev_test": 1.0},
    }
    markdown = write_report(data, tmp_path).markdown.read_text()
    assert "## Router on all 114 dev+test views (19 questions); the LLM kinds on the first 4: each kind" in markdown
    assert "| model | ans_f1 | exp_pre | ref_acc | samples | questions |" in markdown
    assert "| encoder | 0.631 (0.410–0.830) | 0.250 (0.000–0.500) | 0.917 (0.750–1.000) | 114 | 19 |" in markdown
    assert "| base | 0.500 | 0.000 | 0.000 | 4 | 4 |" in markdown  # no interval stored: none shown
    assert "95% bootstrap interval over questions" in markdown and "Gold: the oracle's labels" in markdown


def test_reader_rows_show_intervals_and_batched_rows_no_p95(tmp_path: Path) -> None:
    data = _data()
    data.results = {
        "rag-hybrid": {"f1": 0.5, "seconds_p50": 0.9, "questions": 8.0},  # batched: no p95
        "contregen": {"f1": 0.25, "seconds_p50": 3.0, "seconds_p95": 5.5, "questions": 2.0},
    }
    data.intervals = {"rag-hybrid": {"f1": (0.25, 0.75)}}
    markdown = write_report(data, tmp_path).markdown.read_text()
    assert "| rag-hybrid | 0.500 (0.250–0.750) | 0.900 | – | 8 |" in markdown
    assert "| contregen | 0.250 | 3.000 | 5.500 | 2 |" in markdown
    assert "p95 is left out (–) where a strategy reads its questions in one batch" in markdown


def test_a_router_rate_over_nothing_is_left_empty_with_a_footnote() -> None:
    data = _data()
    data.router_metrics = {
        # the encoder never expanded: EXP-PRE has no line to be precise about, so no value (not 0.000)
        "encoder": {"ans_f1": 0.62, "exp_pre": 0.0, "ref_acc": 0.9, "samples": 40.0, "questions": 10.0}
        | {"exp_pre_low": 0.0, "exp_pre_high": 0.0, "answer_views": 30.0, "expand_lines": 0.0, "refusal_views": 6.0},
        # the adapter wrote 5 EXPAND lines, none right: its 0.000 is a real precision
        "adapter": {"ans_f1": 0.5, "exp_pre": 0.0, "ref_acc": 0.0, "samples": 4.0, "questions": 4.0}
        | {"answer_views": 4.0, "expand_lines": 5.0, "refusal_views": 0.0},
    }
    markdown = render_markdown(data, {})
    assert "| encoder | 0.620 | –² | 0.900 | 40 | 10 |" in markdown
    assert "| adapter | 0.500 | 0.000 | –² | 4 | 4 |" in markdown
    assert (
        "² undefined, left empty: EXP-PRE of encoder (the model wrote no EXPAND line, so its precision is "
        "undefined); REF-ACC of adapter (its views have no gold refusal, so there is no refusal to get right)."
    ) in markdown
    assert "0.000 (0.000–0.000)" not in markdown
    # the plot draws no bar for them either (metric positions 0, 1, 2; encoder left of adapter)
    metrics = ["ans_f1", "exp_pre", "ref_acc"]
    bars = router_bars(data.router_metrics, metrics, undefined_router_metrics(data.router_metrics))
    assert bars == {"encoder": ([-0.2, 1.8], [0.62, 0.9]), "adapter": ([0.2, 1.2], [0.5, 0.0])}


def test_router_rates_of_an_older_catalogue_without_counts_are_shown(tmp_path: Path) -> None:
    import duckdb

    from rag_assets.core.store.routing_tables import load_router_metrics

    with duckdb.connect(str(tmp_path / "c.duckdb")) as con:
        # the layout before the counts were recorded: EXP-PRE 0.0 may be undefined or a real 0, unknown
        con.execute(
            "CREATE TABLE router_metrics (collection VARCHAR NOT NULL, model VARCHAR NOT NULL, samples INTEGER NOT "
            "NULL, ans_f1 DOUBLE NOT NULL, exp_pre DOUBLE NOT NULL, ref_acc DOUBLE NOT NULL, expelled_per_output "
            "DOUBLE NOT NULL, collapsed_rate DOUBLE NOT NULL, parse_failure_rate DOUBLE NOT NULL)"
        )
        con.execute("INSERT INTO router_metrics VALUES ('tiny', 'encoder', 28, 0.6, 0.0, 0.9, 0, 0, 0)")
        data = _data()
        data.router_metrics = load_router_metrics(con, "tiny")
    markdown = render_markdown(data, {})
    assert "| encoder | 0.600 | 0.000 | 0.900 | n/a¹ | n/a¹ | n/a¹ | 28 |" in markdown
    assert "–²" not in markdown and "² undefined" not in markdown
