"""What an upstream asset published, read from its latest materialization: the one way assets and
checks find upstream artifacts (a trained model's folder, a router's ids, the partition a check
reads) in the instance's event log."""

from __future__ import annotations

import dagster as dg


def latest_materialization(
    instance: dg.DagsterInstance,
    asset_key: dg.AssetKey,
    *,
    partition: str | None = None,
    storage_id: int | None = None,
) -> dg.EventLogRecord | None:
    """The asset's latest materialization (of one partition when given; exactly the one stored
    under `storage_id` when given), or None when there is none."""
    if storage_id is not None:
        wanted = dg.AssetRecordsFilter(asset_key=asset_key, storage_ids=[storage_id])
    else:
        wanted = dg.AssetRecordsFilter(asset_key=asset_key, asset_partitions=[partition] if partition else None)
    records = instance.fetch_materializations(wanted, limit=1).records
    return records[0] if records else None


def latest_metadata(
    instance: dg.DagsterInstance, asset_key: dg.AssetKey, partition: str | None = None
) -> dict[str, object] | None:
    """name -> plain value of the metadata the asset's latest materialization (of `partition`)
    published, or None when it was never materialized."""
    record = latest_materialization(instance, asset_key, partition=partition)
    if record is None:
        return None
    return {name: value.value for name, value in record.asset_materialization.metadata.items()}
