"""The house rules, read from the source (AST, function-level imports included): no import cycle
between modules, no private name imported across modules, public Dagster APIs only, Dagster kept
out of `rag_assets/core`, SQL only in `rag_assets/core/store/`, and no module over 450 lines."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from tests.conftest import REPO_ROOT

PACKAGES = ("rag_assets", "resources", "checks")
STORE = "rag_assets.core.store"
MAX_LINES = 450

# Uppercase SQL as it is written in this code base; prose in docstrings is not checked.
SQL = re.compile(
    r"\bSELECT\b[\s\S]*\bFROM\b|\bINSERT\s+INTO\b|\bCREATE\s+(?:OR\s+REPLACE\s+)?TABLE\b|\bDELETE\s+FROM\b"
    r"|\bUPDATE\s+\w+\s+SET\b|\bALTER\s+TABLE\b|^\s*(?:BEGIN(?:\s+TRANSACTION)?|COMMIT|ROLLBACK)\s*;?\s*$"
)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _modules() -> dict[str, Path]:
    """module name -> file, for every module of the project's packages."""
    return {_module_name(path): path for package in PACKAGES for path in sorted((REPO_ROOT / package).rglob("*.py"))}


@cache
def _tree(name: str) -> ast.Module:
    path = _modules()[name]
    return ast.parse(path.read_text(), filename=str(path))


def _is_package(name: str) -> bool:
    return _modules()[name].name == "__init__.py"


