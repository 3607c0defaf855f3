"""Keeping the index fresh (the `reindex` job, a daily schedule and a source-change sensor) and
the run queue moving (a sensor that fails runs whose process died)."""

import json

import dagster as dg

from rag_assets.commands.run_health import recover_dead_runs
from rag_assets.core.corpus.fingerprint import fingerprint_digest, source_fingerprint
from rag_assets.core.settings import reindex_cron
from rag_assets.defs.partitions import COLLECTION_PARTITIONS_NAME
from resources.sources import SourcesResource

REINDEX_CRON = reindex_cron()  # read at import: a schedule's cron is fixed when it is defined

reindex_job = dg.define_asset_job(
    "reindex",
    selection=dg.AssetSelection.groups("corpus", "structure", "index"),
    description="Sources -> trees -> passages -> index for one collection; unchanged passages are not re-embedded.",
)


@dg.schedule(
    job=reindex_job,
    cron_schedule=REINDEX_CRON,
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Re-index every collection (cron from RAG_REINDEX_CRON, daily by default).",
)
def reindex_schedule(context: dg.ScheduleEvaluationContext):
    collections = context.instance.get_dynamic_partitions(COLLECTION_PARTITIONS_NAME)
    if not collections:
        return dg.SkipReason("no collection registered yet: run `rag run` or let the sensor add them")
    stamp = context.scheduled_execution_time.isoformat()
    return [dg.RunRequest(run_key=f"{name}:{stamp}", partition_key=name) for name in collections]


@dg.sensor(
    job=reindex_job,
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description="Requests a re-index of a collection only when its files were added, changed or "
    "removed (cursor: a digest of every file's mtime and size per collection); registers new "
    "collections of the collections file as partitions.",
)
def source_change_sensor(context: dg.SensorEvaluationContext, sources: SourcesResource) -> dg.SensorResult:
    previous: dict[str, str] = json.loads(context.cursor) if context.cursor else {}
    specs = sources.collections()
    known = set(context.instance.get_dynamic_partitions(COLLECTION_PARTITIONS_NAME))
    current: dict[str, str] = {}
    requests: list[dg.RunRequest] = []
    for spec in specs:
        current[spec.name] = fingerprint_digest(source_fingerprint(spec))
        if previous.get(spec.name) != current[spec.name]:
            requests.append(
                dg.RunRequest(
                    run_key=f"{spec.name}:{current[spec.name]}",
                    partition_key=spec.name,
                    tags={"rag/trigger": "sources-changed"},
                )
            )
    new = [spec.name for spec in specs if spec.name not in known]
    return dg.SensorResult(
        run_requests=requests,
        cursor=json.dumps(current, sort_keys=True),
        dynamic_partitions_requests=[collection_partitions_request(new)] if new else [],
    )


def collection_partitions_request(names: list[str]) -> dg.AddDynamicPartitionsRequest:
    return dg.AddDynamicPartitionsRequest(partitions_def_name=COLLECTION_PARTITIONS_NAME, partition_keys=names)


@dg.sensor(
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Fails in-progress runs whose process is gone (killed, out of memory, a closed "
    "laptop), so the single run slot (`max_concurrent_runs: 1`) is freed; requests no run.",
)
def dead_run_sensor(context: dg.SensorEvaluationContext) -> dg.SkipReason:
    recovered = recover_dead_runs(context.instance)
    for run in recovered:
        context.log.warning(f"run {run.run_id} ({run.job_name}, {run.partition}) marked failed: {run.reason}")
    return dg.SkipReason(f"{len(recovered)} dead run(s) marked failed" if recovered else "no dead run")
