"""`evaluation_report`: the strategies side by side (Markdown + HTML + plots + summary.json)."""

import math
from collections import deque
from collections.abc import Mapping
from typing import TypeVar

import dagster as dg
from dagster_duckdb import DuckDBResource

from rag_assets.core.answering.policy.catalogue import BUDGET_SOURCE, STRATEGIES
from rag_assets.core.answering.published import published_form_choice
from rag_assets.core.evaluation.answer_forms import FORM_BASES, FORM_METRICS, AnswerForms
from rag_assets.core.evaluation.correctness_table import correctness_section
from rag_assets.core.evaluation.evidence import EvidenceSummary, evidence_table, summarise_evidence
from rag_assets.core.evaluation.report import (
    GENERATED_OUTPUT_METRICS,
    SCORING_ROUTER_MODELS,
    ReportData,
    ReportFiles,
    write_report,
)
from rag_assets.core.evaluation.retrieval_report import retrieval_notes
from rag_assets.core.evaluation.scoring import aggregate, aggregate_grid, metric_intervals, score_answers
from rag_assets.core.evaluation.seed_systems import compare_seed_systems
from rag_assets.core.figures import png_markdown
from rag_assets.core.lineage import AnswerRecord, load_answers, utc_now
from rag_assets.core.settings import reports_root
from rag_assets.core.store.evidence import load_evidence
from rag_assets.core.store.question_table import load_question_rows
from rag_assets.core.store.routing_tables import load_router_metrics
from rag_assets.core.store.schemas import ROUTER_METRIC_COLUMNS
from rag_assets.core.store.tree_tables import node_pages
from rag_assets.defs.evaluation.answers import answers
from rag_assets.defs.evaluation.evidence_evaluation import evidence_evaluation
from rag_assets.defs.metadata import markdown_table
from rag_assets.defs.partitions import collection_partitions
from rag_assets.defs.routing.router_metrics import router_metrics
from rag_assets.events.upstream import latest_materialization

SOURCE = "evaluation"
_SCALAR = (int, float, str, bool)
T = TypeVar("T")


def upstream_versions(context: dg.AssetExecutionContext) -> dict[str, dict]:
    """Every asset upstream of this one, as this run consumed it: the latest materialization of this
    partition of each direct dependency, then, through each materialization's data provenance, the
    exact materialization of its own inputs that it was computed from (data version, run, time and
    scalar metadata). Dependencies never materialized are listed as such."""
    partition = context.partition_key if context.has_partition_key else None
    queue: deque[tuple[dg.AssetKey, int | None]] = deque(
        (key, None) for key in sorted(context.assets_def.asset_deps[context.asset_key], key=lambda k: k.path)
    )
    out: dict[str, dict] = {}
    while queue:
        key, storage_id = queue.popleft()
        name = key.to_user_string()
        if name in out:
            continue
        record = latest_materialization(context.instance, key, partition=partition, storage_id=storage_id)
        if record is None:
            out[name] = {"materialized": False}
            continue
        materialization = record.asset_materialization
        tags = materialization.tags or {}
        out[name] = {
            "materialized": True,
            "data_version": tags.get("dagster/data_version"),
            "run_id": record.run_id,
            "timestamp": record.timestamp,
            "metadata": _scalar_metadata(materialization.metadata or {}),
        }
        provenance = dg.DataProvenance.from_tags(tags)
        for parent, parent_storage_id in sorted((provenance.input_storage_ids if provenance else {}).items()):
            if parent_storage_id is not None:
                queue.append((parent, parent_storage_id))
    return dict(sorted(out.items()))


def _scalar_metadata(metadata: dict) -> dict[str, object]:
    """The metadata values a JSON summary can hold: finite numbers, booleans, short strings."""
    out = {}
    for name, value in metadata.items():
        raw = getattr(value, "value", value)
        if (
            isinstance(raw, _SCALAR)
            and not (isinstance(raw, str) and len(raw) > 200)
            and not (isinstance(raw, float) and not math.isfinite(raw))
        ):
            out[name] = raw
    return out


