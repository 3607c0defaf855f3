"""Check guarding `evaluation_report`: every number of the collection's summary present and finite."""

import json

import dagster as dg

from checks.partition import checked_partition
from rag_assets.core.evaluation.report import non_finite_numbers
from rag_assets.metadata import markdown_table
from rag_assets.settings import latest_summary_path


@dg.asset_check(
    asset="evaluation_report",
    description="Fails (ERROR) when the collection's latest summary.json misses a number or holds "
    "NaN/infinity in its results, scaling or router sections.",
)
def evaluation_summary_is_complete(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
    collection = checked_partition(context)
    problems: list[str] = []
    path = latest_summary_path(collection) if collection else None
    if path is None:
        problems.append("evaluation_report was never materialized")
    elif not path.is_file():
        problems.append(f"{path} does not exist")
    else:
        try:
            summary = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            problems.append(f"{path} is not valid JSON: {err}")
        else:
            problems += non_finite_numbers(summary)
    return dg.AssetCheckResult(
        passed=not problems,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={
            "collection": collection or "-",
            "summary": str(path) if path else "-",
            "problems": len(problems),
            "details": dg.MetadataValue.md(
                markdown_table(["problem"], [(p,) for p in problems[:30]]) if problems else "none"
            ),
        },
    )
