"""An upstream asset's latest materialization, from the instance's event log: the one way assets and
checks read materialization records (the partition a check reads, the provenance the evaluation
report lists). Values one asset hands another (a trained model's folder, a router's ids) pass
through catalogue tables instead (`published_models`), never through metadata read back by key."""

from __future__ import annotations

import dagster as dg


def latest_materialization(
    instance: dg.DagsterInstance,
    asset_key: dg.AssetKey,
    *,
    partition: str | None = None,
    storage_id: int | None = None,
    before_storage_id: int | None = None,
) -> dg.EventLogRecord | None:
    """The asset's latest materialization (of one partition when given; stored before
    `before_storage_id` when given; exactly the one stored under `storage_id` when given), or None
    when there is none."""
    if storage_id is not None:
        wanted = dg.AssetRecordsFilter(asset_key=asset_key, storage_ids=[storage_id])
    else:
        wanted = dg.AssetRecordsFilter(
            asset_key=asset_key,
            asset_partitions=[partition] if partition else None,
            before_storage_id=before_storage_id,
        )
    records = instance.fetch_materializations(wanted, limit=1).records
    return records[0] if records else None


def latest_materializations(
    instance: dg.DagsterInstance, asset_key: dg.AssetKey, *, partition: str | None = None, limit: int = 50
) -> list[dg.EventLogRecord]:
    """The asset's newest `limit` materializations (of one partition when given), newest first."""
    wanted = dg.AssetRecordsFilter(asset_key=asset_key, asset_partitions=[partition] if partition else None)
    return list(instance.fetch_materializations(wanted, limit=limit).records)
