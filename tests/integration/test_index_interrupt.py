"""`rag index` stopped by SIGTERM, as a service manager stops it: a real subprocess on a corpus
large enough that the passage index is still embedding when the signal comes."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from tests.conftest import REPO_ROOT
from tests.integration.served_project import cli_env

# 6,000 passages: embedding them takes about a minute on 2 cores, far longer than the wait below
DOCUMENTS = 1500


def _corpus(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for i in range(DOCUMENTS):
        sections = "\n\n".join(
            f"## Part {j}\n\n" + f"Paragraph {j} of document {i} is about topic {i * 7 + j}, told at some length. " * 3
            for j in range(4)
        )
        (folder / f"doc{i:03}.md").write_text(f"# Document {i}\n\n{sections}\n", encoding="utf-8")
    return folder


@pytest.mark.timeout(900)
def test_sigterm_stops_rag_index_within_seconds_and_publishes_nothing(tmp_path: Path) -> None:
    env = {**cli_env(tmp_path, _corpus(tmp_path / "corpus"), ("big", "later")), "PYTHONFAULTHANDLER": "1"}
    command = [sys.executable, "-m", "rag_assets.cli", "index"]
    process = subprocess.Popen(
        command, env=env, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    seen: list[str] = []
    assert process.stdout is not None
    for line in process.stdout:
        seen.append(line)
        if "✓ passages" in line:  # the next step is the passage index: model load, then embedding
            break
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)  # into the passage index step (loading the embedder, or embedding)
    assert process.poll() is None, "".join(seen)
    process.send_signal(signal.SIGTERM)
    try:
        rest, _ = process.communicate(timeout=20)  # "within seconds", with room for a loaded machine
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGABRT)  # PYTHONFAULTHANDLER: every thread's stack, to say where it hung
        stacks, _ = process.communicate(timeout=60)
        pytest.fail("rag index still running 20 s after SIGTERM:\n" + "".join(seen) + stacks[-6000:])
    output = "".join(seen) + rest
    assert process.returncode == 130, output
    assert "interrupted" in output and "materializing collection later" not in output

    with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        [run] = instance.get_runs()
    assert run.status == dg.DagsterRunStatus.FAILURE and run.tags["dagster/partition"] == "big"
    with duckdb.connect(str(tmp_path / "data" / "catalogue.duckdb"), read_only=True) as con:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        published = (
            con.execute("SELECT count(*) FROM index_publications").fetchone()[0]
            if "index_publications" in tables
            else 0
        )
    assert published == 0  # no index was published for a run that did not finish
