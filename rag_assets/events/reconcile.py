"""No lost lineage: every answer stored in the catalogue becomes a `served_answers` event, whatever
the process that stored it did next (a client gone at once, a process killed before its queue
was written).

The catalogue's `answers` table is the durable queue: an answer is stored before its event is
queued in memory (`enqueue_answers`), and the events already written are the partitions of
`served_answers` the Dagster instance holds a materialization of. `report_unreported` writes the
event of every stored answer that has none yet; it runs when `rag serve` and `rag mcp` start and
exit, and every minute in the `answer_events_sensor` (rag_assets/defs/answer_events_sensor.py),
so an answer whose in-memory event was lost is reported within a minute by the daemon, or at the
next start. docs/served_answers.md says how.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

log = logging.getLogger(__name__)
BATCH = 64
# an answer younger than this may still be in its process's in-memory queue (written within 2 s):
# left to that queue, so that it is not reported twice
IN_FLIGHT_S = 30.0


def report_unreported(instance: Any = None, *, in_flight_s: float = IN_FLIGHT_S, limit: int | None = None) -> int:
    """Write the `served_answers` event of every stored answer older than `in_flight_s` that has
    none yet in `instance` (default: DAGSTER_HOME's), at most `limit`, in batches; returns how
    many were written. Without a catalogue it writes nothing."""
    import dagster as dg

    from rag_assets.core.settings import catalogue_file, export_dagster_home
    from rag_assets.core.store.connections import catalogue_connection
    from rag_assets.core.store.lineage import load_answers_by_id, stored_answer_ids, utc_now
    from rag_assets.events.served_answers import SERVED_ANSWERS, record_answers

    if not catalogue_file().exists():
        return 0
    if instance is None:
        export_dagster_home()
        instance = dg.DagsterInstance.get()
    reported = instance.get_materialized_partitions(SERVED_ANSWERS)
    before = utc_now() - timedelta(seconds=in_flight_s)
    with catalogue_connection(catalogue_file(), read_only=True) as con:
        missing = [i for i in stored_answer_ids(con, before) if i not in reported][:limit]
    written = 0
    for start in range(0, len(missing), BATCH):
        with catalogue_connection(catalogue_file(), read_only=True) as con:  # short reads: writers wait on none
            records = load_answers_by_id(con, missing[start : start + BATCH])
        written += record_answers(instance, records)
    return written


def _instance() -> Any:
    """DAGSTER_HOME's instance, opened (and on a fresh home, its storage created) in this thread,
    before any other thread of the process opens it: two threads creating the same SQLite
    storage at once corrupt its schema version."""
    import dagster as dg

    from rag_assets.core.settings import export_dagster_home

    export_dagster_home()
    return dg.DagsterInstance.get()


def _report_quietly(instance: Any, in_flight_s: float) -> None:
    try:
        written = report_unreported(instance, in_flight_s=in_flight_s)
    except Exception as err:  # never fails the service: the sensor and the next start try again
        log.warning(f"answer events: stored answers not reported yet ({err})")
        return
    if written:
        log.info(f"answer events: {written} stored answer(s) without an event reported")


@contextmanager
def answers_reported() -> Iterator[None]:
    """Around a process that stores answers (`rag serve`, `rag mcp`): at start, in the
    background, the events a previous process left unwritten; at exit, this process's queue
    written, then any stored answer still without an event. Best effort at exit (an agent's host
    may kill `rag mcp` two seconds after it leaves): what is lost there is reported at the next
    start or by the sensor."""
    from rag_assets.core.settings import catalogue_file

    instance = None
    if catalogue_file().exists():  # no catalogue: no answer yet, nothing to report
        try:
            instance = _instance()
        except Exception as err:
            log.warning(f"answer events: the Dagster instance cannot be opened ({err})")
    start = threading.Thread(
        target=_report_quietly, args=(instance, IN_FLIGHT_S), name="answer-events-start", daemon=True
    )
    if instance is not None:
        start.start()
    try:
        yield
    finally:
        from rag_assets.events.served_answers import answer_events

        answer_events().close()
        if instance is not None:
            start.join()
            _report_quietly(instance, 0.0)
