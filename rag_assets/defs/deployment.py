"""How the asset graph is deployed: the executor, the catalogue pool, retries and GPU step tags.

One machine runs in-process (the default). `RAG_EXECUTOR=celery` runs every step as a Celery task
(the cluster profile under `cluster/`, `make cluster`); the broker and result backend come from
`RAG_CELERY_BROKER` / `RAG_CELERY_BACKEND`. Everything here is plain Dagster metadata on the
assets: a deployment that ignores it (in-process, no pool limit, no Kubernetes) behaves as before.
"""

from __future__ import annotations

import dagster as dg

from rag_assets.core.settings import EXECUTOR_ENV, celery_backend, celery_broker, executor_kind

# Steps that write the DuckDB catalogue (or the shared LanceDB table) share this pool. Without a
# limit in the instance (dagster_home/dagster.yaml) it changes nothing; a cluster instance sets
# `concurrency: pools:` to bound how many such steps run at once (see README "Scale out").
CATALOGUE_POOL = "catalogue_writes"

# Engine start-up (model load, a vLLM server) and training fail transiently on busy nodes (out of
# memory, a preempted GPU, a port race). These steps are idempotent by construction: training
# publishes under a content id, answers and metrics replace the collection's rows atomically.
TRANSIENT_RETRY = dg.RetryPolicy(max_retries=2, delay=15, backoff=dg.Backoff.EXPONENTIAL, jitter=dg.Jitter.PLUS_MINUS)

# LanceDB commits are optimistic: two writers of the same table can conflict on commit. The sync is
# incremental and `merge_insert` keyed on passage_id, so re-running the step is cheap and exact.
INDEX_RETRY = dg.RetryPolicy(max_retries=3, delay=2, backoff=dg.Backoff.EXPONENTIAL, jitter=dg.Jitter.PLUS_MINUS)

# Steps that want an accelerator (LoRA training, routing and reading with an LLM). The k8s run
# launcher / executor turns `dagster-k8s/config` into the step pod's resources and scheduling; the
# plain tag lets other executors (Celery queues, Docker) route on it. Ignored elsewhere.
GPU_STEP_TAGS: dict[str, object] = {
    "rag/accelerator": "gpu",
    "dagster-k8s/config": {
        "container_config": {
            "resources": {
                "requests": {"cpu": "4", "memory": "24Gi", "nvidia.com/gpu": "1"},
                "limits": {"memory": "32Gi", "nvidia.com/gpu": "1"},
            }
        },
        "pod_spec_config": {
            "node_selector": {"rag/accelerator": "gpu"},
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        },
    },
}


def executor_from_env() -> dg.ExecutorDefinition:
    """`in_process` (default: one process, models load once per run), `multiprocess`, `celery`
    (RAG_CELERY_BROKER) or `k8s` (one Kubernetes job per step; needs dagster-k8s)."""
    kind = executor_kind()
    if kind == "in_process":
        return dg.in_process_executor
    if kind == "multiprocess":
        return dg.multiprocess_executor
    if kind == "celery":
        broker = celery_broker()
        if not broker:
            raise ValueError(f"{EXECUTOR_ENV}=celery needs RAG_CELERY_BROKER (e.g. redis://127.0.0.1:6379/0)")
        try:
            from dagster_celery import celery_executor
        except ImportError:
            raise ValueError(
                f"{EXECUTOR_ENV}=celery needs the cluster extra: pip install 'rag-assets[cluster]'"
            ) from None
        return celery_executor.configured(
            {"broker": broker, "backend": celery_backend()},
            name="celery",
        )
    if kind == "k8s":
        try:
            from dagster_k8s import k8s_job_executor
        except ImportError:
            raise ValueError(f"{EXECUTOR_ENV}=k8s needs dagster-k8s (pip install 'dagster-k8s>=0.29,<0.30')") from None
        return k8s_job_executor
    raise ValueError(f"{EXECUTOR_ENV}={kind!r}: expected in_process, multiprocess, celery or k8s")