def _router_rows(con, collection: str) -> tuple[dict[str, dict[str, float]], list[str]]:
    """The collection's router metrics per model, finite values only, and notes on what was left out."""
    out: dict[str, dict[str, float]] = {}
    notes: list[str] = []
    for model, values in load_router_metrics(con, collection).items():
        if not values["samples"]:
            notes.append(f"router metrics of {model!r} scored no samples: left out")
            continue
        metrics = {c: float(v) for c, v in values.items() if v is not None and math.isfinite(float(v))}
        dropped = sorted(set(values) - set(metrics))
        if dropped:
            notes.append(f"router metrics of {model!r}: {dropped} not finite, left out")
        out[model] = metrics
    return out, notes


def _metric(values: dict[str, float], name: str) -> str:
    value = values.get(name)
    if value is None:
        return ""
    return str(round(value)) if name == "samples" else f"{value:.3f}"


@dg.asset(
    partitions_def=collection_partitions,
    deps=[evidence_evaluation, answers, router_metrics],
    group_name="evaluation",
    kinds={"python", "html"},
    description="The evidence evaluation first (every evaluation question, no reader, with intervals and "
    "paired differences), then metrics of every strategy side by side (answer quality, evidence quality and length, "
    "router cost), test-time scaling curves and router base-vs-adapter, as Markdown, standalone HTML, "
    "PNG plots and summary.json (with the versions of every upstream asset) under "
    "`{data dir}/reports/{collection}/{run id}/` and `.../latest/`.",
)
def evaluation_report(context: dg.AssetExecutionContext, catalogue: DuckDBResource) -> dg.MaterializeResult:
    collection = context.partition_key
    with catalogue.get_connection() as con:
        records = load_answers(con, collection, SOURCE)
        questions = {q.qid: q for q in load_question_rows(con, collection)}
        router, notes = _router_rows(con, collection)
        evidence_rows = load_evidence(con, collection)
        form = published_form_choice(con, collection)
        pages = node_pages(con, collection, sorted({d for r in records for d in r.cited_doc_ids}))
    # each citation's pages, for page hit and a first citation on a gold page (paged documents)
    scored = score_answers(
        records, questions, lambda r: [(d, pages.get((d, n), "")) for d, n in zip(r.cited_doc_ids, r.cited_node_ids)]
    )
    results, scaling = _in_strategy_order(aggregate(scored)), aggregate_grid(scored)
    notes += _answer_notes(records)
    run_ids = sorted({r.run_id for r in records})
    versions = {**_report_versions(context, records), "answers_run_ids": run_ids}
    splits = sorted({questions[r.qid].split for r in records if r.qid in questions})
    evidence = summarise_evidence(evidence_rows, BUDGET_SOURCE)
    if evidence is None:
        notes.append("no evidence evaluation: materialize `evidence_evaluation` for the table over every question")
    evidence_splits = sorted({questions[r.qid].split for r in evidence_rows if r.qid in questions})
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
        evidence=evidence,
        evidence_split="+".join(evidence_splits),
        intervals=metric_intervals(scored),
        seed_systems=compare_seed_systems(records, scored),
        answer_forms=AnswerForms(compare_seed_systems(records, scored, FORM_BASES, FORM_METRICS), form),
        correctness=correctness_section(scored, questions, list(results)),
    )
    files = write_report(data, reports_root())
    context.log.info(f"evaluation report: {files.html}")
    return dg.MaterializeResult(metadata=_report_metadata(files, data, len(records), evidence, router))


def _in_strategy_order(results: dict[str, T]) -> dict[str, T]:
    """The strategies in the order the answers asset names them (baselines first, ablations last),
    not in the order the rows came back from the catalogue."""
    rank = {name: i for i, name in enumerate(STRATEGIES)}
    return dict(sorted(results.items(), key=lambda item: (rank.get(item[0], len(rank)), item[0])))


