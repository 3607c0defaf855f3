"""Pipeline work yields the CPU to a service answering on the same machine.

An index run, the sensor's runs and the evaluation do torch matrix products on every core; a
service beside them answers a search many times slower than on a quiet machine, because the
scheduler shares the cores evenly between all runnable threads. Lowering the
pipeline's priority (niceness) instead of its thread count keeps the pipeline's full speed on an
idle machine: the kernel gives a niceness-10 thread about a tenth of the weight of a normal one,
so it runs in the gaps the service leaves and is pre-empted when a request arrives.
(`benchmarks/serving_beside_indexing.py` measures both sides.)

Every process that loads the pipeline's definitions (`rag run`, `rag index`, a Dagster run or
step worker, the daemon that runs the sensors) lowers itself once, to `RAG_PIPELINE_NICE`
(`settings.pipeline_niceness`); the service never loads them and keeps its priority. A process
already lower (started under `nice`) stays where it is: niceness only goes up without root.
"""

from __future__ import annotations

import os


def lower_priority(niceness: int) -> int:
    """Raise the niceness of this process's threads to `niceness` where it is below it; return
    the main thread's niceness now. Linux keeps a niceness per thread and `nice()` changes only
    the caller's, so every thread running now is lowered by its id; threads started later
    inherit their creator's."""
    for thread in _thread_ids():
        try:
            if os.getpriority(os.PRIO_PROCESS, thread) < niceness:
                os.setpriority(os.PRIO_PROCESS, thread, niceness)
        except OSError:  # a thread that ended meanwhile, or a sandbox that forbids it
            continue
    return os.nice(0)


def _thread_ids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc/self/task")]
    except OSError:  # no /proc (not Linux): the process as a whole
        return [0]
