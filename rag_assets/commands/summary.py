"""The summary `rag run` prints at the end: what each stage holds, per collection, then the
evaluation headline (strategies x key metrics) and where the HTML report is.

Readable at any width and when piped: a row's label (collection, strategy) is never cut, and
metric columns that do not fit the width go to a continuation table under the first.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from rag_assets.core.store.collections import stage_counts
from resources.catalogue import default_catalogue

_PADDING = 3  # rich: one space each side of a cell, plus its border


def _min_width(header: str, cells: Sequence[str]) -> int:
    """The narrowest a column can get: its widest cell, or its header's longest word."""
    return max([len(word) for word in header.split()] + [len(c) for c in cells] + [1]) + _PADDING


def column_chunks(label_width: int, columns: Sequence[tuple[str, Sequence[str]]], width: int) -> list[list[int]]:
    """Split the value columns (header, cells) into consecutive groups that each fit `width` next
    to the label column; every group holds at least one column."""
    chunks: list[list[int]] = [[]]
    used = label_width + 1
    for i, (header, cells) in enumerate(columns):
        need = _min_width(header, cells)
        if chunks[-1] and used + need > width:
            chunks.append([])
            used = label_width + 1
        chunks[-1].append(i)
        used += need
    return chunks


def print_fitted_table(
    console: Console,
    title: str,
    label_header: str,
    labels: Sequence[str],
    columns: Sequence[tuple[str, Sequence[str]]],
) -> None:
    """A table of `labels` (rows) x `columns` ((header, one cell per row)); the label column is
    never wrapped or cut, and columns beyond the console width continue in another table."""
    label_width = max([len(label_header), *(len(label) for label in labels)]) + _PADDING
    chunks = column_chunks(label_width, columns, console.width)
    for part, chunk in enumerate(chunks):
        suffix = f" ({part + 1}/{len(chunks)})" if len(chunks) > 1 else ""
        table = Table(title=title + suffix, title_justify="left")
        table.add_column(label_header, no_wrap=True, min_width=label_width - _PADDING)
        for i in chunk:
            header, cells = columns[i]
            table.add_column(header, justify="right", min_width=_min_width(header, cells) - _PADDING)
        for row, label in enumerate(labels):
            table.add_row(label, *(columns[i][1][row] for i in chunk))
        console.print(table)


def print_summary(console: Console, collections: list[str]) -> None:
    """Rows of each stage per collection (stages as rows: one column per collection)."""
    catalogue = default_catalogue()
    with catalogue.get_connection() as con:
        counts = {name: stage_counts(con, name) for name in collections}
    stages = list(next(iter(counts.values()))) if counts else []
    columns = [
        (name, ["-" if counts[name][s] is None else str(counts[name][s]) for s in stages]) for name in collections
    ]
    print_fitted_table(console, "Catalogue", "rows", stages, columns)
    console.print(f"  catalogue: {catalogue.database}", markup=False, highlight=False, soft_wrap=True)


def _cell(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    return f"{value:.3f}" if abs(value) < 10 else f"{value:.0f}"


def print_evaluation(console: Console, collections: list[str], reports_root: Path | None = None) -> list[Path]:
    """For each collection with a report: its headline table and the path of its HTML report.
    Returns the HTML paths printed."""
    from rag_assets.core.evaluation.report import METRIC_LABELS
    from rag_assets.core.evaluation.scoring import headline_metrics
    from rag_assets.core.settings import reports_root as default_reports_root

    root = reports_root or default_reports_root()
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
        strategies = list(results)
        print_fitted_table(
            console,
            f"Evaluation: {name} (split {summary.get('split') or '-'}, {summary.get('questions', 0)} questions)",
            "strategy",
            strategies,
            [(METRIC_LABELS.get(m, m), [_cell(results[s].get(m)) for s in strategies]) for m in metrics],
        )
        for note in summary.get("notes", []):
            console.print(f"  note: {note}", style="dim", markup=False, highlight=False, soft_wrap=True)
        html = latest / "report.html"
        run_html = root / name / str(summary.get("run_id", "")) / "report.html"
        shown = run_html if run_html.is_file() else html
        # one line whatever the width, so it can be copied (or clicked) whole
        console.print(f"HTML report: {shown}", markup=False, highlight=False, soft_wrap=True)
        printed.append(shown)
    return printed


def print_document_changes(console: Console, collections: list[str]) -> None:
    """Per collection: the documents the run found added, changed or deleted (old -> new content
    hash, from `source_documents`) and what the passage index re-embedded (`passage_index`)."""
    import dagster as dg

    from rag_assets.core.corpus.document_changes import short_hash
    from rag_assets.events.upstream import latest_materialization

    with dg.DagsterInstance.get() as instance:
        for name in collections:
            documents = latest_materialization(instance, dg.AssetKey("source_documents"), partition=name)
            index = latest_materialization(instance, dg.AssetKey("passage_index"), partition=name)
            if documents is None or documents.asset_materialization is None:
                continue
            meta = {k: getattr(v, "value", v) for k, v in documents.asset_materialization.metadata.items()}
            words = ("added", "changed", "deleted", "unchanged")
            counts = ", ".join(f"{meta.get(f'documents_{w}', '?')} {w}" for w in words)
            console.print(f"Documents of {name}: {counts}", markup=False, highlight=False, soft_wrap=True)
            changes = meta.get("document_changes_json") or []
            if changes:
                table = Table(title=f"Changed documents: {name}", title_justify="left")
                for header in ("document", "change", "content hash (old → new)"):
                    table.add_column(header, overflow="fold")
                for c in changes:
                    table.add_row(
                        c["doc_id"], c["change"], f"{short_hash(c['old_hash'])} → {short_hash(c['new_hash'])}"
                    )
                console.print(table)
            if index is not None and index.asset_materialization is not None:
                im = {k: getattr(v, "value", v) for k, v in index.asset_materialization.metadata.items()}
                console.print(
                    f"  passage index {im.get('table')} v{im.get('version')} (tag {im.get('tag')}): passages "
                    f"{im.get('added')} added, {im.get('changed')} changed, {im.get('deleted')} deleted, "
                    f"{im.get('unchanged')} unchanged; {im.get('embedded')} embedded",
                    markup=False,
                    highlight=False,
                    soft_wrap=True,
                )
