"""One results-record format for every measured figure a benchmark reports: the figure's name,
its value, the command that measured it, the commit it was measured at and the date. Benchmarks
append records to one JSON-lines file (`docs/results/records.jsonl`); `rag results --write`
renders them into the results page, so a quoted figure always carries how to reproduce it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from rag_assets.core.files import write_text_atomically
from rag_assets.core.tables import markdown_table


@dataclass(frozen=True, slots=True)
class ResultRecord:
    benchmark: str  # the script, e.g. benchmarks/not_found.py
    figure: str  # what was measured, e.g. "python-reference: noise questions said not found"
    value: float | str
    command: str  # the command line that measured it
    commit: str  # the commit measured (with "+changes" when the tree was not clean)
    date: str  # ISO date of the measurement


def current_commit(repo: Path) -> str:
    """The commit `repo` is at, marked "+changes" when its tracked files differ from it."""
    try:
        head = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "diff", "--quiet", "HEAD"], capture_output=True).returncode
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head}+changes" if dirty else head


def make_records(
    benchmark: str, figures: Iterable[tuple[str, float | str]], command: str, repo: Path
) -> list[ResultRecord]:
    """Records of `figures` (name, value) measured now by `command` at `repo`'s commit."""
    commit, date = current_commit(repo), datetime.now(UTC).date().isoformat()
    return [ResultRecord(benchmark, name, value, command, commit, date) for name, value in figures]


def append_records(path: Path, records: Sequence[ResultRecord]) -> None:
    """Add `records` to the file, replacing earlier records of the same benchmark and figure;
    written whole to a temporary file and renamed (a killed write keeps the previous file)."""
    kept = [r for r in read_records(path) if (r.benchmark, r.figure) not in {(n.benchmark, n.figure) for n in records}]
    write_text_atomically(path, "".join(json.dumps(asdict(r), sort_keys=True) + "\n" for r in [*kept, *records]))


def read_records(path: Path) -> list[ResultRecord]:
    """The records of the file (none when it does not exist); a malformed line is a ValueError naming it."""
    if not path.exists():
        return []
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(ResultRecord(**json.loads(line)))
        except (json.JSONDecodeError, TypeError) as err:
            raise ValueError(f"{path}:{number}: not a results record ({err})") from err
    return records


def records_markdown(records: Sequence[ResultRecord]) -> str:
    """The records as one table, grouped by benchmark in file order. The commit stays in the
    records file: the page describes the code as it is, and names no commit."""
    rows = [(r.benchmark, r.figure, r.value, f"`{r.command}`", r.date) for r in records]
    return markdown_table(["benchmark", "figure", "value", "command", "date"], rows)
