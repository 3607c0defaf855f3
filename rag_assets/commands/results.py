"""`rag results`: the headline tables of each collection's latest evaluation report (evidence,
reader rows, router metrics), each captioned with the run it comes from; `--write PAGE` puts them
into the results page between the markers of `--name` (core/evaluation/results_page.py), and the
benchmarks' results records (core/evaluation/results_record.py) into its `benchmark records` block."""

from __future__ import annotations

from pathlib import Path

import typer

from rag_assets.core.errors import ConfigError


def results(
    collection: list[str] = typer.Option(None, "--collection", "-c", help="Only these collections (default: all)."),
    write: Path = typer.Option(
        None, "--write", help="Write the tables into this Markdown page (e.g. docs/results.md)."
    ),
    name: str = typer.Option(
        "built-in corpus", "--name", help="Which generated block of the page to replace (one per catalogue)."
    ),
    records: Path = typer.Option(
        Path("docs/results/records.jsonl"),
        "--records",
        help="The benchmarks' results records, written into the page's `benchmark records` block with --write.",
    ),
) -> None:
    """Print (or write into a results page) the headline tables of the latest evaluation reports."""
    from rag_assets.core.evaluation.results_page import (
        ResultsPageError,
        headline_markdown,
        latest_summaries,
        write_generated,
    )
    from rag_assets.core.evaluation.results_record import read_records, records_markdown
    from rag_assets.core.settings import reports_root

    try:
        markdown = headline_markdown(latest_summaries(reports_root(), collection or None))
        if write is None:
            typer.echo(markdown)
            return
        write_generated(write, name, markdown)
        if records.exists():
            write_generated(write, "benchmark records", records_markdown(read_records(records)))
    except (ResultsPageError, ValueError) as err:
        raise ConfigError(str(err)) from err
    typer.echo(f"wrote the headline tables of {reports_root()} into {write} ({name})")
