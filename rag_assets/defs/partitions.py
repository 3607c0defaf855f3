"""One partition per collection: the unit of ingestion, indexing and (later) namespace routing.

Dynamic partitions, so a collection added to the collections file becomes a partition without a
code reload: `rag run` and the source sensor register the file's collections with the instance.
"""

from __future__ import annotations

import dagster as dg

COLLECTION_PARTITIONS_NAME = "collection"
collection_partitions = dg.DynamicPartitionsDefinition(name=COLLECTION_PARTITIONS_NAME)


def register_collections(instance: dg.DagsterInstance, names: list[str]) -> list[str]:
    """Add the collections the instance does not know yet; returns the ones added."""
    known = set(instance.get_dynamic_partitions(COLLECTION_PARTITIONS_NAME))
    new = [name for name in names if name not in known]
    if new:
        instance.add_dynamic_partitions(COLLECTION_PARTITIONS_NAME, new)
    return new
