"""`evaluation_report`: the strategies side by side (Markdown + HTML + plots + summary.json), and the
check that every number of the summary is present and finite."""

import base64
import json
import math
from pathlib import Path

import dagster as dg
from dagster_duckdb import DuckDBResource

from rag_assets.answers import STRATEGIES
from rag_assets.core.catalogue import ensure_schema, load_question_rows
from rag_assets.core.evaluation import aggregate, aggregate_grid, score_answers
from rag_assets.core.lineage import load_answers, utc_now
from rag_assets.core.report import ROUTER_METRICS, ReportData, non_finite_numbers, write_report
from rag_assets.metadata import markdown_table
from rag_assets.partitions import collection_partitions
from rag_assets.settings import data_dir

SOURCE = "evaluation"
_SCALAR = (int, float, str, bool)


def reports_root() -> Path:
    return data_dir() / "reports"


def latest_summary_path(collection: str) -> Path:
    return reports_root() / collection / "latest" / "summary.json"


def upstream_versions(context: dg.AssetExecutionContext) -> dict[str, dict]:
    """For every asset upstream of this one: its latest materialization of this partition (data
    version, run, time and its scalar metadata) from the Dagster instance."""
    graph = context.job_def.asset_layer.asset_graph  # the job's graph (set in every run, unlike repository_def)
    partition = context.partition_key if context.has_partition_key else None
    keys = sorted(graph.get_ancestor_asset_keys(context.asset_key), key=lambda k: k.to_user_string())
    out: dict[str, dict] = {}
    for key in keys:
        records = context.instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=key, asset_partitions=[partition] if partition else None), limit=1
        ).records
        if not records:
            out[key.to_user_string()] = {"materialized": False}
            continue
        record = records[0]
        materialization = record.asset_materialization
        metadata = {}
        for name, value in (materialization.metadata or {}).items():
            raw = getattr(value, "value", value)
            if (
                isinstance(raw, _SCALAR)
                and not (isinstance(raw, str) and len(raw) > 200)
                and not (isinstance(raw, float) and not math.isfinite(raw))
            ):
                metadata[name] = raw
        out[key.to_user_string()] = {
            "materialized": True,
            "data_version": (materialization.tags or {}).get("dagster/data_version"),
            "run_id": record.run_id,
            "timestamp": record.timestamp,
            "metadata": metadata,
        }
    return out


def _router_rows(con, collection: str) -> tuple[dict[str, dict[str, float]], list[str]]:
    ensure_schema(con, ["router_metrics"])
    columns = ("samples", *ROUTER_METRICS)
    rows = con.execute(
        f"SELECT model, {', '.join(columns)} FROM router_metrics WHERE collection = ? ORDER BY model DESC", [collection]
    ).fetchall()
    out: dict[str, dict[str, float]] = {}
    notes: list[str] = []
    for model, *values in rows:
        if not values[0]:
            notes.append(f"router metrics of {model!r} scored no samples: left out")
            continue
        metrics = {c: float(v) for c, v in zip(columns, values) if v is not None and math.isfinite(float(v))}
        dropped = sorted(set(columns) - set(metrics))
        if dropped:
            notes.append(f"router metrics of {model!r}: {dropped} not finite, left out")
        out[model] = metrics
    return out, notes


def _inline_png(path: Path, title: str) -> str:
    return f"![{title}](data:image/png;base64,{base64.b64encode(path.read_bytes()).decode()})"


