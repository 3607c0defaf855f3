"""The `served_answers` events: every stored answer (service, `rag ask`, evaluation) as a Dagster event, so a
Dagster user finds an answer by its id and follows it to its nodes, its documents' versions and
the run that published the index it read.

One partition per answer (dynamic partitions named `served_answer`, the key is the answer id):
the asset's Partitions tab finds an id typed into its filter, and the partition's materialization
carries the answer's lineage (question, strategy, cited nodes and spans, each document's hash,
the index table/version/tag, the routers and reader) with links: the full id of the run that
published the index (`index_run`), the `source_documents` materialization that ingested the
documents (`documents_materialization`) and, for evaluation answers, the run that answered.

The events are runless materializations (`DagsterInstance.report_runless_asset_event`: no run is
created per answer), written in batches by `AnswerEventQueue` (core/lineage/answer_events.py):
`record_answers` writes one batch (the new partitions added in one call); `enqueue_answers` is
what the service and `rag ask` call where they store an answer. docs/served_answers.md says how.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

import dagster as dg

from rag_assets.core.lineage.answer_events import AnswerEventQueue
from rag_assets.core.store.lineage import AnswerRecord
from rag_assets.core.tables import markdown_table
from rag_assets.events.upstream import latest_materialization, latest_materializations

SERVED_ANSWER_PARTITIONS_NAME = "served_answer"
served_answer_partitions = dg.DynamicPartitionsDefinition(name=SERVED_ANSWER_PARTITIONS_NAME)
SERVED_ANSWERS = dg.AssetKey("served_answers")
PASSAGE_INDEX = dg.AssetKey("passage_index")
SOURCE_DOCUMENTS = dg.AssetKey("source_documents")


@dataclass(frozen=True, slots=True)
class IndexProvenance:
    """Where an answer's index and documents came from in this instance: the `passage_index`
    materialization that published the index, the `source_documents` materialization before it,
    and for each (document, hash) the `source_documents` materialization that ingested that
    version (its `document_changes` list it as added or changed). None / empty: not found."""

    index_run_id: str | None
    documents_url: str | None
    document_urls: dict[tuple[str, str], str] = field(default_factory=dict)

    def document_url(self, doc_id: str, content_hash: str | None) -> str | None:
        """The materialization that ingested this version of the document, else the one before the index."""
        return self.document_urls.get((doc_id, content_hash or ""), self.documents_url)


def event_url(asset: dg.AssetKey, partition: str, timestamp: float) -> str:
    """The Dagster UI's address of one materialization (the asset's Events tab, that event)."""
    return f"/assets/{'/'.join(asset.path)}?view=events&partition={partition}&time={int(timestamp * 1000)}"


def index_provenance(instance: dg.DagsterInstance, collection: str, tag: str | None) -> IndexProvenance:
    """The `passage_index` materialization of `collection` that tagged `tag` (the newest when the
    tag is unknown), the collection's `source_documents` materialization at or before it, and the
    ones that ingested each document version (the newest 50 looked at)."""
    index = next(
        (
            record
            for record in latest_materializations(instance, PASSAGE_INDEX, partition=collection)
            if tag is None or _metadata_value(record, "tag") == tag
        ),
        None,
    )
    ingested: dict[tuple[str, str], str] = {}
    for record in reversed(latest_materializations(instance, SOURCE_DOCUMENTS, partition=collection)):
        for change in _metadata_value(record, "document_changes_json") or []:
            if change.get("new_hash"):  # oldest first: a later ingestion of the same version wins
                ingested[(change["doc_id"], change["new_hash"])] = event_url(
                    SOURCE_DOCUMENTS, collection, record.timestamp
                )
    if index is None:
        return IndexProvenance(None, None, ingested)
    documents = latest_materialization(
        instance, SOURCE_DOCUMENTS, partition=collection, before_storage_id=index.storage_id + 1
    )
    url = event_url(SOURCE_DOCUMENTS, collection, documents.timestamp) if documents is not None else None
    return IndexProvenance(index.run_id, url, ingested)


def _metadata_value(record: dg.EventLogRecord, key: str) -> object:
    materialization = record.asset_materialization
    entry = materialization.metadata.get(key) if materialization else None
    return getattr(entry, "value", entry)


def cited_markdown(record: AnswerRecord, hashes: dict[str, str]) -> str:
    """The cited nodes as a table: number, document, node, span, heading path, the document's hash."""
    rows = [
        (i, doc_id, node_id, f"{start}-{end}", path, (hashes.get(doc_id) or "")[:16])
        for i, (doc_id, node_id, start, end, path) in enumerate(
            zip(
                record.cited_doc_ids,
                record.cited_node_ids,
                record.cited_span_starts,
                record.cited_span_ends,
                record.cited_heading_paths,
            ),
            start=1,
        )
    ]
    if not rows:
        return "no cited node (the reader saw no evidence)"
    return markdown_table(["#", "document", "node", "chars", "heading path", "document hash"], rows)


