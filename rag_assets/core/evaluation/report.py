"""The evaluation report: Markdown, a standalone HTML page, PNG plots and `summary.json`.

Input is already aggregated (`ReportData`: strategy -> metric -> value, the scaling grids, the
router metrics and the versions of everything upstream). Output is one folder, written to a
temporary sibling and renamed into place, so a reader never sees a half-written report; a stable
`latest/` copy next to it is swapped the same way.

Layout under `<reports root>/<collection>/`:
    <run_id>/report.md  report.html  summary.json  metrics.png  evidence.png  scaling.png  router.png
    latest/             the same files, of the newest report
"""

from __future__ import annotations

import html
import json
import math
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rag_assets.core.evaluation.scoring import (
    METRIC_ORDER,
    RATE_METRICS,
    headline_metrics,
    primary_answer_metric,
    primary_evidence_metric,
)
from rag_assets.core.tables import markdown_table

ROUTER_METRICS = ("ans_f1", "exp_pre", "ref_acc", "collapsed_rate", "parse_failure_rate", "expelled_per_output")
METRIC_LABELS = {
    "em": "EM (containment)",
    "f1": "token F1",
    "yes_no_acc": "yes/no acc",
    "rouge_l": "ROUGE-L",
    "passage_hit": "passage hit",
    "evidence_recall": "evidence recall",
    "section_hit": "section hit",
    "evidence_words": "evidence words",
    "router_prompt_tokens": "router in tok",
    "router_output_tokens": "router out tok",
    "engine_calls": "engine calls",
    "seconds_p50": "s/question p50",
    "seconds_p95": "s/question p95",
    "questions": "questions",
}
GRID_LABELS = {"expand_iterations": "expand iterations", "top_k": "top-k documents"}

Metrics = dict[str, float]


@dataclass(slots=True)
class ReportData:
    collection: str
    run_id: str
    results: dict[str, Metrics]  # strategy -> metric -> value (main comparison)
    scaling: dict[str, dict[int, Metrics]] = field(default_factory=dict)  # grid -> value -> metric -> value
    # model ('base' | 'adapter' (LLM) | 'similarity' | 'encoder') -> metric -> value
    router_metrics: dict[str, Metrics] = field(default_factory=dict)
    versions: dict = field(default_factory=dict)  # upstream asset versions, index, adapter
    notes: list[str] = field(default_factory=list)  # e.g. "split 'test' is empty: used 'dev'"
    split: str = ""
    questions: int = 0
    created_at: str = ""


@dataclass(frozen=True, slots=True)
class ReportFiles:
    folder: Path  # reports/<collection>/<run_id>
    latest: Path  # reports/<collection>/latest
    markdown: Path
    html: Path
    summary: Path
    plots: dict[str, Path]  # name -> PNG in `folder`
    headline_markdown: str  # the strategies x key metrics table


COUNTS = frozenset({"questions", "samples"})  # shown as whole numbers whatever their size


def _fmt(value: float, count: bool = False) -> str:
    if float(value).is_integer() and (count or abs(value) >= 10):
        return str(int(value))
    return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"


def _table_rows(rows: Mapping[str, Metrics], metrics: Sequence[str]) -> list[list[str]]:
    return [
        [name, *(_fmt(values[m], m in COUNTS) if m in values else "–" for m in metrics)]
        for name, values in rows.items()
    ]


def _html_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _all_metrics(rows: Mapping[str, Metrics]) -> list[str]:
    present = {m for values in rows.values() for m in values}
    return [m for m in (*METRIC_ORDER, "questions") if m in present]


def headline_table(results: Mapping[str, Metrics]) -> str:
    """Markdown: one row per strategy, the key metrics as columns."""
    metrics = headline_metrics(results)
    return markdown_table(["strategy", *(METRIC_LABELS.get(m, m) for m in metrics)], _table_rows(results, metrics))


def _sections(data: ReportData) -> list[tuple[str, list[str], list[list[str]], str]]:
    """(title, header, rows, plot name or '') for every table of the report."""
    sections: list[tuple[str, list[str], list[list[str]], str]] = []
    metrics = _all_metrics(data.results)
    sections.append(
        (
            "Strategies",
            ["strategy", *(METRIC_LABELS.get(m, m) for m in metrics)],
            _table_rows(data.results, metrics),
            "metrics",
        )
    )
    sections.append(("Evidence: quality vs length", [], [], "evidence"))
    for grid, points in data.scaling.items():
        rows = {str(value): values for value, values in points.items()}
        grid_metrics = _all_metrics(rows)
        sections.append(
            (
                f"Test-time scaling: {GRID_LABELS.get(grid, grid)}",
                [grid, *(METRIC_LABELS.get(m, m) for m in grid_metrics)],
                _table_rows(rows, grid_metrics),
                "",
            )
        )
    if data.scaling:
        sections.append(("Scaling curves", [], [], "scaling"))
    if data.router_metrics:
        router = [m for m in ROUTER_METRICS if any(m in v for v in data.router_metrics.values())]
        extra = [m for m in ("samples",) if any(m in v for v in data.router_metrics.values())]
        sections.append(
            (
                "Router on the validation fold: each kind untrained vs trained "
                "(base/adapter: the LLM; similarity/encoder: the sentence encoder)",
                ["model", *router, *extra],
                _table_rows(data.router_metrics, [*router, *extra]),
                "router",
            )
        )
    return sections