@dg.asset(
    partitions_def=collection_partitions,
    deps=["answers", "router_metrics"],
    group_name="evaluation",
    kinds={"python", "html"},
    description="Metrics of every strategy side by side (answer quality, evidence quality and length, "
    "router cost), test-time scaling curves and router base-vs-adapter, as Markdown, standalone HTML, "
    "PNG plots and summary.json (with the versions of every upstream asset) under "
    "<data dir>/reports/<collection>/<run id>/ and .../latest/.",
)
def evaluation_report(context: dg.AssetExecutionContext, catalogue: DuckDBResource) -> dg.MaterializeResult:
    collection = context.partition_key
    with catalogue.get_connection() as con:
        records = load_answers(con, collection, SOURCE)
        questions = {q.qid: q for q in load_question_rows(con, collection)}
        router, notes = _router_rows(con, collection)
    scored = score_answers(records, questions)
    results, scaling = aggregate(scored), aggregate_grid(scored)
    # The strategies in the order the answers asset names them (baselines first, ablations last),
    # not in the order the rows came back from the catalogue.
    rank = {name: i for i, name in enumerate(STRATEGIES)}
    results = dict(sorted(results.items(), key=lambda item: (rank.get(item[0], len(rank)), item[0])))
    if not records:
        notes.append("no evaluation answers: materialize `answers` (with questions) first")
    budgeted = sorted({r.strategy for r in records if not r.grid and r.knobs_dict.get("evidence_budget_from")})
    if budgeted:
        notes.append(
            f"{', '.join(budgeted)}: routed evidence cut to at most the words rag-hybrid gave the reader for the "
            "same question (rdr2-free: uncut), so evidence quality is compared at equal length"
        )
    versions_of_answers = records[0].versions_dict if records else {}
    run_ids = sorted({r.run_id for r in records})
    versions = {
        "assets": upstream_versions(context),
        "index": versions_of_answers.get("index"),
        "adapter_id": next(
            (r.versions_dict.get("adapter_id") for r in records if r.strategy == "rdr2" and not r.grid), None
        ),
        "router_model": next(
            (r.versions_dict.get("router_model") for r in records if r.strategy == "rdr2" and not r.grid), None
        ),
        "reader_model": versions_of_answers.get("reader_model"),
        "embedder": versions_of_answers.get("embedder"),
        "answers_run_ids": run_ids,
    }
    splits = sorted({questions[r.qid].split for r in records if r.qid in questions})
    data = ReportData(
        collection=collection,
        run_id=context.run.run_id,
        results=results,
        scaling=scaling,
        router_metrics=router,
        versions=versions,
        notes=notes,
        split="+".join(splits),
        questions=len({r.qid for r in records}),
        created_at=utc_now().isoformat(timespec="seconds") + "Z",
    )
    files = write_report(data, reports_root())
    context.log.info(f"evaluation report: {files.html}")
    metadata: dict[str, object] = {
        "headline": dg.MetadataValue.md(files.headline_markdown),
        "report_html": dg.MetadataValue.path(str(files.html)),
        "report_markdown": dg.MetadataValue.path(str(files.markdown)),
        "summary_json": dg.MetadataValue.path(str(files.summary)),
        "latest": dg.MetadataValue.path(str(files.latest)),
        "strategies": len(results),
        "answers": len(records),
        "questions": data.questions,
        "notes": dg.MetadataValue.md("\n".join(f"- {n}" for n in notes) or "none"),
    }
    if "metrics" in files.plots:
        metadata["main_plot"] = dg.MetadataValue.path(str(files.plots["metrics"]))
        metadata["main_plot_image"] = dg.MetadataValue.md(_inline_png(files.plots["metrics"], "metrics per strategy"))
    if router:
        metadata["router"] = dg.MetadataValue.md(
            markdown_table(
                ["model", *ROUTER_METRICS],
                [(m, *(f"{v.get(k, float('nan')):.3f}" for k in ROUTER_METRICS)) for m, v in router.items()],
            )
        )
    return dg.MaterializeResult(metadata=metadata)


@dg.asset_check(
    asset=evaluation_report,
    description="Fails (ERROR) when the latest summary.json of a "
    "collection misses a number or holds NaN/infinity in its results, scaling or router sections.",
)
def evaluation_summary_is_complete(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
    root = reports_root()
    collections = (
        [context.partition_key]
        if context.has_partition_key
        else sorted(p.name for p in root.iterdir() if (p / "latest" / "summary.json").is_file())
        if root.is_dir()
        else []
    )
    problems: list[tuple[str, str]] = []
    checked: list[str] = []
    for collection in collections:
        path = latest_summary_path(collection)
        if not path.is_file():
            problems.append((collection, f"{path} does not exist"))
            continue
        try:
            summary = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            problems.append((collection, f"{path} is not valid JSON: {err}"))
            continue
        checked.append(str(path))
        problems += [(collection, p) for p in non_finite_numbers(summary)]
    if not collections:
        problems.append(("-", f"no report under {root}"))
    return dg.AssetCheckResult(
        passed=not problems,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={
            "summaries_checked": len(checked),
            "problems": len(problems),
            "details": dg.MetadataValue.md(
                markdown_table(["collection", "problem"], problems[:30]) if problems else "none"
            ),
        },
    )
