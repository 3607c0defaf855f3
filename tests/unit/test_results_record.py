"""The results-record format benchmarks write their figures in: figure, value, command, commit, date."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from rag_assets.core.evaluation.results_record import (
    ResultRecord,
    append_records,
    current_commit,
    make_records,
    read_records,
    records_markdown,
)

pytestmark = pytest.mark.unit


def test_records_replace_their_own_figure_and_keep_the_others(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    first = ResultRecord("benchmarks/a.py", "noise not found", 0.9, "python benchmarks/a.py", "abc1234", "2026-01-01")
    other = ResultRecord("benchmarks/b.py", "seconds per page", 0.05, "python benchmarks/b.py", "abc1234", "2026-01-01")
    append_records(path, [first, other])
    newer = ResultRecord("benchmarks/a.py", "noise not found", 0.97, "python benchmarks/a.py", "def5678", "2026-02-01")
    append_records(path, [newer])
    assert read_records(path) == [other, newer]
    table = records_markdown(read_records(path))
    assert "| benchmarks/a.py | noise not found | 0.97 | `python benchmarks/a.py` | 2026-02-01 |" in table
    assert "def5678" not in table  # the page names no commit; the records file keeps it


def test_a_malformed_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_text('{"benchmark": "x"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"records.jsonl:1: not a results record"):
        read_records(path)


def test_records_carry_the_commit_they_were_measured_at(tmp_path: Path) -> None:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(tmp_path), *args], capture_output=True, text=True, check=True).stdout

    git("init", "-q")
    (tmp_path / "f.txt").write_text("a", encoding="utf-8")
    git("add", "f.txt")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    head = git("rev-parse", "--short", "HEAD").strip()
    assert current_commit(tmp_path) == head
    (tmp_path / "f.txt").write_text("b", encoding="utf-8")
    [record] = make_records("benchmarks/x.py", [("figure", 1.5)], "python benchmarks/x.py", tmp_path)
    assert (record.commit, record.value, record.figure) == (f"{head}+changes", 1.5, "figure")
    assert current_commit(tmp_path / "not-a-repo") == "unknown"
