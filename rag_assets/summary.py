"""The summary `rag run` prints at the end: what each stage holds, per collection, then the
evaluation headline (strategies x key metrics) and where the HTML report is."""

from __future__ import annotations

import json
import math
from pathlib import Path

from rich.console import Console
from rich.table import Table

from resources.catalogue import default_catalogue

_COUNTS = {
    "documents": "SELECT count(*) FROM source_documents WHERE collection = ?",
    "rejected": "SELECT count(*) FROM rejected_documents WHERE collection = ?",
    "tree nodes": "SELECT count(*) FROM document_nodes WHERE collection = ?",
    "content nodes": "SELECT count(*) FROM document_nodes WHERE collection = ? AND kind = 'content'",
    "max depth": "SELECT coalesce(max(depth), 0) FROM document_nodes WHERE collection = ?",
    "passages": "SELECT count(*) FROM passages WHERE collection = ?",
    "questions": "SELECT count(*) FROM questions WHERE collection = ?",
    "answers": "SELECT count(*) FROM answers WHERE collection = ? AND source = 'evaluation'",
}


def print_summary(console: Console, collections: list[str]) -> None:
    table = Table(title="Catalogue (dagster_home/data/catalogue.duckdb)")
    table.add_column("collection")
    for header in _COUNTS:
        table.add_column(header, justify="right")
    with default_catalogue().get_connection() as con:
        existing = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        for name in collections:
            cells = []
            for sql in _COUNTS.values():
                source = sql.split(" FROM ")[1].split()[0]
                cells.append(str(con.execute(sql, [name]).fetchone()[0]) if source in existing else "-")
            table.add_row(name, *cells)
    console.print(table)


def print_evaluation(console: Console, collections: list[str], reports_root: Path | None = None) -> list[Path]:
    """For each collection with a report: its headline table and the path of its HTML report.
    Returns the HTML paths printed."""
    from rag_assets.core.evaluation import headline_metrics
    from rag_assets.core.report import METRIC_LABELS
    from rag_assets.settings import data_dir

    root = reports_root or data_dir() / "reports"
    printed: list[Path] = []
    for name in collections:
        latest = root / name / "latest"
        summary_file = latest / "summary.json"
        if not summary_file.is_file():
            console.print(f"[yellow]{name}: no evaluation report (materialize `evaluation_report`)[/yellow]")
            continue
        summary = json.loads(summary_file.read_text(encoding="utf-8"))
        results = summary.get("results", {}).get(name, {})
        metrics = headline_metrics(results)
        table = Table(
            title=f"Evaluation: {name} (split {summary.get('split') or '-'}, {summary.get('questions', 0)} questions)"
        )
        table.add_column("strategy")
        for metric in metrics:
            table.add_column(METRIC_LABELS.get(metric, metric), justify="right")
        for strategy, values in results.items():
            cells = []
            for metric in metrics:
                value = values.get(metric)
                cells.append(
                    "-"
                    if value is None or not math.isfinite(value)
                    else f"{value:.3f}"
                    if abs(value) < 10
                    else f"{value:.0f}"
                )
            table.add_row(strategy, *cells)
        console.print(table)
        for note in summary.get("notes", []):
            console.print(f"  [dim]note: {note}[/dim]")
        html = latest / "report.html"
        run_html = root / name / str(summary.get("run_id", "")) / "report.html"
        shown = run_html if run_html.is_file() else html
        console.print(f"  HTML report: {shown}")
        printed.append(shown)
    return printed