# ----------------------------------------------------------------------------------------- plots


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_metrics(results: Mapping[str, Metrics], path: Path) -> bool:
    """Grouped bars: the [0, 1] metrics of every strategy."""
    metrics = [m for m in RATE_METRICS if any(m in v for v in results.values())]
    if not results or not metrics:
        return False
    plt = _pyplot()
    strategies = list(results)
    width = 0.8 / len(metrics)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(strategies) + 2), 3.4), dpi=110)
    for i, metric in enumerate(metrics):
        xs = [s + (i - (len(metrics) - 1) / 2) * width for s in range(len(strategies))]
        ax.bar(xs, [results[s].get(metric, 0.0) for s in strategies], width, label=METRIC_LABELS.get(metric, metric))
    ax.set_xticks(range(len(strategies)), strategies, rotation=25, ha="right", fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("score")
    ax.set_title("metrics per strategy", fontsize=10)
    ax.legend(fontsize=7, ncols=min(4, len(metrics)), loc="upper left")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def plot_evidence(results: Mapping[str, Metrics], path: Path) -> bool:
    """Evidence quality (recall, section hit or passage hit) against evidence length, per strategy."""
    metric = primary_evidence_metric(m for v in results.values() for m in v)
    points = {s: v for s, v in results.items() if metric and metric in v and "evidence_words" in v}
    if not points:
        return False
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 3.4), dpi=110)
    for strategy, values in points.items():
        ax.scatter(values["evidence_words"], values[metric], s=36)
        ax.annotate(
            strategy, (values["evidence_words"], values[metric]), fontsize=7, xytext=(4, 3), textcoords="offset points"
        )
    ax.set_xlabel("evidence length (words)")
    ax.set_ylabel(METRIC_LABELS.get(metric, metric))
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(f"{METRIC_LABELS.get(metric, metric)} vs evidence length", fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def plot_scaling(scaling: Mapping[str, Mapping[int, Metrics]], path: Path) -> bool:
    """One panel per grid: the primary answer and evidence metrics against the grid value."""
    grids = [g for g, points in scaling.items() if points]
    if not grids:
        return False
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(grids), figsize=(4.6 * len(grids), 3.2), dpi=110, squeeze=False)
    for ax, grid in zip(axes[0], grids):
        points = scaling[grid]
        xs = sorted(points)
        present = {m for v in points.values() for m in v}
        for metric in (primary_answer_metric(present), primary_evidence_metric(present)):
            if metric:
                ax.plot(
                    xs, [points[x].get(metric, 0.0) for x in xs], marker="o", label=METRIC_LABELS.get(metric, metric)
                )
        ax.set_xticks(xs)
        ax.set_xlabel(GRID_LABELS.get(grid, grid))
        ax.set_ylim(-0.05, 1.05)
        ax.set_title(f"rdr2 vs {GRID_LABELS.get(grid, grid)}", fontsize=10)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def plot_router(router_metrics: Mapping[str, Metrics], path: Path) -> bool:
    """Bars: router quality of the base model and of the trained adapter."""
    metrics = [m for m in ROUTER_METRICS if m != "expelled_per_output" and any(m in v for v in router_metrics.values())]
    if not router_metrics or not metrics:
        return False
    plt = _pyplot()
    models = list(router_metrics)
    width = 0.8 / len(models)
    fig, ax = plt.subplots(figsize=(6, 3.2), dpi=110)
    for i, model in enumerate(models):
        xs = [m + (i - (len(models) - 1) / 2) * width for m in range(len(metrics))]
        ax.bar(xs, [router_metrics[model].get(m, 0.0) for m in metrics], width, label=model)
    ax.set_xticks(range(len(metrics)), metrics, fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_title("router: base vs adapter (held-out subtrees)", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


# ---------------------------------------------------------------------------------------- output


def summary_dict(data: ReportData) -> dict:
    """What `summary.json` holds: collection -> strategy -> metric -> value, the scaling grids, the
    router metrics and the versions of every upstream asset."""
    return {
        "collection": data.collection,
        "run_id": data.run_id,
        "created_at": data.created_at,
        "split": data.split,
        "questions": data.questions,
        "results": {data.collection: data.results},
        "scaling": {
            data.collection: {grid: {str(v): m for v, m in points.items()} for grid, points in data.scaling.items()}
        },
        "router_metrics": {data.collection: data.router_metrics},
        "versions": data.versions,
        "notes": data.notes,
    }


def non_finite_numbers(summary: Mapping) -> list[str]:
    """Paths (`results.coll.rdr2.f1`) of every metric that is missing (None), NaN, infinite or not a
    number, in the results, scaling and router sections of a summary."""
    bad: list[str] = []

    def walk(value: object, where: str) -> None:
        if isinstance(value, Mapping):
            if not value:
                bad.append(f"{where} (empty)")
            for key, item in value.items():
                walk(item, f"{where}.{key}")
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            bad.append(f"{where} = {value!r}")

    for section in ("results", "scaling", "router_metrics"):
        if section not in summary:
            bad.append(f"{section} (missing)")
            continue
        for collection, values in summary[section].items():
            if section == "results" or values:
                walk(values, f"{section}.{collection}")
    return bad


def render_markdown(data: ReportData, plots: Mapping[str, str]) -> str:
    lines = [
        f"# Evaluation report: {data.collection}",
        "",
        f"run `{data.run_id}` · {data.created_at} · split `{data.split}` · {data.questions} questions",
        "",
    ]
    for note in data.notes:
        lines.append(f"> {note}")
    if data.notes:
        lines.append("")
    for title, header, rows, plot in _sections(data):
        lines += [f"## {title}", ""]
        if header:
            lines += [markdown_table(header, rows), ""]
        if plot in plots:
            lines += [f"![{title}]({plots[plot]})", ""]
    lines += ["## Versions", "", "```json", json.dumps(data.versions, indent=1, sort_keys=True, default=str), "```", ""]
    return "\n".join(lines)


_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}
th:first-child,td:first-child{text-align:left}thead{background:#f0f2f8}img{max-width:100%;border:1px solid #eee}
pre{background:#f7f7f7;padding:1em;font-size:12px;overflow:auto}blockquote{color:#875;margin-left:0}"""


def render_html(data: ReportData, plots: Mapping[str, str]) -> str:
    """A standalone page (inline CSS, no scripts); images are the PNG files beside it."""
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>Evaluation report: {html.escape(data.collection)}"
        f"</title><style>{_CSS}</style></head><body>",
        f"<h1>Evaluation report: {html.escape(data.collection)}</h1>",
        f"<p>run <code>{html.escape(data.run_id)}</code> · {html.escape(data.created_at)} · split "
        f"<code>{html.escape(data.split)}</code> · {data.questions} questions</p>",
    ]
    parts += [f"<blockquote>{html.escape(note)}</blockquote>" for note in data.notes]
    for title, header, rows, plot in _sections(data):
        parts.append(f"<h2>{html.escape(title)}</h2>")
        if header:
            parts.append(_html_table(header, rows))
        if plot in plots:
            parts.append(f"<img src='{html.escape(plots[plot])}' alt='{html.escape(title)}'>")
    parts.append(
        "<h2>Versions</h2><pre>"
        + html.escape(json.dumps(data.versions, indent=1, sort_keys=True, default=str))
        + "</pre></body></html>"
    )
    return "\n".join(parts)


def _swap_in(source: Path, target: Path) -> None:
    """Replace `target` by the complete folder `source` (same file system) by renames only."""
    if target.exists():
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        os.replace(target, old)
        os.replace(source, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(source, target)


def write_report(data: ReportData, reports_root: Path) -> ReportFiles:
    """Render everything into `<reports_root>/<collection>/<run_id>/` and refresh `latest/`."""
    base = Path(reports_root) / data.collection
    base.mkdir(parents=True, exist_ok=True)
    folder_name = data.run_id or "adhoc"
    if folder_name == "latest" or "/" in folder_name:
        raise ValueError(f"run id {data.run_id!r} cannot name a report folder")
    staging = Path(tempfile.mkdtemp(prefix=f".{folder_name}.", dir=base))
    try:
        plots: dict[str, str] = {}
        for name, draw, arg in (
            ("metrics", plot_metrics, data.results),
            ("evidence", plot_evidence, data.results),
            ("scaling", plot_scaling, data.scaling),
            ("router", plot_router, data.router_metrics),
        ):
            if draw(arg, staging / f"{name}.png"):
                plots[name] = f"{name}.png"
        (staging / "report.md").write_text(render_markdown(data, plots), encoding="utf-8")
        (staging / "report.html").write_text(render_html(data, plots), encoding="utf-8")
        (staging / "summary.json").write_text(json.dumps(summary_dict(data), indent=1, default=str), encoding="utf-8")
        latest_staging = Path(tempfile.mkdtemp(prefix=".latest.", dir=base))
        shutil.copytree(staging, latest_staging, dirs_exist_ok=True)
        _swap_in(staging, base / folder_name)
        _swap_in(latest_staging, base / "latest")
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    folder = base / folder_name
    return ReportFiles(
        folder=folder,
        latest=base / "latest",
        markdown=folder / "report.md",
        html=folder / "report.html",
        summary=folder / "summary.json",
        plots={name: folder / file for name, file in plots.items()},
        headline_markdown=headline_table(data.results),
    )
