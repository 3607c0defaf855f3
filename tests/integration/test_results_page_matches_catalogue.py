"""The generated headline tables of docs/results.md are the catalogue's: regenerated from the
latest reports of the catalogue they name, they come out identical. Skips, saying why, where that
catalogue was never built here (a fresh clone, CI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_assets.core.evaluation.results_page import generated_block, headline_markdown, latest_summaries
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.integration

PAGE = REPO_ROOT / "docs" / "results.md"
CATALOGUES = {
    "built-in corpus": REPO_ROOT / "dagster_home" / "data" / "reports",
    "real sets": REPO_ROOT / "dagster_home" / "data-datasets" / "reports",
}


@pytest.mark.parametrize("name", sorted(CATALOGUES))
def test_the_generated_tables_are_the_catalogues(name: str) -> None:
    reports: Path = CATALOGUES[name]
    if not reports.is_dir():
        pytest.skip(f"{reports} does not exist: `make run` (or `make run DATA=../shared/datasets`) never ran here")
    written = generated_block(PAGE, name)
    assert written, f"docs/results.md has no generated block for {name!r}: run `rag results --write docs/results.md`"
    assert written == headline_markdown(latest_summaries(reports)).strip(), (
        f"docs/results.md's {name!r} tables differ from {reports}: regenerate them with `rag results --write`"
    )
