"""The front door: README's two commands are the ones the Makefile and CI use."""

from __future__ import annotations

import re

from tests.conftest import REPO_ROOT


def test_readme_commands_match_makefile_and_ci() -> None:
    readme = (REPO_ROOT / "README.md").read_text()
    assert "make run" in readme and "make test" in readme
    makefile = (REPO_ROOT / "Makefile").read_text()
    assert re.search(r"^run: install$", makefile, re.M) and re.search(r"^test: install$", makefile, re.M)
    ci = (REPO_ROOT / ".ci" / "run").read_text()
    assert re.search(r"^make test$", ci, re.M)
