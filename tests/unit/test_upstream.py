"""Upstream artifacts from an asset's latest materialization (rag_assets/events/upstream.py), on a real
ephemeral Dagster instance."""

import dagster as dg

from rag_assets.events.upstream import latest_materialization

parts = dg.StaticPartitionsDefinition(["a", "b"])


@dg.asset(partitions_def=parts)
def model_folder(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"path": f"/models/{context.partition_key}", "steps": 3})


def test_latest_materialization_per_partition_and_none_before_any_materialization() -> None:
    with dg.DagsterInstance.ephemeral() as instance:
        assert latest_materialization(instance, model_folder.key) is None
        for partition in ("a", "b"):
            assert dg.materialize([model_folder], instance=instance, partition_key=partition).success
        newest = latest_materialization(instance, model_folder.key)
        assert newest is not None and newest.partition_key == "b"  # without a partition: the newest of all
        first = latest_materialization(instance, model_folder.key, partition="a")
        assert first is not None
        exact = latest_materialization(instance, model_folder.key, storage_id=first.storage_id)
        assert exact is not None and exact.partition_key == "a"
