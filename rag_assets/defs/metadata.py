"""Small helpers that turn domain results into Dagster-UI-friendly Markdown."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import dagster as dg
import duckdb

from rag_assets.core.corpus.document_changes import DocumentChange, change_counts, changes_markdown
from rag_assets.core.figures import figure, png_bytes, png_markdown
from rag_assets.core.store.collections import count_rows
from rag_assets.core.store.schemas import table_columns
from rag_assets.core.tables import markdown_table
from rag_assets.defs.column_descriptions import column_description

PLOT_COLOUR = "#4f6bed"
CATALOGUE_DATABASE = "catalogue"  # the DuckDB file's stem: tables are catalogue.main.<table>


def table_metadata(table: str) -> dict[str, object]:
    """Definition metadata of an asset stored as a catalogue table: its qualified name and its
    columns, so the UI shows the schema before anything is materialized."""
    return {
        "dagster/table_name": f"{CATALOGUE_DATABASE}.main.{table}",
        "dagster/column_schema": dg.TableSchema(
            columns=[
                dg.TableColumn(
                    name,
                    kind,
                    description=column_description(table, name),
                    constraints=dg.TableColumnConstraints(nullable=nullable),
                )
                for name, kind, nullable in table_columns(table)
            ]
        ),
    }


def row_count_metadata(con: duckdb.DuckDBPyConnection, table: str, collection: str) -> dict[str, int]:
    """The standard row-count keys of a partitioned catalogue table: rows of this collection
    (the partition) and rows of the whole table."""
    return {
        "dagster/partition_row_count": count_rows(con, table, collection),
        "dagster/row_count": count_rows(con, table),
    }


def report_side_table(
    context: dg.AssetExecutionContext, con: duckdb.DuckDBPyConnection, table: str, **metadata: object
) -> None:
    """Record that this step rewrote `table`'s rows of the run's collection: a materialization of
    the side table's asset spec (declared in `rag_assets.defs.side_tables`), so its history shows in the UI."""
    collection = context.partition_key
    context.log_event(
        dg.AssetMaterialization(
            asset_key=table,
            partition=collection,
            metadata={
                **row_count_metadata(con, table, collection),
                "written_by": context.asset_key.to_user_string(),
                **metadata,
            },
        )
    )


def document_change_metadata(
    changes: Sequence[DocumentChange], documents_now: int, *, hash_label: str = "content hash (old → new)"
) -> dict[str, object]:
    """Added / changed / deleted / unchanged document counts, the changes as a table (old -> new
    hash) and as JSON (what `rag index` prints)."""
    return {
        **{f"documents_{word}": n for word, n in change_counts(changes, documents_now).items()},
        "document_changes": dg.MetadataValue.md(changes_markdown(changes, hash_label=hash_label)),
        "document_changes_json": dg.MetadataValue.json([c.to_dict() for c in changes]),
    }


def counter_table(name: str, counts: Mapping[object, int] | Counter) -> str:
    return markdown_table([name, "count"], sorted(counts.items(), key=lambda kv: str(kv[0])))


def rejections_markdown(rejections: Sequence) -> str:
    """The rejected documents of a stage (uri, reason) as a table, or "none"."""
    if not rejections:
        return "none"
    return markdown_table(["uri", "reason"], [(r.uri, r.reason) for r in rejections])


def fenced(text: str, max_lines: int = 40) -> str:
    lines = text.splitlines()
    more = f"\n… {len(lines) - max_lines} more lines" if len(lines) > max_lines else ""
    return "```\n" + "\n".join(lines[:max_lines]).replace("```", "ˋˋˋ") + more + "\n```"


def _plot_markdown(title: str, xlabel: str, ylabel: str, draw: Callable[[Any], None]) -> str:
    """A small PNG plot drawn by `draw(axes)`, inlined as a Markdown image for the Dagster UI."""
    with figure(5, 2.6) as (fig, ax):
        draw(ax)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(xlabel, fontsize=9)
        ax.set_ylabel(ylabel, fontsize=9)
    return png_markdown(png_bytes(fig), title)


def histogram_markdown(values: Sequence[float], *, title: str, xlabel: str, bins: int | Sequence[float] = 20) -> str:
    """A histogram of `values` as an inline PNG."""
    return _plot_markdown(title, xlabel, "count", lambda ax: ax.hist(list(values), bins=bins, color=PLOT_COLOUR))


def line_plot_markdown(values: Sequence[float], *, title: str, xlabel: str, ylabel: str) -> str:
    """A line plot (e.g. a loss curve, x = 1..n) as an inline PNG."""
    return _plot_markdown(
        title, xlabel, ylabel, lambda ax: ax.plot(range(1, len(values) + 1), list(values), color=PLOT_COLOUR)
    )
