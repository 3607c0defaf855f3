"""A failed run's report names its failed steps and checks (public Dagster result accessors)."""

from __future__ import annotations

import dagster as dg

from rag_assets.commands.runs import failure_lines


@dg.asset
def upstream() -> int:
    return 1


@dg.asset_check(asset=upstream, description="a check that always fails")
def upstream_is_positive() -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=False, description="it was not positive enough")


@dg.asset
def broken(upstream: int) -> int:
    raise ValueError("the sources folder vanished\nsecond line of detail")


@dg.asset
def after(broken: int) -> int:
    return broken


def test_failed_steps_checks_and_skips_are_one_line_each() -> None:
    result = dg.materialize([upstream, broken, after, upstream_is_positive], raise_on_error=False)
    assert not result.success
    lines = failure_lines(result)
    assert lines[0] == "step broken failed: ValueError: the sources folder vanished"
    assert "check upstream.upstream_is_positive failed: it was not positive enough" in lines
    assert len(lines) == 2  # `after` never ran: its upstream failed, it is not a failure of its own


def test_a_successful_run_has_no_failure_lines() -> None:
    assert failure_lines(dg.materialize([upstream], raise_on_error=False)) == []
