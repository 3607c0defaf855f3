"""A failed run's report names its failed steps and checks (public Dagster result accessors)."""

from __future__ import annotations

import dagster as dg
import pytest
from pydantic import Field

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


class BoundedLimits(dg.ConfigurableResource):
    max_document_mb: float = Field(default=32.0, gt=0)


@dg.asset
def reads_limits(limits: BoundedLimits) -> float:
    return limits.max_document_mb


def test_a_resource_that_fails_to_start_is_named_with_its_cause() -> None:
    result = dg.materialize(
        [reads_limits],
        resources={"limits": BoundedLimits()},
        run_config={"resources": {"limits": {"config": {"max_document_mb": -1}}}},
        raise_on_error=False,
    )
    assert failure_lines(result) == [
        "resource limits failed to start: ValidationError: 1 validation error for BoundedLimits: "
        "max_document_mb: Input should be greater than 0 [type=greater_than, input_value=-1.0, input_type=float]"
    ]


@dg.asset(partitions_def=dg.StaticPartitionsDefinition(["tiny"]))
def per_collection() -> int:
    return 1


def test_a_run_that_never_started_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """Dagster refuses the run before it exists (a run config the job does not take): the
    collection counts as failed, with one line saying why, not an internal error."""
    from rag_assets.commands.runs import _run_collection

    job = dg.define_asset_job("tiny_job", selection=[per_collection])
    resolved = dg.Definitions(assets=[per_collection], jobs=[job]).resolve_job_def("tiny_job")
    with dg.DagsterInstance.ephemeral() as instance:
        started = _run_collection(resolved, "tiny", instance, {"ops": {"no_such_op": {"config": {}}}})
    assert started is False
    printed = " ".join(capsys.readouterr().err.split())
    assert printed.startswith("run for tiny did not start: DagsterInvalidConfigError: ")


@dg.asset(retry_policy=dg.RetryPolicy(max_retries=2, delay=0))
def retried() -> int:
    raise ValueError("the endpoint refused the connection")


def test_a_retried_step_names_its_own_error_not_only_the_retries() -> None:
    result = dg.materialize([retried], raise_on_error=False)
    assert failure_lines(result) == [
        "step retried failed: ValueError: the endpoint refused the connection (exceeded max_retries of 2)"
    ]
