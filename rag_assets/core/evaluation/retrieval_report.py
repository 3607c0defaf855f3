"""The retrieval-side lines of the evaluation report: per strategy that rewrites, routes namespaces
or reranks, read back from each answer's recorded retrieval lineage (`versions["retrieval"]`):
how many rewrites were used (the rest fell back to the question), namespace accuracy (the answer's
collection among the namespaces searched), the share of the index searched, and search latency
next to the same strategy's rows searching one collection; for rdr2 rows, how many nodes the
evidence budget's fill added to the router's own ANSWERs."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any, Protocol


class RecordWithRetrieval(Protocol):
    strategy: str
    grid: str
    collection: str

    @property
    def versions_dict(self) -> dict[str, Any]: ...


def retrieval_notes(records: Iterable[RecordWithRetrieval]) -> list[str]:
    """One line per retrieval-side strategy (module doc); none when no answer recorded any."""
    by_strategy: dict[str, list[tuple[str, dict]]] = defaultdict(list)
    for record in records:
        info = record.versions_dict.get("retrieval")
        if info and not record.grid:
            by_strategy[record.strategy].append((record.collection, info))
    lines = []
    for strategy, rows in sorted(by_strategy.items()):
        parts = []
        rewritten = [i for _, i in rows if "kept_original" in i]
        if rewritten:
            used = sum(not i["kept_original"] for i in rewritten)
            parts.append(f"rewrite used for {used}/{len(rewritten)} questions (the rest searched the question)")
        routed = [(c, i) for c, i in rows if "namespaces" in i]
        if routed:
            accuracy = sum(c in i["namespaces"] for c, i in routed) / len(routed)
            share = sum(i["share_searched"] for _, i in routed) / len(routed)
            parts.append(f"namespace accuracy {accuracy:.3f}, {share:.1%} of the index searched")
        filled = [len(i["budget_filled"]) for _, i in rows if "budget_filled" in i]
        if filled:
            parts.append(
                f"the evidence budget's fill added {sum(filled) / len(filled):.1f} scored nodes to the router's "
                f"own ANSWERs in {len(filled)} answers"
            )
        timed = [i["search_seconds"] for _, i in rows if "search_seconds" in i]
        if timed:
            parts.append(f"search {1000 * sum(timed) / len(timed):.0f} ms per question")
        if parts:
            lines.append(f"{strategy}: " + "; ".join(parts))
    return lines
