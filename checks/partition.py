"""Which collection a check reads: only the partition the run materialized, never the whole table."""

import dagster as dg

from rag_assets.events.upstream import latest_materialization


def checked_partition(context: dg.AssetCheckExecutionContext) -> str | None:
    """The run's partition; for a check run on its own (no partition), the partition of the checked
    asset's latest materialization. None when the asset was never materialized."""
    if context.has_partition_key:
        return context.partition_key
    [spec] = context.check_specs
    record = latest_materialization(context.instance, spec.asset_key)
    return record.partition_key if record is not None else None