def answer_materialization(record: AnswerRecord, provenance: IndexProvenance) -> dg.AssetMaterialization:
    """One answer's event: its partition is its id; its metadata is its lineage with links."""
    versions = record.versions_dict
    hashes = dict(versions.get("doc_hashes") or {})
    index = versions.get("index") or {}
    metadata: dict[str, object] = {
        "answer_id": record.answer_id,
        "collection": record.collection,
        "source": record.source,
        "created_at": record.created_at.isoformat(timespec="seconds"),
        "question": record.question,
        "answer": dg.MetadataValue.text(record.answer),
        "strategy": record.strategy,
        "cited_nodes": dg.MetadataValue.md(cited_markdown(record, hashes)),
        "cited_node_ids": dg.MetadataValue.json(
            [{"doc_id": d, "node_id": n} for d, n in zip(record.cited_doc_ids, record.cited_node_ids)]
        ),
        "document_hashes": dg.MetadataValue.json(hashes),
        "index_table": str(index.get("table")),
        "index_version": str(index.get("version")),
        "index_tag": str(index.get("tag")),
        "router": str(versions.get("router_model")),
        "router_adapter": str(versions.get("adapter_id") or "none"),
        "reader": str(versions.get("reader_model")),
        "embedder": str(versions.get("embedder")),
    }
    if provenance.index_run_id:
        metadata["index_run"] = dg.MetadataValue.dagster_run(provenance.index_run_id)
    urls = {d: provenance.document_url(d, hashes.get(d)) for d in dict.fromkeys(record.cited_doc_ids)}
    if any(urls.values()):  # the first cited document's as a link; every cited one's in a table
        metadata["documents_materialization"] = dg.MetadataValue.url(next(u for u in urls.values() if u))
        metadata["documents"] = dg.MetadataValue.md(
            markdown_table(
                ["document", "hash", "ingested by"],
                [
                    (d, (hashes.get(d) or "")[:16], f"[source_documents]({u})" if u else "not found")
                    for d, u in urls.items()
                ],
            )
        )
    if record.run_id:
        metadata["answered_in_run"] = dg.MetadataValue.dagster_run(record.run_id)
    return dg.AssetMaterialization(asset_key=SERVED_ANSWERS, partition=record.answer_id, metadata=metadata)


def record_answers(instance: dg.DagsterInstance, records: Sequence[AnswerRecord]) -> int:
    """Write one batch: the answers' partitions in one call, then one runless materialization per
    answer (no run). Returns how many were written."""
    if not records:
        return 0
    instance.add_dynamic_partitions(SERVED_ANSWER_PARTITIONS_NAME, [r.answer_id for r in records])
    provenance: dict[tuple[str, str | None], IndexProvenance] = {}
    for record in records:
        key = (record.collection, (record.versions_dict.get("index") or {}).get("tag"))
        if key not in provenance:
            provenance[key] = index_provenance(instance, *key)
        instance.report_runless_asset_event(answer_materialization(record, provenance[key]))
    return len(records)


class InstanceSink:
    """Writes batches to this process's Dagster instance (DAGSTER_HOME), opened on first use."""

    def __init__(self) -> None:
        self.instance: dg.DagsterInstance | None = None

    def __call__(self, records: Sequence[AnswerRecord]) -> int:
        if self.instance is None:
            from rag_assets.core.settings import export_dagster_home

            export_dagster_home()
            self.instance = dg.DagsterInstance.get()
        return record_answers(self.instance, records)


_queue: AnswerEventQueue[AnswerRecord] | None = None
_queue_lock = threading.Lock()


def answer_events() -> AnswerEventQueue[AnswerRecord]:
    """This process's queue of answer events (written to DAGSTER_HOME's instance; flushed at exit)."""
    global _queue
    with _queue_lock:
        if _queue is None:
            _queue = AnswerEventQueue(InstanceSink())
            atexit.register(_queue.close)
        return _queue


def enqueue_answers(records: Sequence[AnswerRecord]) -> None:
    """Queue stored answers for the Dagster event log; never blocks on it (a batch is written
    within seconds by the queue's thread, the rest when the process exits)."""
    answer_events().put(records)
