"""The house rules for benchmarks/, read from their source (AST): they run as `python -m
benchmarks.NAME` from the repository root, so no script changes `sys.path`, imports a sibling by its
bare name, or imports a module that is not in the checkout (e.g. one since removed); the catalogue
is read through the store's functions, so no benchmark connects to DuckDB itself or holds SQL."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.unit.test_architecture import SQL, docstring_ids

pytestmark = pytest.mark.unit

BENCHMARKS = sorted((REPO_ROOT / "benchmarks").glob("*.py"))
FIRST_PARTY = ("rag_assets", "resources", "checks", "benchmarks", "tests")
# modules the ask-policy refactor removed: a benchmark still importing them is broken
REMOVED = ("rag_assets.defs.evaluation.answer_form", "rag_assets.core.store.router_registry")


def _imported(tree: ast.Module) -> list[tuple[int, str, list[str]]]:
    """(line, module, names taken from it) of every import, function-level ones included."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.append((node.lineno, node.module or "", [alias.name for alias in node.names]))
    return found


def _module_exists(module: str) -> bool:
    path = REPO_ROOT.joinpath(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _code_breaks(tree: ast.Module) -> list[str]:
    """sys.path, duckdb.connect and SQL outside docstrings."""
    docstrings = docstring_ids(tree)
    breaks = []
    for node in ast.walk(tree):
        text = None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (node.value.id, node.attr) == ("sys", "path"):
                breaks.append(f"{node.lineno}: sys.path is changed or read")
            if (node.value.id, node.attr) == ("duckdb", "connect"):
                breaks.append(f"{node.lineno}: duckdb.connect (open the catalogue with catalogue_connection)")
        if isinstance(node, ast.Attribute) and node.attr == "get_connection":
            breaks.append(f"{node.lineno}: a resource's get_connection (open the catalogue with catalogue_connection)")
        elif isinstance(node, ast.JoinedStr):  # an f-string: its literal parts, placeholders as {}
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            text = node.value
        if text is not None and SQL.search(text):
            breaks.append(f"{node.lineno}: SQL {text.strip()[:50]!r} (read through rag_assets/core/store)")
    return breaks


def _import_breaks(tree: ast.Module, siblings: set[str]) -> list[str]:
    """Removed or missing first-party modules, siblings by their bare name, duckdb's connect."""
    breaks = []
    for line, module, names in _imported(tree):
        top = module.split(".")[0]
        removed = [m for m in (module, *(f"{module}.{name}" for name in names)) if m in REMOVED]
        if removed:
            breaks.append(f"{line}: imports {removed[0]}, which was removed")
        elif top in siblings:
            breaks.append(f"{line}: imports the sibling {module!r} by its bare name (benchmarks.{module})")
        elif top == "duckdb" and "connect" in names:
            breaks.append(f"{line}: duckdb.connect (open the catalogue with catalogue_connection)")
        elif top in FIRST_PARTY and not _module_exists(module):
            breaks.append(f"{line}: imports {module}, which is not in the checkout")
    return breaks


def rule_breaks(source: str, siblings: set[str]) -> list[str]:
    """What in one benchmark's `source` breaks the rules (empty: nothing); `siblings`: the names
    of the modules under benchmarks/."""
    tree = ast.parse(source)
    breaks = _code_breaks(tree) + _import_breaks(tree, siblings)
    if "noqa: E402" in source:
        breaks.append("imports after code (noqa: E402): a sys.path change before them?")
    return breaks


def test_the_rules_catch_what_they_name() -> None:
    broken = """
import sys
import duckdb
sys.path.insert(0, "..")
from step_clock import StepClock  # noqa: E402
from rag_assets.defs.evaluation.answer_form import asked_spec
from rag_assets.core.store import router_registry
from rag_assets.core.no_such_module import thing
con = duckdb.connect("catalogue.duckdb")
rows = con.execute(f"SELECT count(*) FROM {'passages'}").fetchall()
with resources["catalogue"].get_connection() as con: pass
"""
    breaks = "\n".join(rule_breaks(broken, {"step_clock"}))
    for expected in (
        "4: sys.path",
        "5: imports the sibling 'step_clock'",
        "6: imports rag_assets.defs.evaluation.answer_form, which was removed",
        "7: imports rag_assets.core.store.router_registry, which was removed",
        "8: imports rag_assets.core.no_such_module, which is not in the checkout",
        "9: duckdb.connect",
        "10: SQL",
        "11: a resource's get_connection",
        "noqa: E402",
    ):
        assert expected in breaks, (expected, breaks)
    # prose in a docstring and a qualified sibling import are fine
    fine = '"""Select the best passages from the index."""\nfrom benchmarks.step_clock import StepClock\n'
    assert rule_breaks(fine, {"step_clock"}) == []


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.name)
def test_benchmark_follows_the_house_rules(path: Path) -> None:
    siblings = {p.stem for p in BENCHMARKS}
    assert rule_breaks(path.read_text(), siblings) == []


def test_benchmarks_are_a_package() -> None:
    """`python -m benchmarks.NAME` (the README's way) needs the package."""
    assert (REPO_ROOT / "benchmarks" / "__init__.py").is_file()
    assert "python -m benchmarks." in (REPO_ROOT / "benchmarks" / "README.md").read_text()
