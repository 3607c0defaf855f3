"""Beyond one machine: concurrent partitions on one catalogue, and the Celery + Postgres profile.

Both tests build the early stages (source_documents, document_trees, passages, passage_index) of
two small collections and compare every row with the same collections built one after the other
in this process: the same tables, no row lost or duplicated, and no lock error on the way.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

EARLY = ["source_documents", "document_trees", "passages", "passage_index"]
COLLECTIONS = ("alpha", "beta")
EARLY_CHECKS = (  # the checks of the EARLY assets, each run in the cluster run of its partition
    "source_documents_expectations",
    "document_nodes_expectations",
    "document_trees_are_valid",
    "every_document_accounted_for",
    "passages_are_exact",
    "index_matches_catalogue",
    "index_vectors_and_fts",
)
TABLES = {  # table -> its key (unique per row)
    "source_documents": ("collection", "doc_id"),
    "document_nodes": ("collection", "doc_id", "node_id"),
    "document_texts": ("collection", "doc_id"),
    "passages": ("collection", "passage_id"),
    "rejected_documents": ("collection", "uri", "stage"),
}
TOPICS = ["kettle", "pond", "battery", "garden", "printer", "bicycle", "oven", "router"]


def _document(collection: str, i: int) -> str:
    topic = TOPICS[i % len(TOPICS)]
    steps = "\n".join(f"- step {k} for the {topic} of {collection}" for k in range(1 + i % 4))
    return (
        f"# {collection.title()} {topic} manual {i}\n\nThis manual {i} explains the {topic}.\n\n"
        f"## Setting up\n\nUnpack the {topic} and read section {i}.\n\n{steps}\n\n"
        f"## Care\n\nClean the {topic} every {i + 1} weeks. Keep it dry.\n\n"
        f"### Warranty\n\nThe warranty of item {collection}-{i} lasts {i % 3 + 1} years.\n"
    )


@pytest.fixture(scope="module")
def collections_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("collections")
    for collection, count in zip(COLLECTIONS, (16, 12)):  # small: embedding is the cost, not the point
        folder = root / collection
        folder.mkdir()
        for i in range(count):
            (folder / f"manual-{i:03d}.md").write_text(_document(collection, i), encoding="utf-8")
    path = root / "collections.yaml"
    path.write_text(
        "collections:\n" + "".join(f"  - name: {c}\n    path: {c}\n    format: markdown\n" for c in COLLECTIONS)
    )
    return path


# One collection's early stages, in-process, against a given data folder. The `go` file lines the
# two writers up: both start their first catalogue write at the same moment.
MATERIALIZE = textwrap.dedent(
    """
    import logging, sys, time
    from pathlib import Path
    import dagster as dg
    from rag_assets.defs.corpus.source_documents import source_documents
    from rag_assets.defs.index.passage_index import passage_index, passages
    from rag_assets.defs.partitions import register_collections
    from rag_assets.defs.structure.document_trees import document_trees
    from resources.catalogue import CatalogueResource
    from resources.embedder import EmbedderResource
    from resources.sources import SourcesResource
    from resources.vectors import VectorStoreResource

    collection, collections_file, data, barrier = sys.argv[1], sys.argv[2], Path(sys.argv[3]), sys.argv[4:]
    data.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(level=logging.INFO)  # the catalogue resource says when it waited for the lock
    resources = {
        "catalogue": CatalogueResource(database=str(data / "catalogue.duckdb")),
        "sources": SourcesResource(collections_file=collections_file),
        "embedder": EmbedderResource(progress=False),
        "vectors": VectorStoreResource(uri=str(data / "lancedb")),
    }
    resources["embedder"].get()  # load the model before the barrier: the writes, not the loads, collide
    instance = dg.DagsterInstance.ephemeral()
    register_collections(instance, [collection])
    if barrier:
        ready, go = Path(barrier[0]), Path(barrier[1])
        ready.touch()
        while not go.exists():
            time.sleep(0.05)
    result = dg.materialize(
        [source_documents, document_trees, passages, passage_index],
        partition_key=collection, instance=instance, resources=resources, raise_on_error=False,
    )
    failures = [e.step_key + ": " + str(e.event_specific_data.error.message) for e in result.all_events if e.is_step_failure]
    print("FAILED" if failures else "OK", collection, failures, flush=True)
    sys.exit(0 if result.success else 1)
    """
)


def materialize_elsewhere(collection: str, collections_file: Path, data: Path, *barrier: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", MATERIALIZE, collection, str(collections_file), str(data), *map(str, barrier)],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def snapshot(data: Path) -> dict[str, list[tuple]]:
    """Every row of the early tables and of the LanceDB index, in a canonical order; asserts that
    no key repeats (a duplicated row would otherwise hide behind an equal sorted list)."""
    import duckdb
    import lancedb

    out: dict[str, list[tuple]] = {}
    with duckdb.connect(str(data / "catalogue.duckdb"), read_only=True) as con:
        for table, key in TABLES.items():
            columns = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]
            rows = con.execute(f"SELECT * FROM {table}").fetchall()
            keys = [tuple(row[columns.index(k)] for k in key) for row in rows]
            assert len(keys) == len(set(keys)), f"{table}: duplicated {key}"
            out[table] = sorted(rows, key=repr)
    index = lancedb.connect(str(data / "lancedb")).open_table("passages").to_arrow().to_pylist()
    ids = [row["passage_id"] for row in index]
    assert len(ids) == len(set(ids)), "passage index: duplicated passage_id"
    out["passage_index"] = sorted(
        (
            r["collection"],
            r["passage_id"],
            r["content_hash"],
            r["search_text"],
            tuple(r["node_ids"]),
            tuple(round(v, 4) for v in r["vector"]),
        )
        for r in index
    )
    return out


def materialize_here(collection: str, collections_file: Path, data: Path) -> None:
    """The same stages in this process (the reference: one collection after the other)."""
    import dagster as dg

    from rag_assets.defs.corpus.source_documents import source_documents
    from rag_assets.defs.index.passage_index import passage_index, passages
    from rag_assets.defs.partitions import register_collections
    from rag_assets.defs.structure.document_trees import document_trees
    from resources.catalogue import CatalogueResource
    from resources.embedder import EmbedderResource
    from resources.sources import SourcesResource
    from resources.vectors import VectorStoreResource

    data.mkdir(parents=True, exist_ok=True)
    instance = dg.DagsterInstance.ephemeral()
    register_collections(instance, [collection])
    result = dg.materialize(
        [source_documents, document_trees, passages, passage_index],
        partition_key=collection,
        instance=instance,
        resources={
            "catalogue": CatalogueResource(database=str(data / "catalogue.duckdb")),
            "sources": SourcesResource(collections_file=str(collections_file)),
            "embedder": EmbedderResource(progress=False),
            "vectors": VectorStoreResource(uri=str(data / "lancedb")),
        },
    )
    assert result.success


@pytest.fixture(scope="module")
def one_after_the_other(collections_file: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple]]:
    data = tmp_path_factory.mktemp("sequential")
    for collection in COLLECTIONS:
        materialize_here(collection, collections_file, data)
    result = snapshot(data)
    assert {row[0] for row in result["source_documents"]} == set(COLLECTIONS)
    assert all(result[t] for t in ("source_documents", "document_nodes", "passages", "passage_index"))
    return result


def test_two_collections_written_at_once_equal_one_after_the_other(
    collections_file: Path, one_after_the_other: dict, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    go = tmp_path / "go"
    writers = [
        materialize_elsewhere(collection, collections_file, data, tmp_path / f"ready-{collection}", go)
        for collection in COLLECTIONS
    ]
    try:
        for collection in COLLECTIONS:  # both loaded and waiting: release them together
            while not (tmp_path / f"ready-{collection}").exists():
                assert all(w.poll() is None for w in writers), [w.communicate()[0][-3000:] for w in writers]
                subprocess.run(["sleep", "0.1"], check=True)
        go.touch()
        outputs = [w.communicate(timeout=600)[0] for w in writers]
    finally:
        for w in writers:
            if w.poll() is None:
                w.kill()
    for writer, output in zip(writers, outputs):
        assert writer.returncode == 0, output[-3000:]
        # Lance's own compaction (the cleanup's `optimize`) gives up a rewrite preempted by the
        # other writer's compaction, logs a WARN and leaves the fragments for the next GC: the
        # data is untouched (the snapshot below proves it), so that line is no conflict of ours.
        ours = "\n".join(line for line in output.splitlines() if "Compaction commit failed" not in line)
        assert "Could not set lock" not in ours and "commit conflict" not in ours.lower(), output[-3000:]
    assert snapshot(data) == one_after_the_other


def _cluster_available() -> str | None:
    """Why the Celery + Postgres profile cannot run here, or None when it can."""
    for module in ("dagster_celery", "dagster_postgres", "redis", "psycopg2"):
        try:
            __import__(module)
        except ImportError:
            return f"python package {module} is not installed (pip install 'rag-assets[cluster]')"
    from cluster import services

    if services.missing_binaries():
        # make test installs them first; a bare `pytest` tries the same (root or password-less sudo)
        subprocess.run(["sh", str(REPO_ROOT / "cluster" / "install-packages.sh")], capture_output=True)
    missing = services.missing_binaries()
    if missing:
        return "Debian packages could not be installed here: missing " + "; ".join(missing)
    return None


def test_the_celery_postgres_profile_runs_two_collections_on_two_workers(
    collections_file: Path, one_after_the_other: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reason = _cluster_available()
    if reason:
        pytest.skip(reason)
    import dagster as dg

    from cluster import profile as cp

    monkeypatch.setenv("RAG_COLLECTIONS", str(collections_file))
    state = tmp_path / "cluster"
    profile = cp.up(state, tmp_path / "data")  # no pool limit: the workers meet on the catalogue's file lock
    try:
        cp.start_workers(profile, 2, wait=False)
        # with the asset checks: each reads only its run's partition, so one collection's checks pass
        # while the other collection is half-way through its stages on the other worker
        outcomes = cp.run_collections(profile, list(COLLECTIONS), select=EARLY, workers=2)
        for outcome in outcomes:
            assert outcome.success, f"{outcome.collection}: {outcome.failed_steps}\n{outcome.output[-3000:]}"
        # the runs live in the Postgres instance, one per partition, with every step done by a worker
        monkeypatch.setenv("DAGSTER_HOME", str(profile.dagster_home))
        for key, value in profile.env().items():
            if key.startswith(("RAG_DAGSTER", "RAG_CLUSTER")):
                monkeypatch.setenv(key, value)
        with dg.DagsterInstance.get() as instance:
            assert type(instance.run_storage).__name__ == "PostgresRunStorage"
            runs = {o.run_id: o.collection for o in outcomes}
            workers_seen: set[str] = set()
            for run_id, collection in runs.items():
                run = instance.get_run_by_id(run_id)
                assert run is not None and run.status == dg.DagsterRunStatus.SUCCESS
                assert run.tags["dagster/partition"] == collection
                checked = {
                    record.dagster_event.event_specific_data.check_name: record.dagster_event.event_specific_data.passed
                    for record in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)
                }
                assert checked == dict.fromkeys(EARLY_CHECKS, True), f"{collection}: {checked}"
                for record in instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
                    data = record.dagster_event.engine_event_data if record.dagster_event else None
                    if data is not None and "Celery worker" in (data.metadata or {}):
                        workers_seen.add(str(data.metadata["Celery worker"].value))
            assert workers_seen and all(w.startswith("rag-worker-") for w in workers_seen), workers_seen
    finally:
        cp.down(state)
    assert snapshot(tmp_path / "data") == one_after_the_other
