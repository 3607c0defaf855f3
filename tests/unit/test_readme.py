"""The README's two commands are the ones CI and the Makefile actually use."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def readme_commands() -> list[str]:
    """The commands of the fenced block under the README's "Two commands" heading."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^## Two commands\s*$(.*?)^## ", text, re.S | re.M)
    assert section, "README.md has no '## Two commands' section"
    block = re.search(r"```(?:bash|sh)?\n(.*?)```", section.group(1), re.S)
    assert block, "the 'Two commands' section has no fenced code block"
    return [line.split("#", 1)[0].strip() for line in block.group(1).splitlines() if line.split("#", 1)[0].strip()]


def makefile_recipes() -> dict[str, list[str]]:
    """target -> recipe lines (comments dropped) of the Makefile."""
    recipes: dict[str, list[str]] = {}
    current: str | None = None
    for line in (REPO / "Makefile").read_text(encoding="utf-8").splitlines():
        if line.startswith("\t"):
            if current and not line.strip().startswith("#"):
                recipes[current].append(line.strip())
            continue
        match = re.match(r"^([A-Za-z0-9_.$()/-]+)\s*:(?!=)(.*)$", line)
        current = match.group(1) if match else None
        if current:
            recipes.setdefault(current, [])
    return recipes


def ci_commands() -> list[str]:
    lines = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    commands = [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]
    return [c for c in commands if not c.startswith(("set ", "cd "))]


def test_readme_names_exactly_make_run_and_make_test() -> None:
    assert readme_commands() == ["make run", "make test"]


def test_ci_runs_the_readme_test_command() -> None:
    assert ci_commands() == ["make test"]
    assert "make test" in readme_commands()


def test_the_makefile_targets_do_what_the_readme_says() -> None:
    recipes = makefile_recipes()
    for command in readme_commands():
        target = shlex.split(command)[1]
        assert target in recipes, f"`{command}`: the Makefile has no target {target!r}"
    assert any(shlex.split(line)[-2:] == ["rag", "run"] or line.endswith("/bin/rag run") for line in recipes["run"])
    assert any("pytest" in line for line in recipes["test"])
    # both set up first: their prerequisites include the install step
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^run:\s*install\b", text, re.M) and re.search(r"^test:\s*install\b", text, re.M)


def test_rag_run_is_a_cli_command() -> None:
    from typer.main import get_command

    from rag_assets.cli import app

    assert "run" in get_command(app).commands  # type: ignore[attr-defined]
