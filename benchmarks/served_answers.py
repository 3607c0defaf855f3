"""What recording stored answers as Dagster events costs, against a baseline measured in the same
run: N answers written to a fresh SQLite instance (the default `dagster_home` storage) one at a
time (a partition added and an event written per answer, as an unbatched writer would) and in
batches (`record_answers`: the partitions of a batch added in one call); and how long the caller
of `enqueue_answers` waits (the queue's `put`). Figures: milliseconds per answer and the ratio.

    PYTHONPATH=. .venv/bin/python -m benchmarks.served_answers [--answers 200] [--batch 64]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg

from rag_assets.core.lineage import AnswerRecord
from rag_assets.core.lineage.answer_events import AnswerEventQueue
from rag_assets.events.served_answers import SERVED_ANSWER_PARTITIONS_NAME, record_answers

REPO = Path(__file__).resolve().parents[1]


def answer(i: int) -> AnswerRecord:
    versions = '{"doc_hashes": {"c/a.md": "abc"}, "index": {"table": "passages", "version": 3, "tag": "c-1"}}'
    return AnswerRecord(
        "c", f"{i:012x}", "service", "", datetime.now(UTC).replace(tzinfo=None), "", f"question {i}", "rag-hybrid",
        "rag", "", -1, "{}", "answer", "evidence", 1, ("c/a.md",), (3,), ("A > B",), ("text",), (0,), (4,),
        ("c/a.md#3",), ("c/a.md",), 0, 0, 10, 2, 1, 0.1, 0, 0, versions,
    )  # fmt: skip


def fresh_instance(root: Path, name: str) -> dg.DagsterInstance:
    home = root / name
    home.mkdir()
    shutil.copy(REPO / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    return dg.DagsterInstance.from_config(str(home))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=200)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    records = [answer(i) for i in range(args.answers)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with fresh_instance(root, "one-by-one") as instance:
            started = time.perf_counter()
            for record in records:
                record_answers(instance, [record])
            single = time.perf_counter() - started
        with fresh_instance(root, "batched") as instance:
            started = time.perf_counter()
            for i in range(0, len(records), args.batch):
                record_answers(instance, records[i : i + args.batch])
            batched = time.perf_counter() - started
            assert len(instance.get_dynamic_partitions(SERVED_ANSWER_PARTITIONS_NAME)) == len(records)
    queue: AnswerEventQueue[AnswerRecord] = AnswerEventQueue(lambda batch: time.sleep(0.05), max_wait_s=60)
    started = time.perf_counter()
    for record in records:
        queue.put([record])
    put = time.perf_counter() - started
    queue.close()
    n = len(records)
    print(f"{n} answers, SQLite instance, batches of {args.batch}")
    print(f"one at a time: {1000 * single / n:.2f} ms per answer ({single:.2f} s)")
    print(f"batched:       {1000 * batched / n:.2f} ms per answer ({batched:.2f} s); {single / batched:.2f}x faster")
    print(f"enqueue (what an ask waits): {1e6 * put / n:.1f} µs per answer")


if __name__ == "__main__":
    main()
