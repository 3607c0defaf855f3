"""A bad DAGSTER_HOME or data folder is one `error:` line and exit 2 for every read command,
never a traceback or an empty result."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rag_assets.cli import app

runner = CliRunner()
READ_COMMANDS = [["search", "kettle", "--mode", "bm25"], ["ask", "what boils?"], ["trace", "0123456789ab"], ["answers"]]


def _error_line(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.mark.parametrize("command", READ_COMMANDS, ids=lambda c: c[0])
def test_a_dagster_home_that_is_a_file_or_missing(tmp_path: Path, command: list[str]) -> None:
    a_file = tmp_path / "home.txt"
    a_file.write_text("not a folder")
    line = _error_line(
        runner.invoke(app, command, env={"DAGSTER_HOME": str(a_file), "RAG_DATA_DIR": "", "RAG_SERVICE_URL": ""})
    )
    assert f"DAGSTER_HOME={a_file} is not a folder" in line
    missing = tmp_path / "nowhere"
    line = _error_line(
        runner.invoke(app, command, env={"DAGSTER_HOME": str(missing), "RAG_DATA_DIR": "", "RAG_SERVICE_URL": ""})
    )
    assert f"DAGSTER_HOME={missing} does not exist" in line
    assert not missing.exists()  # a read command creates nothing


@pytest.mark.parametrize("command", READ_COMMANDS, ids=lambda c: c[0])
def test_a_data_folder_that_is_a_file(tmp_path: Path, command: list[str]) -> None:
    a_file = tmp_path / "data.txt"
    a_file.write_text("not a folder")
    line = _error_line(runner.invoke(app, command, env={"RAG_DATA_DIR": str(a_file), "RAG_SERVICE_URL": ""}))
    assert f"the data folder {a_file} (RAG_DATA_DIR) is not a folder" in line
