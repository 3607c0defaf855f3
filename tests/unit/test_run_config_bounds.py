"""`rag run --config` refuses, before anything runs, every value a step or resource would refuse
when it starts: one line per mistake naming the key, the value and the bound; exit 2."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from rag_assets.cli import app
from tests.conftest import REPO_ROOT

BAD_CONFIG = """\
resources:
  sources:
    config:
      max_document_mb: -1
ops:
  router_adapter:
    config: {encoder_epochs: -5}
  answers:
    config: {strategies: [nosuch-strategy], split: dev}
"""


def test_out_of_range_values_are_refused_before_the_run(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = tmp_path / "neg.yaml"
    config.write_text(BAD_CONFIG)
    result = CliRunner().invoke(app, ["run", "--config", str(config)], env={**os.environ, "DAGSTER_HOME": str(home)})
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert lines == [
        f"error: run config {config}: ops.router_adapter.config.encoder_epochs = -5: "
        "Input should be greater than or equal to 1",
        f"error: run config {config}: ops.answers.config.strategies = ['nosuch-strategy']: "
        "unknown strategies ['nosuch-strategy']; expected some of " + lines[1].split("expected some of ", 1)[1],
        f"error: run config {config}: resources.sources.config.max_document_mb = -1: Input should be greater than 0",
    ]
    assert "'rdr2'" in lines[1].split("expected some of ", 1)[1]
    assert not (home / "storage").exists()  # no run was started


def test_the_step_refuses_what_the_check_refuses() -> None:
    """One place holds each bound: the config classes the steps and resources are built from."""
    from pydantic import ValidationError

    from rag_assets.defs.evaluation.strategy_config import AnswersConfig
    from rag_assets.defs.routing.router_config import RouterTrainingConfig
    from resources.sources import SourcesResource

    for build in (
        lambda: RouterTrainingConfig(encoder_epochs=-5),
        lambda: AnswersConfig(strategies=["nosuch-strategy"]),
        lambda: SourcesResource(max_document_mb=-1),
        lambda: SourcesResource(ocr_languages="fra eng"),  # Tesseract joins languages with '+'
    ):
        with pytest.raises(ValidationError):
            build()


def test_nested_resource_config_and_valid_configs_pass() -> None:
    from rag_assets.commands.config_check import bound_mistakes
    from rag_assets.definitions import defs

    job = defs.resolve_job_def("main_job")
    datasets = yaml.safe_load((REPO_ROOT / "run.datasets.yaml").read_text())
    assert bound_mistakes(job, defs.resources, datasets) == []
    llm = {"resources": {"llm": {"config": {"backend": "vllm", "gpu_memory_utilization": 0.5}}}}
    assert bound_mistakes(job, defs.resources, llm) == []
    french = {"resources": {"sources": {"config": {"ocr_languages": "fra+eng"}}}}
    assert bound_mistakes(job, defs.resources, french) == []
    bad_llm = {"resources": {"llm": {"config": {"gpu_memory_utilization": 3}}}}
    [line] = bound_mistakes(job, defs.resources, bad_llm)
    assert line.startswith("resources.llm.config.gpu_memory_utilization = 3: Input should be less than")
