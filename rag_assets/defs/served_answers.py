"""`served_answers`: every stored answer (service, `rag ask`, evaluation) as a Dagster event. The
events are written by rag_assets/events/served_answers.py (below the assets and the service, which
both record answers); this is the asset they materialize."""

import dagster as dg

from rag_assets.events.served_answers import PASSAGE_INDEX, SERVED_ANSWERS, served_answer_partitions

served_answers = dg.AssetSpec(
    SERVED_ANSWERS,
    deps=[dg.AssetDep(PASSAGE_INDEX, partition_mapping=dg.AllPartitionMapping())],
    partitions_def=served_answer_partitions,
    group_name="evaluation",
    kinds={"duckdb"},
    description="Every stored answer (service, `rag ask`, evaluation) recorded as it is stored: one partition "
    "per answer id (type an id into the Partitions tab's filter), with the question, strategy, cited nodes and "
    "spans, document hashes, index version, routers and reader, and links to the run that published the index "
    "and to the documents' materialization. Rows: the catalogue's `answers` table.",
)
