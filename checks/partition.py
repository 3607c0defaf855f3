"""Which collection a check reads: only the partition the run materialized, never the whole table."""

import dagster as dg


def checked_partition(context: dg.AssetCheckExecutionContext) -> str | None:
    """The run's partition; for a check run on its own (no partition), the partition of the checked
    asset's latest materialization. None when the asset was never materialized."""
    if context.has_partition_key:
        return context.partition_key
    [spec] = context.check_specs
    records = context.instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=spec.asset_key), limit=1).records
    return records[0].partition_key if records else None
