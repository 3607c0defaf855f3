"""Option mistakes are one `error:` line each, exit 2, in one style; `rag ask`'s choices are
checked before any model (or torch) is imported."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rag_assets.cli import app
from tests.unit.test_cli_imports import _run

runner = CliRunner()


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["ask", "x", "-k", "0"],
            "error: invalid value for '-k': Input should be greater than or equal to 1 (see `rag ask --help`)",
        ),
        (
            ["ask", "x", "-k", "-1"],
            "error: invalid value for '-k': Input should be greater than or equal to 1 (see `rag ask --help`)",
        ),
        (
            ["search", "x", "-k", "0"],
            "error: invalid value for '-k': Input should be greater than or equal to 1 (see `rag search --help`)",
        ),
        (
            ["search", "x", "-k", "101"],
            "error: invalid value for '-k': Input should be less than or equal to 100 (see `rag search --help`)",
        ),
        (["search", "x", "--bogus"], "error: no such option: --bogus (see `rag search --help`)"),
        (["ask"], "error: missing argument 'question' (see `rag ask --help`)"),
        (["nosuch"], "error: no such command 'nosuch' (see `rag --help`)"),
        (["search", "x", "--mode", "fuzzy"], "error: --mode must be dense, bm25 or hybrid, not 'fuzzy'"),
    ],
)
def test_an_option_mistake_is_one_line(args: list[str], line: str) -> None:
    result = runner.invoke(app, args, prog_name="rag")
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [line]
    assert result.stdout == ""


def test_rag_alone_still_prints_the_help() -> None:
    result = runner.invoke(app, [], prog_name="rag")
    assert "Usage: rag [OPTIONS] COMMAND" in result.output and "error:" not in result.output


def test_ask_choices_are_checked_before_any_model_loads(tmp_path: Path) -> None:
    found = _run(
        ["ask", "what?", "--strategy", "nosuch", "--mode", "fuzzy", "--router", "x", "--style", "poem"],
        {"RAG_DATA_DIR": str(tmp_path / "missing"), "RAG_SERVICE_URL": ""},
    )
    assert found["exit"] == 2
    lines = found["output"].splitlines()
    assert lines[0].startswith("error: --strategy must be one of no-retrieval, rag-dense, rag-hybrid, rdr2, ")
    assert lines[0].endswith(", not 'nosuch'")
    assert lines[1:] == [
        "error: --mode must be dense, bm25 or hybrid, not 'fuzzy'",
        "error: --router must be encoder, llm, similarity or hit-nodes, not 'x'",
        "error: --style must be short, list or long, not 'poem'",
    ]
    assert found["loaded"] == []  # the strategy names need no Dagster, no torch, no model
