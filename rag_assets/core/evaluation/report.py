"""The evaluation report: Markdown, a standalone HTML page, PNG plots and `summary.json`.

Input is already aggregated (`ReportData`: strategy -> metric -> value, the scaling grids, the
router metrics and the versions of everything upstream). Output is one folder, written to a
temporary sibling and renamed into place, so a reader never sees a half-written report; a stable
`latest/` copy next to it is swapped the same way.

First the evidence evaluation (every evaluation question, no reader, intervals and paired
differences) when there is one; then the reader-based rows with question counts and intervals.

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

from rag_assets.core.evaluation.answer_forms import AnswerForms, forms_section
from rag_assets.core.evaluation.evidence import (
    METRIC_HEADERS,
    EvidenceSummary,
    evidence_footnote,
    evidence_table,
    evidence_title,
)
from rag_assets.core.evaluation.report_plots import plot_evidence, plot_metrics, plot_router, plot_scaling
from rag_assets.core.evaluation.scoring import METRIC_ORDER, headline_metrics
from rag_assets.core.evaluation.seed_systems import SeedComparison, seed_section
from rag_assets.core.routing.evaluation_views import views_title
from rag_assets.core.routing.metrics import INTERVAL_LEVEL, INTERVAL_RATES, RATE_COUNTS
from rag_assets.core.tables import markdown_table

ROUTER_METRICS = ("ans_f1", "exp_pre", "ref_acc", "collapsed_rate", "parse_failure_rate", "expelled_per_output")
METRIC_LABELS = {
    "right": "right (holds the gold answer)",
    "f1": "token F1",
    "yes_no_acc": "yes/no acc",
    "rouge_l": "ROUGE-L",
    "correct": "correct (figures, verdict)",
    "gold_contained": "gold contained",
    **METRIC_HEADERS,
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
    # the reader-free evidence evaluation over every evaluation question (None: not materialized)
    evidence: EvidenceSummary | None = None
    evidence_split: str = ""
    # strategy -> rate metric -> 95% bootstrap interval of the reader-based rows
    intervals: dict[str, dict[str, tuple[float, float]]] = field(default_factory=dict)
    # each seed system against its base, paired on the questions both answered
    seed_systems: list[SeedComparison] = field(default_factory=list)
    # each extractive row against its generated row, and the collection's default form
    answer_forms: AnswerForms = field(default_factory=AnswerForms)
    correctness: Section | None = None  # rag-hybrid's and rdr2's correctness per question type


@dataclass(frozen=True, slots=True)
class ReportFiles:
    folder: Path  # reports/<collection>/<run_id>
    latest: Path  # reports/<collection>/latest
    markdown: Path
    html: Path
    summary: Path
    plots: dict[str, Path]  # name -> PNG in `folder`
    headline_markdown: str  # the strategies x key metrics table


# Counts and means of counts: whole numbers (one decimal below 10 when not whole), never 0.000.
COUNTS = frozenset(
    {"questions", "samples", "evidence_words", "router_prompt_tokens", "router_output_tokens", "engine_calls"}
)
# Router metrics that only a generating router has (its output is parsed); a scoring router
# (similarity, encoder) picks nodes by score, so for it they are undefined, not 0.
GENERATED_OUTPUT_METRICS = frozenset({"collapsed_rate", "parse_failure_rate", "expelled_per_output"})
SCORING_ROUTER_MODELS = frozenset({"similarity", "encoder"})
UNDEFINED = "n/a¹"
# A rate over nothing (its count 0): left empty, and the footnote says why.
EMPTY_RATE = "–²"
RATE_LABELS = {"ans_f1": "ANS-F1", "exp_pre": "EXP-PRE", "ref_acc": "REF-ACC"}
EMPTY_RATE_REASONS = {
    "ans_f1": "on none of its views did the gold or the model answer, so there is no F1 to average",
    "exp_pre": "the model wrote no EXPAND line, so its precision is undefined",
    "ref_acc": "its views have no gold refusal, so there is no refusal to get right",
}


def _fmt(value: float, count: bool = False) -> str:
    if count:
        return str(round(value)) if float(value).is_integer() or abs(value) >= 10 else f"{value:.1f}"
    return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"


def _table_rows(
    rows: Mapping[str, Metrics],
    metrics: Sequence[str],
    intervals: Mapping[str, Mapping[str, tuple[float, float]]] | None = None,
) -> list[list[str]]:
    out = []
    for name, values in rows.items():
        cells = [name]
        for m in metrics:
            low_high = (intervals or {}).get(name, {}).get(m)
            cell = _fmt(values[m], m in COUNTS) if m in values else "–"
            cells.append(f"{cell} ({low_high[0]:.3f}–{low_high[1]:.3f})" if low_high and m in values else cell)
        out.append(cells)
    return out


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


Section = tuple[str, list[str], list[list[str]], str, str]  # title, header, rows, plot name, footnote


def _sections(data: ReportData) -> list[Section]:
    """(title, header, rows, plot name or '', footnote or '') for every table of the report."""
    sections: list[Section] = []
    if data.evidence is not None:
        header, rows = evidence_table(data.evidence)
        title = evidence_title(data.evidence, data.evidence_split or "evaluation")
        sections.append((title, header, rows, "evidence", evidence_footnote(data.evidence)))
    metrics = _all_metrics(data.results)
    timed = [s for s, v in data.results.items() if "seconds_p50" in v and "seconds_p95" not in v]
    sections.append(
        (
            f"Reader-based strategies: {data.questions} {data.split or 'evaluation'} questions "
            "(the `questions` column: how many each row answered)",
            ["strategy", *(METRIC_LABELS.get(m, m) for m in metrics)],
            _table_rows(data.results, metrics, data.intervals),
            "metrics",
            ("Rates with their 95% bootstrap interval over the row's questions. " if data.intervals else "")
            + (
                "s/question p95 is left out (–) where a strategy reads its questions in one batch: each "
                "answer's seconds is then the batch mean, so p50 is that mean and a p95 would repeat it."
                if timed
                else ""
            ),
        )
    )
    sections += seed_section(data.seed_systems)
    sections += [data.correctness] if data.correctness is not None else []
    sections += forms_section(data.answer_forms)
    if data.evidence is None:
        sections.append(("Evidence: quality vs length (reader-based rows)", [], [], "evidence", ""))
    for grid, points in data.scaling.items():
        rows = {str(value): values for value, values in points.items()}
        grid_metrics = _all_metrics(rows)
        counts = sorted({int(v["questions"]) for v in points.values() if "questions" in v})
        sections.append(
            (
                f"Test-time scaling: {GRID_LABELS.get(grid, grid)}, "
                f"{'/'.join(map(str, counts)) or data.questions} questions",
                [grid, *(METRIC_LABELS.get(m, m) for m in grid_metrics)],
                _table_rows(rows, grid_metrics),
                "",
                "",
            )
        )
    if data.scaling:
        sections.append(("Scaling curves", [], [], "scaling", ""))
    if data.router_metrics:
        sections.append(_router_section(data.router_metrics))
    return sections


def undefined_router_metrics(router_metrics: Mapping[str, Metrics]) -> dict[str, set[str]]:
    """model -> the metrics it has no value for: a scoring router's generated-output metrics, and a
    rate whose count is 0 (no EXPAND line: no EXP-PRE). A count an older catalogue did not record
    is unknown, so its rate is taken as defined."""
    return {
        model: {m for m in GENERATED_OUTPUT_METRICS if model in SCORING_ROUTER_MODELS}
        | {rate for rate, count in RATE_COUNTS.items() if count in values and not values[count]}
        for model, values in router_metrics.items()
    }


def _router_section(router_metrics: Mapping[str, Metrics]) -> Section:
    shown = [m for m in ROUTER_METRICS if any(m in v for v in router_metrics.values())]
    extra = [m for m in ("samples", "questions") if any(v.get(m) for v in router_metrics.values())]
    intervals = {
        model: {r: (v[f"{r}_low"], v[f"{r}_high"]) for r in INTERVAL_RATES if f"{r}_low" in v and f"{r}_high" in v}
        for model, v in router_metrics.items()
    }
    rows = _table_rows(router_metrics, [*shown, *extra], intervals)
    undefined = undefined_router_metrics(router_metrics)
    empty: dict[str, list[str]] = {}  # rate -> the models it is undefined for
    not_generated = False
    for row, model in zip(rows, router_metrics):
        for i, m in enumerate(shown, start=1):
            if m in undefined[model] and m in GENERATED_OUTPUT_METRICS:
                row[i], not_generated = UNDEFINED, True
            elif m in undefined[model]:
                row[i] = EMPTY_RATE
                empty.setdefault(m, []).append(model)
    views = [int(v["samples"]) for v in router_metrics.values() if "samples" in v]
    questions = max((int(v.get("questions", 0)) for v in router_metrics.values()), default=0)
    dev_test = any(v.get("dev_test") for v in router_metrics.values())
    notes = []
    if any(intervals.values()):
        notes.append(
            f"ANS-F1, EXP-PRE and REF-ACC with their {INTERVAL_LEVEL:.0%} bootstrap interval over questions "
            "(the views of one question are resampled together)."
        )
    if dev_test:
        notes.append("Gold: the oracle's labels from each question's gold; no router trained on these questions.")
    if not_generated:
        notes.append(
            "¹ undefined for a scoring router (similarity, encoder): it scores nodes instead of generating text, "
            "so there is no output to collapse, fail to parse or expel."
        )
    if empty:
        rates = [f"{RATE_LABELS[r]} of {', '.join(empty[r])} ({EMPTY_RATE_REASONS[r]})" for r in shown if r in empty]
        notes.append(f"² undefined, left empty: {'; '.join(rates)}.")
    kinds = "each kind untrained vs trained (base/adapter: the LLM; similarity/encoder: the sentence encoder)"
    title = f"{views_title(max(views), questions, dev_test, min(views)) if views else 'Router'}: {kinds}"
    return title, ["model", *shown, *extra], rows, "router", " ".join(notes)


def versions_rows(versions: Mapping) -> list[list[str]]:
    """The versions as table rows: one per upstream asset (data version, run, time), then the
    index, routers and models the answers name."""
    from datetime import UTC, datetime

    rows: list[list[str]] = []
    for asset, info in (versions.get("assets") or {}).items():
        if not info.get("materialized"):
            rows.append([asset, "never materialized", "", ""])
            continue
        when = (
            datetime.fromtimestamp(info["timestamp"], UTC).strftime("%Y-%m-%d %H:%M:%S")
            if info.get("timestamp") is not None
            else ""
        )
        rows.append([asset, str(info.get("data_version") or "")[:16], str(info.get("run_id") or "")[:8], when])
    for name, value in versions.items():
        if name == "assets" or value in (None, "", [], {}):
            continue
        if isinstance(value, Mapping):
            value = ", ".join(f"{k}={v}" for k, v in value.items())
        elif isinstance(value, (list, tuple)):
            value = ", ".join(str(v)[:8] for v in value)
        rows.append([name, str(value), "", ""])
    return rows


VERSIONS_HEADER = ["asset / piece", "data version or id", "run", "materialized (UTC)"]


def summary_dict(data: ReportData) -> dict:
    """`summary.json`: collection -> strategy -> metric -> value, the tables and upstream versions."""
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
        "intervals": {data.collection: {s: {m: list(v) for m, v in ms.items()} for s, ms in data.intervals.items()}},
        "evidence": {data.collection: data.evidence.as_dict() if data.evidence else {}},
        "seed_systems": {data.collection: [c.as_dict() for c in data.seed_systems]},
        "answer_forms": {data.collection: data.answer_forms.as_dict()},
        "correctness": {data.collection: list(data.correctness or ())},  # [title, header, rows, plot, footnote]
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
    for title, header, rows, plot, footnote in _sections(data):
        lines += [f"## {title}", ""]
        if header:
            lines += [markdown_table(header, rows), ""]
        if footnote:
            lines += [footnote, ""]
        if plot in plots:
            lines += [f"![{title}]({plots[plot]})", ""]
    lines += ["## Versions", "", markdown_table(VERSIONS_HEADER, versions_rows(data.versions)), ""]
    lines += ["(all of them, with each asset's metadata, in summary.json)", ""]
    return "\n".join(lines)


_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}
th:first-child,td:first-child{text-align:left}thead{background:#f0f2f8}img{max-width:100%;border:1px solid #eee}
pre{background:#f7f7f7;padding:1em;font-size:12px;overflow:auto}blockquote{color:#875;margin-left:0}
.note{font-size:12px;color:#555}"""


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
    for title, header, rows, plot, footnote in _sections(data):
        parts.append(f"<h2>{html.escape(title)}</h2>")
        if header:
            parts.append(_html_table(header, rows))
        if footnote:
            parts.append(f"<p class='note'>{html.escape(footnote)}</p>")
        if plot in plots:
            parts.append(f"<img src='{html.escape(plots[plot])}' alt='{html.escape(title)}'>")
    parts.append("<h2>Versions</h2>" + _html_table(VERSIONS_HEADER, versions_rows(data.versions)))
    parts.append("<p class='note'>(all of them, with each asset's metadata, in summary.json)</p></body></html>")
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
        router = data.router_metrics
        router_shown = [
            m for m in ROUTER_METRICS if m != "expelled_per_output" and any(m in v for v in router.values())
        ]
        for name, draw in (
            ("metrics", lambda path: plot_metrics(data.results, path, METRIC_LABELS)),
            ("evidence", lambda path: plot_evidence(data.results, path, METRIC_LABELS, data.evidence)),
            ("scaling", lambda path: plot_scaling(data.scaling, path, {**METRIC_LABELS, **GRID_LABELS})),
            ("router", lambda path: plot_router(router, path, router_shown, undefined_router_metrics(router))),
        ):
            if draw(staging / f"{name}.png"):
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
