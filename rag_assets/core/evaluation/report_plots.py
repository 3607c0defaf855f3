"""The evaluation report's PNG plots (matplotlib, Agg backend). Labels never overlap: strategies
are told apart by colour and marker in a legend beside the axes, not by text placed on points."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from rag_assets.core.evaluation.evidence import METRIC_HEADERS, EvidenceSummary
from rag_assets.core.evaluation.scoring import RATE_METRICS, primary_answer_metric, primary_evidence_metric

Metrics = dict[str, float]
MARKERS = "osD^vP*Xhp<>"


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, bbox_inches="tight")
    _pyplot().close(fig)


def plot_metrics(results: Mapping[str, Metrics], path: Path, labels: Mapping[str, str]) -> bool:
    """Grouped bars: the [0, 1] metrics of every strategy (one strategy label per bar group,
    rotated and spaced by the figure's width so long names do not run into each other)."""
    metrics = [m for m in RATE_METRICS if any(m in v for v in results.values())]
    if not results or not metrics:
        return False
    plt = _pyplot()
    strategies = list(results)
    width = 0.8 / len(metrics)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.75 * len(strategies) + 2.5), 4.0), dpi=110)
    for i, metric in enumerate(metrics):
        xs = [s + (i - (len(metrics) - 1) / 2) * width for s in range(len(strategies))]
        ax.bar(xs, [results[s].get(metric, 0.0) for s in strategies], width, label=labels.get(metric, metric))
    ax.set_xticks(range(len(strategies)), strategies, rotation=45, ha="right", rotation_mode="anchor", fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("score")
    ax.set_title("metrics per strategy (reader-based rows)", fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    _save(fig, path)
    return True


def plot_evidence(
    results: Mapping[str, Metrics], path: Path, labels: Mapping[str, str], evidence: EvidenceSummary | None = None
) -> bool:
    """Evidence quality against evidence length, one marker per strategy named in the legend:
    from the evidence evaluation (every question, with 95% intervals) when there is one, else
    from the reader-based rows."""
    plt = _pyplot()
    if evidence is not None and evidence.metrics:
        metric = next(m for m in ("evidence_recall", "section_hit", "passage_hit") if m in evidence.metrics)
        points = {
            s: (v["words"].mean, v[metric].mean, v[metric].mean - v[metric].low, v[metric].high - v[metric].mean)
            for s, v in evidence.rows.items()
            if metric in v
        }
        title = f"{METRIC_HEADERS[metric]} vs words, {evidence.questions} questions (95% CI)"
    else:
        metric = primary_evidence_metric(m for v in results.values() for m in v)
        points = {
            s: (v["evidence_words"], v[metric], 0.0, 0.0)
            for s, v in results.items()
            if metric and metric in v and "evidence_words" in v
        }
        title = f"{labels.get(metric, metric)} vs evidence length"
    if not points:
        return False
    fig, ax = plt.subplots(figsize=(7.5, 3.8), dpi=110)
    for i, (strategy, (x, y, below, above)) in enumerate(points.items()):
        ax.errorbar(
            x,
            y,
            yerr=[[below], [above]],
            fmt=MARKERS[i % len(MARKERS)],
            ms=6,
            capsize=3,
            label=strategy,
            color=f"C{i % 10}",
        )
    ax.set_xlabel("evidence length (words)")
    ax.set_ylabel(labels.get(metric, metric))
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    _save(fig, path)
    return True


def plot_scaling(scaling: Mapping[str, Mapping[int, Metrics]], path: Path, labels: Mapping[str, str]) -> bool:
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
                ax.plot(xs, [points[x].get(metric, 0.0) for x in xs], marker="o", label=labels.get(metric, metric))
        ax.set_xticks(xs)
        ax.set_xlabel(labels.get(grid, grid))
        ax.set_ylim(-0.05, 1.05)
        ax.set_title(f"rdr2 vs {labels.get(grid, grid)}", fontsize=10)
        ax.legend(fontsize=7)
    _save(fig, path)
    return True


def router_bars(
    router_metrics: Mapping[str, Metrics], metrics: list[str], undefined: Mapping[str, set[str]]
) -> dict[str, tuple[list[float], list[float]]]:
    """model -> (bar positions, heights): one bar group per metric, one bar per model in it; a
    metric undefined for a model (`undefined`: model -> metrics) gets no bar rather than a 0."""
    width = 0.8 / len(router_metrics)
    bars = {}
    for i, (model, values) in enumerate(router_metrics.items()):
        offset = (i - (len(router_metrics) - 1) / 2) * width
        drawn = [j for j, m in enumerate(metrics) if m not in undefined.get(model, set())]
        bars[model] = ([j + offset for j in drawn], [values.get(metrics[j], 0.0) for j in drawn])
    return bars


def plot_router(
    router_metrics: Mapping[str, Metrics], path: Path, metrics: list[str], undefined: Mapping[str, set[str]]
) -> bool:
    """Bars: router quality of each router model (`metrics` those shown; no bar where a metric is
    undefined for a model, as the report's table leaves that cell empty)."""
    if not router_metrics or not metrics:
        return False
    plt = _pyplot()
    width = 0.8 / len(router_metrics)
    fig, ax = plt.subplots(figsize=(6.5, 3.2), dpi=110)
    for model, (xs, heights) in router_bars(router_metrics, metrics, undefined).items():
        ax.bar(xs, heights, width, label=model)
    ax.set_xticks(range(len(metrics)), metrics, fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_title("router metrics per model (no bar: undefined for that model)", fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    _save(fig, path)
    return True
