"""Checks guarding `routing_actions` (the run's collection only): every usable target valid for its
subtree; all action kinds present; the teacher's failure rate bounded."""

import dagster as dg
from dagster_duckdb import DuckDBResource

from checks.partition import checked_partition
from rag_assets.core.routing.action_format import parse_router_output
from rag_assets.core.routing.samples import RoutingSample, restore, sample_from_row
from rag_assets.core.store.collections import count_by
from rag_assets.core.store.routing_tables import load_usable_targets, teacher_failures
from rag_assets.core.store.tree_tables import load_trees
from rag_assets.defs.metadata import markdown_table

ACTION_KINDS = ("answer", "expand", "refuse")
MAX_TEACHER_FAILURE_RATE = 0.5


@dg.asset_check(
    asset="routing_actions",
    blocking=True,
    description="Every usable teacher target (kind not 'failed') parses against its subtree with no expelled id: "
    "ANSWER only on visible content, EXPAND only on collapsed headings.",
)
def routing_targets_are_valid(context: dg.AssetCheckExecutionContext, catalogue: DuckDBResource) -> dg.AssetCheckResult:
    collection = checked_partition(context)
    fields = list(RoutingSample.__dataclass_fields__)
    with catalogue.get_connection() as con:
        rows = load_usable_targets(con, collection, fields) if collection else []
        trees = {d: n for d, (n, _) in load_trees(con, collection).items()} if rows else {}
    bad = []
    for *sample_fields, target in rows:
        sample = sample_from_row(sample_fields)
        _, view = restore(sample, trees[sample.doc_id])
        decision = parse_router_output(target, view)
        if decision.expelled or decision.collapsed:
            bad.append((sample.subtree_id, target[:80]))
    return dg.AssetCheckResult(
        passed=not bad,
        metadata={
            "collection": collection or "-",
            "targets_checked": len(rows),
            "invalid": len(bad),
            "examples": dg.MetadataValue.md(markdown_table(["subtree", "target"], bad[:10]) if bad else "none"),
        },
    )


@dg.asset_check(
    asset="routing_actions",
    description="ANSWER, EXPAND and refusal targets are all present "
    "(the paper's Table 3 counts); warns when a kind is missing.",
)
def routing_action_kinds_present(
    context: dg.AssetCheckExecutionContext, catalogue: DuckDBResource
) -> dg.AssetCheckResult:
    collection = checked_partition(context)
    with catalogue.get_connection() as con:
        counts = count_by(con, "routing_actions", "kind", collection) if collection else {}
    missing = [k for k in ACTION_KINDS if not counts.get(k)]
    return dg.AssetCheckResult(
        passed=not missing,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={
            "collection": collection or "-",
            **{k: counts.get(k, 0) for k in ACTION_KINDS},
            "missing": ", ".join(missing) or "none",
        },
    )


@dg.asset_check(
    asset="routing_actions",
    description="At most half of the teacher's outputs are unusable "
    "(kind 'failed': no parseable JSON, or only forbidden ids); warns above, since the router "
    "then learns from a biased remainder.",
)
def teacher_failure_rate_bounded(
    context: dg.AssetCheckExecutionContext, catalogue: DuckDBResource
) -> dg.AssetCheckResult:
    collection = checked_partition(context)
    with catalogue.get_connection() as con:
        rows = teacher_failures(con, collection) if collection else []
    total, failed = sum(r[1] for r in rows), sum(r[2] for r in rows)
    rate = failed / total if total else 0.0
    return dg.AssetCheckResult(
        passed=rate <= MAX_TEACHER_FAILURE_RATE,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={
            "collection": collection or "-",
            "failure_rate": round(rate, 4),
            "failed": failed,
            "labels": total,
            "by_teacher": dg.MetadataValue.md(
                markdown_table(["teacher", "labels", "failed"], rows) if rows else "none"
            ),
        },
    )