def _imports(name: str) -> Iterator[tuple[str, list[str], int]]:
    """(imported module, names taken from it, line) of every import statement of a module."""
    for node in ast.walk(_tree(name)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, [], node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against the importing module's package
                package = name.split(".") if _is_package(name) else name.split(".")[:-1]
                package = package[: len(package) - node.level + 1]
                base = ".".join([*package, *([base] if base else [])])
            yield base, [alias.name for alias in node.names], node.lineno


def _edges(name: str) -> set[str]:
    """The project modules a module imports: `from a.b import c` depends on module a.b.c when
    there is one, else on a.b (a name defined there)."""
    modules = _modules()
    out = set()
    for base, names, _ in _imports(name):
        targets = [f"{base}.{n}" for n in names if f"{base}.{n}" in modules]
        if len(targets) < len(names) and base in modules:
            targets.append(base)
        out.update(t for t in targets if t != name)
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:  # noqa: C901 — Tarjan's algorithm as published
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _relative(name: str) -> str:
    return str(_modules()[name].relative_to(REPO_ROOT))


def test_the_import_walk_sees_function_level_and_relative_imports() -> None:
    # the walk must see what a top-level-only reading would miss, or the checks below prove nothing
    tree = ast.parse("def f():\n    from rag_assets.core.store import schemas\n")
    assert any(isinstance(n, ast.ImportFrom) for n in ast.walk(tree))
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert "rag_assets.core.store.schemas" in _edges("rag_assets.core.store.transactions")


def test_no_import_cycle_between_modules() -> None:
    graph = {name: _edges(name) for name in _modules()}
    assert _cycles(graph) == []


def test_no_private_name_imported_across_modules() -> None:
    modules = _modules()
    offenders = [
        f"{_relative(name)}:{line} imports {base}.{n}"
        for name in modules
        for base, names, line in _imports(name)
        if base.split(".")[0] in PACKAGES
        for n in names
        if n.startswith("_") and not n.startswith("__")
    ]
    assert offenders == []


def test_public_dagster_apis_only() -> None:
    offenders = [
        f"{_relative(name)}:{line} imports {base} {names}"
        for name in _modules()
        for base, names, line in _imports(name)
        if base.startswith("dagster._") or (base == "dagster" and any(n.startswith("_") for n in names))
    ]
    assert offenders == []


def test_core_never_imports_dagster() -> None:
    offenders = [
        f"{_relative(name)}:{line} imports {base}"
        for name in _modules()
        if name.startswith("rag_assets.core")
        for base, _, line in _imports(name)
        if base.split(".")[0].startswith("dagster")
    ]
    assert offenders == []


def docstring_ids(tree: ast.Module) -> set[int]:
    """The ids of the docstring constants of a module (prose, not code: the SQL rule skips them)."""
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def _sql_strings(name: str) -> Iterator[tuple[int, str]]:
    tree = _tree(name)
    docstrings = docstring_ids(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):  # an f-string: its literal parts, placeholders as {}
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
            if SQL.search(text):
                yield node.lineno, text
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield from [(node.lineno, node.value)] if SQL.search(node.value) else []


def test_the_sql_pattern_tells_statements_from_prose() -> None:
    for statement in (
        "SELECT count(*) FROM passages WHERE collection = ?",
        "INSERT INTO answers BY NAME SELECT * FROM _incoming",
        "CREATE TABLE IF NOT EXISTS t (a INTEGER)",
        "DELETE FROM passages WHERE collection = ?",
        "UPDATE published_models SET path = ?",
        "BEGIN TRANSACTION",
        "COMMIT",
    ):
        assert SQL.search(statement), statement
    for prose in ("select the best passages from the index", "Begin with the title", "commit conflict"):
        assert not SQL.search(prose), prose


def test_sql_only_in_the_store() -> None:
    offenders = [
        f"{_relative(name)}:{line} {text.strip()[:60]!r}"
        for name in _modules()
        if not (name == STORE or name.startswith(STORE + "."))
        for line, text in _sql_strings(name)
    ]
    assert offenders == []


def test_no_module_over_the_line_limit() -> None:
    too_long = [
        f"{_relative(name)}: {lines} lines"
        for name, path in _modules().items()
        if (lines := len(path.read_text().splitlines())) > MAX_LINES
    ]
    assert too_long == []


# What only the answering session (core/answering/session.py) puts together: the strategy run and
# the routers. The assets, the service and the CLI answer through it, so they cannot drift apart.
SESSION_ONLY = {
    "rag_assets.core.answering.strategies": {"gather_evidence"},
    "rag_assets.core.answering.strategy_runner": {"run_strategy", "STRATEGY_RUNNERS"},
    "rag_assets.core.routing.scoring_router": {"ScoringRouter", "OracleRouter", "HitNodesRouter"},
    "rag_assets.core.routing.likelihood_router": {"LikelihoodRouter"},
}


def _outside_core(name: str) -> bool:
    return not name.startswith("rag_assets.core")


def test_only_the_answering_session_runs_strategies_and_builds_routers() -> None:
    offenders = [
        f"{_relative(name)}:{line} imports {base}.{n}"
        for name in _modules()
        if _outside_core(name)
        for base, names, line in _imports(name)
        for n in names
        if n in SESSION_ONLY.get(base, set())
    ]
    assert offenders == []


def test_materialization_records_read_only_through_upstream() -> None:
    # values passed between assets go through catalogue tables (published_models,
    # routing_view_settings), never through metadata read back by key
    offenders = [
        f"{_relative(name)}:{node.lineno} calls {node.func.attr}"
        for name in _modules()
        if name != "rag_assets.events.upstream"
        for node in ast.walk(_tree(name))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("fetch_materializations", "get_latest_materialization_event")
    ]
    assert offenders == []


def test_the_session_rules_see_what_they_guard() -> None:
    # the rules above must find what they forbid where it is allowed, or they prove nothing
    session = {(base, n) for base, names, _ in _imports("rag_assets.core.answering.session") for n in names}
    assert ("rag_assets.core.answering.strategy_runner", "run_strategy") in session
    assert ("rag_assets.core.routing.scoring_router", "ScoringRouter") in session
    upstream_calls = [
        node
        for node in ast.walk(_tree("rag_assets.events.upstream"))
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "fetch_materializations"
    ]
    assert upstream_calls


# Environment variables are read in one module, as typed functions. The only other touches are
# switches of third-party libraries, set (setdefault) where those libraries are imported.
SETTINGS = "rag_assets.core.settings"
THIRD_PARTY_SWITCHES = {
    ("rag_assets.core.index.embedding", "HF_HUB_OFFLINE"),
    ("rag_assets.core.index.embedding", "TRANSFORMERS_OFFLINE"),
    ("checks.expectations", "GX_ANALYTICS_ENABLED"),
}


def _module_aliases(name: str, module: str) -> set[str]:
    """The names a module binds to `module` (`import os`, `import os as o`)."""
    return {
        alias.asname or alias.name
        for node in ast.walk(_tree(name))
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name == module
    }


def _environment_uses(name: str) -> Iterator[tuple[int, str]]:
    """(line, what) of every `os.environ` / `os.getenv` (and `from os import ...` of them) in a
    module, except a `setdefault` of an allowed third-party switch."""
    tree = _tree(name)
    aliases = _module_aliases(name, "os")
    allowed: set[int] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "setdefault"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and (name, node.args[0].value) in THIRD_PARTY_SWITCHES
        ):
            allowed.add(id(node.func.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            yield from (
                (node.lineno, f"from os import {a.name}") for a in node.names if a.name in ("environ", "getenv")
            )
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in ("environ", "getenv")
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and id(node) not in allowed
        ):
            yield node.lineno, f"os.{node.attr}"


def test_environment_variables_are_read_only_in_the_settings_module() -> None:
    offenders = [
        f"{_relative(name)}:{line} {what}"
        for name in _modules()
        if name != SETTINGS
        for line, what in _environment_uses(name)
    ]
    assert offenders == [], "read environment variables through rag_assets/core/settings.py"
    # the rule sees what it guards: the settings module's reads, and no more than the allowed switches
    assert len(list(_environment_uses(SETTINGS))) >= 10
    seen = {
        (name, call.args[0].value)
        for name in _modules()
        for call in ast.walk(_tree(name))
        if isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "setdefault" and call.args
        if isinstance(call.args[0], ast.Constant) and isinstance(call.func.value, ast.Attribute)
        if call.func.value.attr == "environ" and name != SETTINGS
    }
    assert seen == THIRD_PARTY_SWITCHES


CONNECTIONS = "rag_assets.core.store.connections"


def _duckdb_connects(name: str) -> Iterator[int]:
    """Lines of a module that call `duckdb.connect` (or import `connect` from duckdb)."""
    aliases = _module_aliases(name, "duckdb")
    for node in ast.walk(_tree(name)):
        imports_connect = (
            isinstance(node, ast.ImportFrom)
            and node.module == "duckdb"
            and any(a.name == "connect" for a in node.names)
        )
        calls_connect = (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "connect"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in aliases
        )
        if imports_connect or calls_connect:
            yield node.lineno


def test_the_catalogue_is_opened_only_by_the_connection_module() -> None:
    # one lock wait loop, one error, one lock-conflict check: every DuckDB connection goes through
    # rag_assets/core/store/connections.py (catalogue_connection; the catalogue resource uses it)
    offenders = [
        f"{_relative(name)}:{line} calls duckdb.connect"
        for name in _modules()
        if name != CONNECTIONS
        for line in _duckdb_connects(name)
    ]
    assert offenders == [], "open DuckDB through rag_assets.core.store.connections.catalogue_connection"
    assert list(_duckdb_connects(CONNECTIONS))  # the rule sees what it guards


LONG_FUNCTION_LAYERS = ("rag_assets.defs", "rag_assets.serving", "rag_assets.commands", "rag_assets.cli")
MAX_FUNCTION_LINES = 60


def _in_layer(name: str, layer: str) -> bool:
    return name == layer or name.startswith(layer + ".")


def test_no_long_function_in_the_asset_and_serving_layers() -> None:
    # functions of one step: an asset, a route registration or a command reads as a few
    # named steps; a function longer than this (signature to last line, docstring included) is split
    checked = [name for name in _modules() if any(_in_layer(name, layer) for layer in LONG_FUNCTION_LAYERS)]
    offenders = [
        f"{_relative(name)}:{node.lineno} {node.name} spans {node.end_lineno - node.lineno + 1} lines"
        for name in checked
        for node in ast.walk(_tree(name))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert offenders == [], f"split these into named steps of at most {MAX_FUNCTION_LINES} lines"
    assert "rag_assets.cli" in checked and any(_in_layer(name, "rag_assets.serving") for name in checked)


def test_the_service_imports_nothing_from_the_asset_definitions() -> None:
    # what an ask is lives in core (core/answering/policy); what the service records in Dagster
    # lives in rag_assets/events, below both the assets and the service
    offenders = [
        f"{_relative(name)}:{line} imports {base}"
        for name in _modules()
        if name.startswith("rag_assets.serving")
        for base, _, line in _imports(name)
        if base.startswith("rag_assets.defs")
    ]
    assert offenders == []
    assert any(
        base.startswith("rag_assets.core.answering.policy") for base, _, _ in _imports("rag_assets.serving.asking")
    )
