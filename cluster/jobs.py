"""The main job as a reconstructable job: Celery workers rebuild it from this module-level function
(each step runs in a worker process, which imports the code location itself)."""

from __future__ import annotations

import dagster as dg


def main_job() -> dg.JobDefinition:
    from rag_assets.definitions import defs

    return defs.resolve_job_def("main_job")
