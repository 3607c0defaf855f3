"""`--record`: a benchmark keeps the figures it printed as results records (figure, value, the
command line that measured them, the commit, the date) in docs/results/records.jsonl, which
`rag results --write docs/results.md` renders into the results page's `benchmark records` block."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Iterable
from pathlib import Path

from rag_assets.core.evaluation.results_record import append_records, make_records

REPO = Path(__file__).resolve().parents[1]
RECORDS = REPO / "docs" / "results" / "records.jsonl"


def add_record_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--record", action="store_true", help=f"keep the figures as results records in {RECORDS.relative_to(REPO)}"
    )


def keep_figures(benchmark: str, figures: Iterable[tuple[str, float | str]], path: Path = RECORDS) -> None:
    """Append `figures` (name, value) of `benchmark` (its module, e.g. benchmarks.not_found),
    measured by this process's command line, replacing that benchmark's earlier records of them."""
    command = shlex.join([".venv/bin/python", "-m", benchmark, *sys.argv[1:]])
    script = f"{benchmark.replace('.', '/')}.py"
    append_records(path, make_records(script, list(figures), command, REPO))
    print(f"figures kept in {path}")
