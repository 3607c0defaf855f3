"""`answer_events_sensor`: every minute, the `served_answers` event of each stored answer that has
none (its process gone before its in-memory queue was written): rag_assets/events/reconcile.py."""

from __future__ import annotations

import dagster as dg

from rag_assets.events.reconcile import report_unreported

MAX_PER_TICK = 2_000  # about two minutes of SQLite event writes: a backlog is caught up over ticks


@dg.sensor(
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Reports every stored answer without a `served_answers` event (a process killed or a client "
    "gone before its events were written); requests no run.",
)
def answer_events_sensor(context: dg.SensorEvaluationContext) -> dg.SkipReason:
    written = report_unreported(context.instance, limit=MAX_PER_TICK)
    return dg.SkipReason(f"{written} stored answer(s) reported" if written else "every stored answer has its event")
