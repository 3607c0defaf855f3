"""Keeping the index fresh (the `reindex` job, a daily schedule and a source-change sensor) and
the run queue moving (a sensor that fails runs whose process died)."""

import json

import dagster as dg

from rag_assets.commands.run_health import recover_dead_runs
from rag_assets.core.corpus.fingerprint import fingerprint_digest, source_fingerprint
from rag_assets.core.corpus.sources import CollectionSpec
from rag_assets.core.settings import reindex_cron
from rag_assets.defs.partitions import COLLECTION_PARTITIONS_NAME
from resources.sources import SourcesResource

REINDEX_CRON = reindex_cron()  # read at import: a schedule's cron is fixed when it is defined

reindex_job = dg.define_asset_job(
    "reindex",
    selection=dg.AssetSelection.groups("corpus", "structure", "index"),
    description="Sources -> trees -> passages -> index for one collection; unchanged passages are not re-embedded, "
    "and the passage reranker and namespace router train again only when their training data changed beyond "
    "their `retrain_threshold` (the reason is in their metadata).",
)

# `rag index`: the passage index alone (no questions, no training), as its help says; and the
# documents' cards, which `--by-name` asks first (a read of each tree's first nodes, no model).
PASSAGE_INDEX_STAGES = ("source_documents", "document_trees", "document_cards", "passages", "passage_index")
passage_index_job = dg.define_asset_job(
    "passage_index_job",
    selection=dg.AssetSelection.assets(*PASSAGE_INDEX_STAGES),
    description="Sources -> trees (and their cards) -> passages -> passage index for one collection, with their "
    "checks (`rag index`).",
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
    "removed (cursor: a digest of every file's mtime and size per collection); the first tick after "
    "it is turned on only records the files as they are (it requests nothing); registers new "
    "collections of the collections file as partitions.",
)
def source_change_sensor(context: dg.SensorEvaluationContext, sources: SourcesResource) -> dg.SensorResult:
    specs = sources.collections()
    current = {spec.name: _fingerprint(spec) for spec in specs}
    cursor = json.dumps(current, sort_keys=True)
    known = set(context.instance.get_dynamic_partitions(COLLECTION_PARTITIONS_NAME))
    new = [spec.name for spec in specs if spec.name not in known]
    partitions = [collection_partitions_request(new)] if new else []
    if context.cursor is None:
        files = ", ".join(f"{name} ({state['files']} files)" for name, state in current.items())
        reason = (
            f"first tick: recorded the files of {files or 'no collection'} as they are now; a file added, "
            "changed or removed from now on requests a re-index (run `rag index` for a collection never indexed)"
        )
        return dg.SensorResult(skip_reason=reason, cursor=cursor, dynamic_partitions_requests=partitions)
    previous = _previous_fingerprints(context.cursor)
    changed = [name for name, state in current.items() if previous.get(name, {}).get("digest") != state["digest"]]
    if not changed:
        compared = ", ".join(
            f"{name}: {state['files']} files, digest {state['digest']}" for name, state in current.items()
        )
        reason = (
            f"no file added, changed or removed since the last tick (mtime and size of every file compared; {compared})"
        )
        return dg.SensorResult(skip_reason=reason, cursor=cursor, dynamic_partitions_requests=partitions)
    requests = [
        dg.RunRequest(
            run_key=f"{name}:{current[name]['digest']}",
            partition_key=name,
            tags={
                "rag/trigger": "sources-changed",
                "rag/files": f"{previous.get(name, {}).get('files', 0)} -> {current[name]['files']}",
            },
        )
        for name in changed
    ]
    return dg.SensorResult(run_requests=requests, cursor=cursor, dynamic_partitions_requests=partitions)


def _fingerprint(spec: CollectionSpec) -> dict[str, object]:
    files = source_fingerprint(spec)
    return {"digest": fingerprint_digest(files), "files": len(files)}


def _previous_fingerprints(cursor: str) -> dict[str, dict]:
    """The cursor's fingerprints per collection (a cursor of digests alone, as older versions
    wrote, reads with an unknown file count)."""
    loaded = json.loads(cursor)
    return {
        name: value if isinstance(value, dict) else {"digest": value, "files": "?"} for name, value in loaded.items()
    }


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