def _answer_notes(records: list[AnswerRecord]) -> list[str]:
    """Notes on the answers: none yet, evidence cut to a budget, and the retrieval's."""
    notes: list[str] = []
    if not records:
        notes.append("no evaluation answers: materialize `answers` (with questions) first")
    budgeted = sorted({r.strategy for r in records if not r.grid and r.knobs_dict.get("evidence_budget_from")})
    if budgeted:
        notes.append(
            f"{', '.join(budgeted)}: routed evidence cut to at most the words rag-hybrid gave the reader for the "
            "same question (rdr2-free: uncut), so evidence quality is compared at equal length"
        )
    notes += retrieval_notes(records)  # rewrite use, namespace accuracy, share searched, search ms
    return notes


def _report_versions(context: dg.AssetExecutionContext, records: list[AnswerRecord]) -> dict[str, object]:
    """The versions the report rests on: upstream assets, index, router and reader models, embedder."""
    # the index and embedder every row that searched read (no-retrieval rows record none)
    versions_of_answers = next(
        (r.versions_dict for r in records if r.strategy_kind != "none"), records[0].versions_dict if records else {}
    )
    return {
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
    }


def _report_metadata(
    files: ReportFiles,
    data: ReportData,
    answer_count: int,
    evidence: EvidenceSummary | None,
    router: dict[str, dict[str, float]],
) -> dict[str, object]:
    """The report in the UI: its files, headline, counts, notes, evidence and router tables."""
    metadata: dict[str, object] = {
        "headline": dg.MetadataValue.md(files.headline_markdown),
        "report_html": dg.MetadataValue.path(str(files.html)),
        "report_markdown": dg.MetadataValue.path(str(files.markdown)),
        "summary_json": dg.MetadataValue.path(str(files.summary)),
        "latest": dg.MetadataValue.path(str(files.latest)),
        # counts as text, so the Plots tab charts the metrics over materializations, not counts
        "counts": dg.MetadataValue.text(
            f"{len(data.results)} strategies, {answer_count} answers, {data.questions} questions, "
            f"{evidence.questions if evidence else 0} evidence questions"
        ),
        **plotted_metrics(data.results),
        "notes": dg.MetadataValue.md("\n".join(f"- {n}" for n in data.notes) or "none"),
    }
    if evidence is not None:
        header, rows = evidence_table(evidence)
        metadata["evidence"] = dg.MetadataValue.md(markdown_table(header, rows))
    if "metrics" in files.plots:
        metadata["main_plot"] = dg.MetadataValue.path(str(files.plots["metrics"]))
    if files.plots:  # every figure of the report, as images
        metadata["plots"] = dg.MetadataValue.md(
            "\n\n".join(f"**{name}**\n\n{png_markdown(path, name)}" for name, path in files.plots.items())
        )
    if router:
        metadata["router"] = dg.MetadataValue.md(_router_markdown(router))
    return metadata


PLOTTED = (("f1", "rouge_l", "right"), ("evidence_recall", "passage_hit"))  # an answer and an evidence metric


def plotted_metrics(results: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Per strategy, its answer metric (F1, else ROUGE-L, else right) and evidence metric (evidence
    recall, else passage hit) as numbers: what the asset's Plots tab charts run after run."""
    present = {m for metrics in results.values() for m in metrics}
    chosen = [next(m for m in group if m in present) for group in PLOTTED if any(m in present for m in group)]
    return {
        f"{metric} {strategy}": round(float(metrics[metric]), 4)
        for strategy, metrics in results.items()
        for metric in chosen
        if metric in metrics and math.isfinite(float(metrics[metric]))
    }


def _router_markdown(router: dict[str, dict[str, float]]) -> str:
    """The router metrics per model (n/a where a scoring router generates no output to measure)."""
    return markdown_table(
        ["model", *ROUTER_METRIC_COLUMNS],
        [
            (
                m,
                *(
                    "n/a" if m in SCORING_ROUTER_MODELS and k in GENERATED_OUTPUT_METRICS else _metric(v, k)
                    for k in ROUTER_METRIC_COLUMNS
                ),
            )
            for m, v in router.items()
        ],
    )
