"""Checks on the router: the default router kind, trained, should route better than its untrained
counterpart (encoder vs similarity, LLM adapter vs base model); every kind is shown."""

import dagster as dg
from dagster_duckdb import DuckDBResource

from checks.partition import checked_partition
from rag_assets.core.answering.types import DEFAULT_ROUTER_KIND, TRAINED_VS_UNTRAINED
from rag_assets.core.store.routing_tables import load_router_metrics
from rag_assets.defs.metadata import markdown_table

COMPARED = ("ans_f1", "ref_acc")
SHOWN = ("ans_f1", "exp_pre", "ref_acc")


def adapter_beats_base(base: dict[str, float], adapter: dict[str, float] | None) -> bool:
    """Better = at least as good on ANS-F1 and REF-ACC and strictly better on one of them."""
    if adapter is None:
        return False
    return all(adapter[m] >= base[m] for m in COMPARED) and any(adapter[m] > base[m] for m in COMPARED)


@dg.asset_check(
    asset="router_metrics",
    description=f"Warns when the collection's trained {DEFAULT_ROUTER_KIND} router (the default kind) is not better "
    "than its untrained counterpart on ANS-F1 and REF-ACC (at least as good on both, strictly better on one), "
    "or when none was scored. Not blocking: a weak router is a finding, not broken data.",
)
def router_adapter_beats_base(context: dg.AssetCheckExecutionContext, catalogue: DuckDBResource) -> dg.AssetCheckResult:
    collection = checked_partition(context)
    with catalogue.get_connection() as con:
        models = load_router_metrics(con, collection) if collection else {}
    if not models:
        return dg.AssetCheckResult(
            passed=False,
            severity=dg.AssetCheckSeverity.WARN,
            metadata={"reason": f"no router_metrics rows for {collection or 'any collection'}"},
        )
    trained, untrained = TRAINED_VS_UNTRAINED[DEFAULT_ROUTER_KIND]
    better = adapter_beats_base(models.get(untrained, {k: 0.0 for k in COMPARED}), models.get(trained))
    metadata: dict[str, object] = {
        "collection": collection,
        "metrics": dg.MetadataValue.md(
            markdown_table(
                ["model", "samples", "ANS-F1", "EXP-PRE", "REF-ACC"],
                [(model, r["samples"], *(f"{r[k]:.3f}" for k in SHOWN)) for model, r in models.items()],
            )
        ),
        "router_kind": DEFAULT_ROUTER_KIND,
        "not_better": collection if trained in models and not better else "none",
        "no_adapter": "none" if trained in models else collection,
    }
    if trained in models and untrained in models:
        metadata.update({f"{m}_delta": round(models[trained][m] - models[untrained][m], 4) for m in COMPARED})
    return dg.AssetCheckResult(passed=better, severity=dg.AssetCheckSeverity.WARN, metadata=metadata)
