"""The Dagster UI with 100,000 served answers: the `served_answers` asset page and its partition
filter, timed in headless Chromium against a real `dagster-webserver`.

1. A fresh instance (the project's dagster.yaml: SQLite storage) gets N answers through the
   answers' own writer (`record_answers`, batches of `--batch`: one dynamic partition and one
   runless materialization each), added in bulk: SQLite's commits are made without waiting for
   the disk (`PRAGMA synchronous=OFF`) while loading, which changes the load's speed, not what is
   stored. `--home` keeps the loaded instance, and a second run on it measures without loading.
2. `dagster-webserver` on it; Chromium opens (a) the asset's page (until the newest answer's id
   is shown), (b) its Partitions tab (until it counts N partitions and lists the first) and (c)
   types an old answer's id into the partition filter (until that id is listed), each
   `--repeat` times; and the instance's size on disk.

Goal: (a), (b) and (c) within 3 s each, with 100,000 answers.

    .venv/bin/python -m benchmarks.served_answers_ui [--answers 100000] [--home /tmp/answers-100k]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import dagster as dg

from benchmarks.records import add_record_option, keep_figures
from benchmarks.served_answers import answer
from rag_assets.events.served_answers import SERVED_ANSWER_PARTITIONS_NAME, record_answers
from tests.integration.test_browser import CHROMIUM, CHROMIUM_ARGS
from tests.integration.test_webserver import running_webserver

REPO = Path(__file__).resolve().parents[1]


def unsynchronised_sqlite() -> None:
    """Every SQLite connection of this process commits without waiting for the disk (bulk load)."""
    import sqlalchemy

    @sqlalchemy.event.listens_for(sqlalchemy.engine.Engine, "connect")
    def _no_sync(connection: object, _record: object) -> None:
        if type(connection).__module__.startswith("sqlite3"):
            connection.execute("PRAGMA synchronous=OFF")


def answer_id(i: int) -> str:
    return answer(i).answer_id


def load(home: Path, count: int, batch: int) -> float:
    """Seconds to add answers until the instance in `home` holds `count`."""
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "dagster.yaml").exists():
        shutil.copy(REPO / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    unsynchronised_sqlite()
    started = time.perf_counter()
    with dg.DagsterInstance.from_config(str(home)) as instance:
        have = len(instance.get_dynamic_partitions(SERVED_ANSWER_PARTITIONS_NAME))
        for first in range(have, count, batch):
            record_answers(instance, [answer(i) for i in range(first, min(first + batch, count))])
            done = min(first + batch, count)
            if done % (batch * 20) == 0 or done == count:
                rate = (done - have) / (time.perf_counter() - started)
                print(f"  {done:,} answers ({rate:.0f}/s)", flush=True)
    return time.perf_counter() - started


def size_on_disk(home: Path) -> int:
    return sum(path.stat().st_size for path in home.rglob("*") if path.is_file())


def timed(action: object, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        action()  # type: ignore[operator]
        times.append(time.perf_counter() - t0)
    return times


def measure_ui(home: Path, count: int, repeat: int) -> dict[str, list[float]]:
    from playwright.sync_api import expect, sync_playwright

    env = {**os.environ, "DAGSTER_HOME": str(home), "PYTHONPATH": str(REPO)}
    newest, old = answer_id(count - 1), answer_id(count // 3)
    limit = 120_000  # ms: a slow page is measured, not failed
    with running_webserver(env, home / "webserver.log") as port:
        url = f"http://127.0.0.1:{port}"
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            page = browser.new_context(viewport={"width": 1400, "height": 1200}).new_page()

            def asset_page() -> None:  # the overview shows the latest materialization: the newest answer
                page.goto(f"{url}/assets/served_answers")
                expect(page.get_by_text(newest, exact=True).first).to_be_visible(timeout=limit)

            def partitions_tab() -> None:  # every partition counted, the first ones listed
                page.goto(f"{url}/assets/served_answers?view=partitions")
                expect(page.get_by_text(f"{count:,} Partitions", exact=False).first).to_be_visible(timeout=limit)
                expect(page.get_by_text(answer_id(0), exact=True).first).to_be_visible(timeout=limit)

            def partition_filter() -> float:
                search = page.get_by_placeholder("Filter by name…")
                search.fill("")
                t0 = time.perf_counter()
                search.fill(old)
                expect(page.get_by_text(old, exact=True).first).to_be_visible(timeout=limit)
                return time.perf_counter() - t0

            timings = {"asset page": timed(asset_page, repeat), "partitions tab": timed(partitions_tab, repeat)}
            timings["partition filter"] = [partition_filter() for _ in range(repeat)]
            browser.close()
            return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--answers", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--home", type=Path, help="keep the loaded instance here (default: a temporary folder)")
    add_record_option(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="answers-ui-") as tmp:
        home = args.home or Path(tmp) / "home"
        print(f"loading {args.answers:,} answers into {home}")
        took = load(home, args.answers, args.batch)
        print(f"loading took {took:.0f} s; instance on disk: {size_on_disk(home) / 2**20:.0f} MiB")
        timings = measure_ui(home, args.answers, args.repeat)
        for what, seconds in timings.items():
            print(f"{what:<20} median {statistics.median(seconds):6.2f} s  max {max(seconds):6.2f} s  (goal <= 3 s)")
        size = size_on_disk(home)
    if args.record:
        figures = [
            (f"{args.answers:,} answers: {what} median s", round(statistics.median(t), 2))
            for what, t in timings.items()
        ]
        keep_figures(
            "benchmarks.served_answers_ui", [*figures, (f"{args.answers:,} answers: instance MiB", round(size / 2**20))]
        )


if __name__ == "__main__":
    main()
