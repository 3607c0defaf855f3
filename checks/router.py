"""Checks on the router: the default router kind, trained, should route better than its untrained
counterpart (encoder vs similarity, LLM adapter vs base model); every kind is shown."""

import dagster as dg
from dagster_duckdb import DuckDBResource

from rag_assets.core.catalogue import ensure_schema
from rag_assets.core.strategies import DEFAULT_ROUTER_KIND, TRAINED_VS_UNTRAINED
from rag_assets.metadata import markdown_table

COMPARED = ("ans_f1", "ref_acc")


def adapter_beats_base(base: dict[str, float], adapter: dict[str, float] | None) -> bool:
    """Better = at least as good on ANS-F1 and REF-ACC and strictly better on one of them."""
    if adapter is None:
        return False
    return all(adapter[m] >= base[m] for m in COMPARED) and any(adapter[m] > base[m] for m in COMPARED)


@dg.asset_check(
    asset="router_metrics",
    description=f"Warns when a collection's trained {DEFAULT_ROUTER_KIND} router (the default kind) is not better "
    "than its untrained counterpart on ANS-F1 and REF-ACC (at least as good on both, strictly better on one), "
    "or when none was scored. Not blocking: a weak router is a finding, not broken data.",
)
def router_adapter_beats_base(context: dg.AssetCheckExecutionContext, catalogue: DuckDBResource) -> dg.AssetCheckResult:
    # In a partitioned run the check sees the run's collection; run alone, it checks every collection.
    only = context.partition_key if context.has_partition_key else None
    with catalogue.get_connection() as con:
        ensure_schema(con, ["router_metrics"])
        found = con.execute(
            "SELECT collection, model, samples, ans_f1, exp_pre, ref_acc FROM router_metrics "
            "WHERE ? IS NULL OR collection = ? ORDER BY collection, model DESC",
            [only, only],
        ).fetchall()
    rows: dict[str, dict[str, dict[str, float]]] = {}
    for collection, model, *values in found:
        rows.setdefault(collection, {})[model] = dict(zip(("samples", "ans_f1", "exp_pre", "ref_acc"), values))
    if not rows:
        return dg.AssetCheckResult(
            passed=False,
            severity=dg.AssetCheckSeverity.WARN,
            metadata={"reason": f"no router_metrics rows for {only or 'any collection'}"},
        )
    trained, untrained = TRAINED_VS_UNTRAINED[DEFAULT_ROUTER_KIND]
    verdicts = {
        c: adapter_beats_base(m.get(untrained, {k: 0.0 for k in COMPARED}), m.get(trained)) for c, m in rows.items()
    }
    table = markdown_table(
        ["collection", "model", "samples", "ANS-F1", "EXP-PRE", "REF-ACC", f"trained {DEFAULT_ROUTER_KIND} better"],
        [
            (c, model, r["samples"], *(f"{r[k]:.3f}" for k in ("ans_f1", "exp_pre", "ref_acc")), verdicts[c])
            for c, models in rows.items()
            for model, r in models.items()
        ],
    )
    no_adapter = sorted(c for c, m in rows.items() if trained not in m)
    worse = sorted(c for c, ok in verdicts.items() if not ok and c not in no_adapter)
    metadata: dict[str, object] = {
        "metrics": dg.MetadataValue.md(table),
        "router_kind": DEFAULT_ROUTER_KIND,
        "not_better": ", ".join(worse) or "none",
        "no_adapter": ", ".join(no_adapter) or "none",
    }
    if len(rows) == 1:
        [models] = rows.values()
        if trained in models and untrained in models:
            metadata.update({f"{m}_delta": round(models[trained][m] - models[untrained][m], 4) for m in COMPARED})
    return dg.AssetCheckResult(passed=all(verdicts.values()), severity=dg.AssetCheckSeverity.WARN, metadata=metadata)
