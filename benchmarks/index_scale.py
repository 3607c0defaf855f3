"""A real collection through `rag index` (sources -> trees -> passages -> passage index): wall time
and peak memory per stage, then an incremental re-index with one document changed.

The command runs as a subprocess exactly as a user would start it; a sampler thread reads the
resident memory of its process tree every 0.25 s, and each step's window comes from the Dagster
run's own step records (the steps run in that one process), so a stage's peak is the highest
sample inside its window. The second run changes one document (its last page dropped, through
pypdfium2, in a folder of links to the real files) and reports what was re-read and re-embedded.

    .venv/bin/python -m benchmarks.index_scale --datasets ../shared/datasets -c financebench \
        --data-dir dagster_home/data-datasets
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent


# what each stage says it did (its materialization's metadata): read or kept, parsed or kept, embedded
WORK = {
    "source_documents": ("documents_read", "documents_kept"),
    "document_trees": ("trees_parsed", "trees_kept"),
    "passage_index": ("embedded", "unchanged"),
}


class MemorySampler(threading.Thread):
    """Resident memory of a process and its children, sampled until `stop()`."""

    def __init__(self, pid: int, every: float = 0.25) -> None:
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.samples: list[tuple[float, int]] = []
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.is_set():
            try:
                root = psutil.Process(self.pid)
                procs = [root, *root.children(recursive=True)]
                rss = sum(p.memory_info().rss for p in procs if p.is_running())
                self.samples.append((time.time(), rss))
            except psutil.Error:
                pass
            self._done.wait(self.every)

    def stop(self) -> None:
        self._done.set()
        self.join()

    def peak(self, start: float = 0.0, end: float = float("inf")) -> int:
        inside = [rss for t, rss in self.samples if start <= t <= end]
        return max(inside, default=0)


def linked_collection(source: Path, into: Path, collection: str) -> Path:
    """A copy of the set's folder made of symbolic links, so one file can be changed."""
    for item in source.iterdir():
        if item.name != collection:
            (into / item.name).symlink_to(item.resolve())
    target = into / collection
    target.mkdir()
    for item in (source / collection).iterdir():
        if item.is_dir():
            (target / item.name).mkdir()
            for file in item.iterdir():
                (target / item.name / file.name).symlink_to(file.resolve())
        else:
            (target / item.name).symlink_to(item.resolve())
    return target


def drop_last_page(link: Path) -> None:
    """Replace a linked PDF with a real copy lacking its last page."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(link.resolve()))
    pdf.del_page(len(pdf) - 1)
    changed = link.with_suffix(".tmp.pdf")
    pdf.save(str(changed))
    pdf.close()
    link.unlink()
    changed.rename(link)


def timed_index(collection: str, env: dict[str, str]) -> tuple[float, MemorySampler, int]:
    started = time.time()
    proc = subprocess.Popen(
        [str(ROOT / ".venv/bin/rag"), "index", "-c", collection],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    sampler = MemorySampler(proc.pid)
    sampler.start()
    assert proc.stdout is not None
    for line in proc.stdout:
        print("  | " + line.rstrip(), flush=True)
    code = proc.wait()
    sampler.stop()
    return time.time() - started, sampler, code


def step_table(dagster_home: str, sampler: MemorySampler) -> list[tuple[str, float, int, str]]:
    """(step, seconds, peak RSS inside its window, what it did) for the latest run's steps."""
    os.environ["DAGSTER_HOME"] = dagster_home
    import dagster as dg

    with dg.DagsterInstance.get() as instance:
        run = instance.get_runs(limit=1)[0]
        stats = sorted(instance.get_run_step_stats(run.run_id), key=lambda s: s.start_time or 0)
        events = instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION)
    done: dict[str, str] = {}
    for event in events:
        materialization = event.asset_materialization
        keys = WORK.get(materialization.asset_key.to_user_string(), ())
        values = {k: materialization.metadata[k].value for k in keys if k in materialization.metadata}
        done[event.step_key or ""] = ", ".join(f"{k} {v}" for k, v in values.items())
    return [
        (
            s.step_key,
            (s.end_time or 0) - (s.start_time or 0),
            sampler.peak(s.start_time or 0, s.end_time or 0),
            done.get(s.step_key, ""),
        )
        for s in stats
    ]


def report(title: str, wall: float, sampler: MemorySampler, steps: list[tuple[str, float, int, str]]) -> None:
    print(f"\n{title}: {wall / 60:.1f} min wall, peak RSS {sampler.peak() / 2**30:.2f} GiB")
    print("| stage | seconds | peak RSS (GiB) | work |\n|---|---|---|---|")
    for key, seconds, peak, work in steps:
        print(f"| {key} | {seconds:.1f} | {peak / 2**30:.2f} | {work} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path, required=True, help="the shared datasets folder")
    parser.add_argument("-c", "--collection", default="financebench")
    parser.add_argument("--data-dir", type=Path, help="catalogue folder (default: a fresh temporary one)")
    parser.add_argument("--change", default=None, help="PDF file name to change for the re-index (default: the first)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "datasets"
        data.mkdir()
        folder = linked_collection(args.datasets.resolve(), data, args.collection)
        dagster_home = Path(tmp) / "dagster_home"
        dagster_home.mkdir()
        if (ROOT / "dagster_home" / "dagster.yaml").exists():  # the project's instance settings
            (dagster_home / "dagster.yaml").write_text((ROOT / "dagster_home" / "dagster.yaml").read_text())
        env = dict(
            os.environ,
            RAG_DATA=str(data),
            RAG_COLLECTIONS=str(ROOT / "collections.datasets.yaml"),
            RAG_DATA_DIR=str((args.data_dir or Path(tmp) / "data").resolve()),
            DAGSTER_HOME=str(dagster_home),
        )
        wall, sampler, code = timed_index(args.collection, env)
        if code != 0:
            sys.exit(f"rag index exited {code}")
        # a full build when the catalogue was empty; over an earlier run's --data-dir, the work column says what was kept
        report("first index run", wall, sampler, step_table(str(dagster_home), sampler))
        pdfs = sorted((folder / "pdfs").glob("*.pdf"))
        changed = next((p for p in pdfs if p.name == args.change), pdfs[0])
        drop_last_page(changed)
        print(f"\nchanged: {changed.name} (last page dropped)")
        wall2, sampler2, code = timed_index(args.collection, env)
        if code != 0:
            sys.exit(f"rag index exited {code}")
        report("re-index, one document changed", wall2, sampler2, step_table(str(dagster_home), sampler2))
        print(f"\nre-index / first run wall: {wall2 / wall:.3f}")


if __name__ == "__main__":
    main()
