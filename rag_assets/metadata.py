"""Small helpers that turn domain results into Dagster-UI-friendly Markdown."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    def cell(value: object) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(map(cell, header)) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(map(cell, row)) + " |" for row in rows]
    return "\n".join(lines)


def counter_table(name: str, counts: Mapping[object, int] | Counter) -> str:
    return markdown_table([name, "count"], sorted(counts.items(), key=lambda kv: str(kv[0])))


def fenced(text: str, max_lines: int = 40) -> str:
    lines = text.splitlines()
    more = f"\n… {len(lines) - max_lines} more lines" if len(lines) > max_lines else ""
    return "```\n" + "\n".join(lines[:max_lines]).replace("```", "ˋˋˋ") + more + "\n```"
