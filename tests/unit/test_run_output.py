"""What `rag run` prints: progress lines from a real Dagster run, and the closing tables at any width."""

from __future__ import annotations

import io
import json
from pathlib import Path

import dagster as dg
import pytest
from rich.console import Console

from rag_assets.commands.progress import console_log_level, run_progress
from rag_assets.commands.summary import column_chunks, print_evaluation

STRATEGIES = ["no-retrieval", "rag-hybrid", "rdr2-no-structure", "rdr2-no-expand", "rdr2-no-ref"]


def _metrics(i: int) -> dict[str, float]:
    return {
        "right": 0.1 * i,
        "f1": 0.11 * i,
        "passage_hit": 0.5,
        "evidence_recall": 0.4,
        "section_hit": 0.3,
        "evidence_words": 100.0 * i,
        "router_prompt_tokens": 1000.0 * i,
        "seconds_p50": 1.5,
    }


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    latest = tmp_path / "reports" / "tiny" / "latest"
    latest.mkdir(parents=True)
    summary = {
        "split": "test",
        "questions": 4,
        "run_id": "r1",
        "notes": [],
        "results": {"tiny": {name: _metrics(i) for i, name in enumerate(STRATEGIES)}},
    }
    (latest / "summary.json").write_text(json.dumps(summary))
    return tmp_path / "reports"


@pytest.mark.parametrize("width", [40, 80, 200])
def test_the_headline_table_keeps_every_row_distinguishable(reports: Path, width: int) -> None:
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=False, color_system=None)
    [html] = print_evaluation(console, ["tiny"], reports)
    text = out.getvalue()
    lines = text.splitlines()
    for name in STRATEGIES:  # the full name, on a line of its own, in every continuation table
        assert any(f"│ {name} " in line for line in lines), (name, text)
    for header in ("token F1", "router in tok"):  # every metric shown somewhere
        assert all(word in text for word in header.split())
    assert f"HTML report: {html}" in lines  # the path on one line, never wrapped
    assert all(len(line) <= width for line in lines if "HTML report" not in line)


def test_columns_go_to_continuation_tables_only_when_they_do_not_fit() -> None:
    columns = [("token F1", ["0.123"]), ("evidence words", ["1234"]), ("s/question p50", ["1.5"])]
    assert column_chunks(20, columns, 200) == [[0, 1, 2]]
    assert column_chunks(20, columns, 40) == [[0, 1], [2]]
    assert column_chunks(20, columns, 35) == [[0], [1], [2]]
    assert column_chunks(20, columns, 10) == [[0], [1], [2]]  # never an empty table


def test_progress_shows_one_line_per_asset_and_the_asset_s_own_messages() -> None:
    parts = dg.DynamicPartitionsDefinition(name="collection")

    @dg.asset(partitions_def=parts)
    def first(context) -> dg.MaterializeResult:  # (a string annotation is not resolvable here)
        context.log.info("embedding 3 passages")
        context.log.warning("rejected x.md: empty")
        return dg.MaterializeResult(metadata={"dagster/partition_row_count": 3})

    @dg.asset(partitions_def=parts, deps=[first])
    def second() -> None:
        return None

    @dg.asset_check(asset=first)
    def first_is_fine() -> dg.AssetCheckResult:
        return dg.AssetCheckResult(passed=True)

    @dg.asset_check(asset=first)
    def first_warns() -> dg.AssetCheckResult:
        return dg.AssetCheckResult(passed=False, severity=dg.AssetCheckSeverity.WARN)

    job = dg.define_asset_job("job", selection=dg.AssetSelection.all())
    defs = dg.Definitions(assets=[first, second], asset_checks=[first_is_fine, first_warns], jobs=[job])
    lines: list[str] = []
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("collection", ["tiny"])
        with run_progress(instance, lines.append) as tags:
            result = defs.resolve_job_def("job").execute_in_process(
                partition_key="tiny", instance=instance, tags=tags, run_config=console_log_level({}, verbose=False)
            )
        assert result.success
        # the run log keeps Dagster's own events although the console showed none
        assert any(r.event_log_entry.dagster_event for r in instance.get_records_for_run(result.run_id).records)
    assert [line.split(" (")[0] for line in lines if line.startswith("  ✓")] == ["  ✓ first", "  ✓ second"]
    assert "  ✓ first (3 rows," in next(line for line in lines if line.startswith("  ✓ first"))
    assert "    · first: embedding 3 passages" in lines and "    ! first: rejected x.md: empty" in lines
    assert "    ✗ check first.first_warns did not pass (warn)" in lines
    assert lines[-1] == "  checks: 1 passed, 1 did not pass"
    assert not any("DEBUG" in line or "STEP_" in line for line in lines)


def test_a_run_config_with_its_own_loggers_is_left_alone() -> None:
    own = {"loggers": {"console": {"config": {"log_level": "INFO"}}}}
    assert console_log_level(own, verbose=False) == own
    assert console_log_level({}, verbose=True)["loggers"]["console"]["config"]["log_level"] == "DEBUG"
