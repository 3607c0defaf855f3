"""Checks guarding `routing_actions`: every usable target valid for its subtree; all action kinds
present; the teacher's failure rate bounded."""

import dagster as dg
from dagster_duckdb import DuckDBResource

from rag_assets.core.catalogue import load_trees
from rag_assets.core.router_io import parse_router_output
from rag_assets.core.routing_samples import RoutingSample, restore
from rag_assets.metadata import markdown_table


@dg.asset_check(
    asset="routing_actions",
    blocking=True,
    description="Every usable teacher target (kind not 'failed') parses against its subtree with no expelled id: "
    "ANSWER only on visible content, EXPAND only on collapsed headings.",
)
def routing_targets_are_valid(catalogue: DuckDBResource) -> dg.AssetCheckResult:
    with catalogue.get_connection() as con:
        rows = con.execute(
            f"SELECT {', '.join('s.' + f for f in RoutingSample.__dataclass_fields__)}, a.target, s.collection "
            "FROM routing_actions a JOIN routing_subtrees s USING (collection, subtree_id) "
            "WHERE a.kind <> 'failed'"
        ).fetchall()  # failed teacher outputs are never trained on
        trees: dict = {}
        for collection in {r[-1] for r in rows}:
            trees.update({d: n for d, (n, _) in load_trees(con, collection).items()})
    bad = []
    for *fields, target, _ in rows:
        sample = RoutingSample(*fields)
        _, view = restore(sample, trees[sample.doc_id])
        decision = parse_router_output(target, view)
        if decision.expelled or decision.collapsed:
            bad.append((sample.subtree_id, target[:80]))
    return dg.AssetCheckResult(
        passed=not bad,
        metadata={
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
def routing_action_kinds_present(catalogue: DuckDBResource) -> dg.AssetCheckResult:
    with catalogue.get_connection() as con:
        counts = dict(con.execute("SELECT kind, count(*) FROM routing_actions GROUP BY 1").fetchall())
    missing = [k for k in ("answer", "expand", "refuse") if not counts.get(k)]
    return dg.AssetCheckResult(
        passed=not missing,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={
            **{k: counts.get(k, 0) for k in ("answer", "expand", "refuse")},
            "missing": ", ".join(missing) or "none",
        },
    )


MAX_TEACHER_FAILURE_RATE = 0.5


@dg.asset_check(
    asset="routing_actions",
    description="At most half of the teacher's outputs are unusable "
    "(kind 'failed': no parseable JSON, or only forbidden ids); warns above, since the router "
    "then learns from a biased remainder.",
)
def teacher_failure_rate_bounded(catalogue: DuckDBResource) -> dg.AssetCheckResult:
    with catalogue.get_connection() as con:
        rows = con.execute(
            "SELECT teacher, count(*), count(*) FILTER (WHERE kind = 'failed') FROM routing_actions "
            "GROUP BY 1 ORDER BY 1"
        ).fetchall()
    total, failed = sum(r[1] for r in rows), sum(r[2] for r in rows)
    rate = failed / total if total else 0.0
    return dg.AssetCheckResult(
        passed=rate <= MAX_TEACHER_FAILURE_RATE,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={
            "failure_rate": round(rate, 4),
            "failed": failed,
            "labels": total,
            "by_teacher": dg.MetadataValue.md(
                markdown_table(["teacher", "labels", "failed"], rows) if rows else "none"
            ),
        },
    )
