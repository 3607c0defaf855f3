"""Processes that load the pipeline run at RAG_PIPELINE_NICE; the service's modules leave the
priority alone (each checked in a fresh interpreter: importing the definitions lowers the caller)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

NICENESS_AROUND_IMPORT = "import os; before = os.nice(0); import {module}; print(before, os.nice(0))"


def niceness_around(module: str, **env: str) -> tuple[int, int]:
    done = subprocess.run(
        [sys.executable, "-c", NICENESS_AROUND_IMPORT.format(module=module)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    before, after = done.stdout.split()
    return int(before), int(after)


def test_loading_the_pipeline_lowers_its_priority_to_the_setting() -> None:
    before, after = niceness_around("rag_assets.definitions", RAG_PIPELINE_NICE="17")
    assert before < 17 and after == 17


def test_the_service_keeps_its_priority() -> None:
    before, after = niceness_around("rag_assets.serving.app", RAG_PIPELINE_NICE="17")
    assert after == before < 17
