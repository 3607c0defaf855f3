"""`rag backup` while `rag serve` answers, then `rag restore` into an empty place: a copy of the
configured data folder with a fresh Dagster instance is served, one client asks without pause (its
ask latency measured before and during the backup), `rag backup` runs as a user runs it, then
`rag restore` brings it back elsewhere. Printed: backup and restore seconds and size, ask p50/p95
quiet and during the backup (with the ratio), whether the restored stores agree (restore's own
check), and the answers lost: stored before the backup began yet missing from the restored
catalogue (goal 0).

    RAG_DATA_DIR=dagster_home/data .venv/bin/python -m benchmarks.backup_while_serving -c python-reference
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.lineage_drill import ask_http, deployment, start_service
from benchmarks.records import add_record_option, keep_figures
from benchmarks.service import line, pct
from rag_assets.core.settings import data_dir
from rag_assets.core.store.connections import catalogue_connection
from rag_assets.core.store.lineage import stored_answer_ids
from rag_assets.core.store.question_table import load_question_rows
from tests.integration.served_project import free_port

REPO = Path(__file__).resolve().parents[1]


def rag(env: dict[str, str], *args: str) -> tuple[float, str]:
    """Seconds a `rag` command took, and its output; SystemExit with it when it fails."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "rag_assets.cli", *args], env=env, cwd=REPO, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"rag {' '.join(args)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return time.perf_counter() - started, done.stdout.strip()


class Asker(threading.Thread):
    """Asks without pause; each answer's latency and id, and when it was received."""

    def __init__(self, url: str, questions: list[str], collection: str) -> None:
        super().__init__(daemon=True)
        self.url, self.questions, self.collection = url, questions, collection
        self.answers: list[tuple[float, float, str]] = []  # (received at, seconds, answer id)
        self.stopped = threading.Event()

    def run(self) -> None:
        i = 0
        while not self.stopped.is_set():
            started = time.perf_counter()
            answer = ask_http(self.url, self.questions[i % len(self.questions)], self.collection, 600, stream=False)
            if answer:
                self.answers.append((time.perf_counter(), time.perf_counter() - started, answer))
            i += 1

    def seconds_between(self, start: float, end: float) -> list[float]:
        return [s for at, s, _ in self.answers if start <= at - s and at <= end]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-c", "--collection", required=True)
    parser.add_argument("--quiet-asks", type=int, default=10, help="asks answered before the backup (default: 10)")
    add_record_option(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        served = deployment(root, "served", data_dir())
        with catalogue_connection(Path(served["RAG_DATA_DIR"]) / "catalogue.duckdb", read_only=True) as con:
            questions = [q.query for q in load_question_rows(con, args.collection)]
        port = free_port()
        service = start_service(served, port, root / "serve.log")
        asker = Asker(f"http://127.0.0.1:{port}", questions, args.collection)
        asker.start()
        try:
            while len(asker.answers) < args.quiet_asks:
                time.sleep(0.2)
            began = time.perf_counter()
            before = {answer for _, _, answer in asker.answers}
            backup_s, said = rag(served, "backup", str(root / "backup"))
            ended = time.perf_counter()
        finally:
            asker.stopped.set()
            asker.join(timeout=600)
            service.terminate()
            service.wait(timeout=120)
        quiet, during = asker.seconds_between(0, began), asker.seconds_between(began, ended)
        size = sum(f.stat().st_size for f in (root / "backup").rglob("*") if f.is_file())
        restored = deployment(root, "restored", None)
        restore_s, agreed = rag(restored, "restore", str(root / "backup"))
        with catalogue_connection(Path(restored["RAG_DATA_DIR"]) / "catalogue.duckdb", read_only=True) as con:
            kept = set(stored_answer_ids(con))
    lost = before - kept
    print(said)
    print(agreed)
    print(f"backup: {backup_s:.1f} s, {size / 1e6:.1f} MB, {len(during)} asks answered during it")
    print(f"restore: {restore_s:.1f} s")
    print(line("ask, quiet", quiet))
    print(line("ask, during the backup", during))
    ratio = pct(during, 0.5) / pct(quiet, 0.5) if during and quiet else float("nan")
    print(f"ask p50 during / quiet: {ratio:.2f}x")
    print(f"answers stored before the backup began: {len(before)}, missing after the restore: {len(lost)}")
    if args.record:
        name = args.collection
        keep_figures(
            "benchmarks.backup_while_serving",
            [
                (f"{name}: rag backup while serving, s", round(backup_s, 1)),
                (f"{name}: backup size MB", round(size / 1e6, 1)),
                (f"{name}: rag restore, s", round(restore_s, 1)),
                (f"{name}: ask p50 during the backup / quiet", round(ratio, 2)),
                (f"{name}: answers stored before the backup, missing after the restore", len(lost)),
                (f"{name}: restored catalogue and index agree", "yes" if "agree for" in agreed else "no"),
            ],
        )


if __name__ == "__main__":
    main()
