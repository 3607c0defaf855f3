"""`--record`: a benchmark's figures kept as results records with the command that measured them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from benchmarks.records import keep_figures
from rag_assets.core.evaluation.results_record import read_records

pytestmark = pytest.mark.unit


def test_figures_are_kept_with_their_command_and_replace_the_earlier_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "records.jsonl"
    monkeypatch.setattr(sys, "argv", ["served_answers_ui.py", "--answers", "2000", "--record"])
    keep_figures("benchmarks.served_answers_ui", [("asset page median s", 1.76), ("instance MiB", 17)], path)
    keep_figures("benchmarks.served_answers_ui", [("asset page median s", 1.5)], path)
    records = read_records(path)
    assert [(r.figure, r.value) for r in records] == [("instance MiB", 17), ("asset page median s", 1.5)]
    assert {r.benchmark for r in records} == {"benchmarks/served_answers_ui.py"}
    assert records[1].command == ".venv/bin/python -m benchmarks.served_answers_ui --answers 2000 --record"
