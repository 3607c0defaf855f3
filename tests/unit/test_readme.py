"""The README against what it describes: the two commands CI and the Makefile use, the CLI commands
and environment variables of the code, its links and its size; the docs' links and results commands."""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path

import pytest

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


def readme_text() -> str:
    return (REPO / "README.md").read_text(encoding="utf-8")


def test_the_first_screen_says_what_it_is_and_the_two_commands() -> None:
    first_screen = "\n".join(readme_text().splitlines()[:30])
    assert "Document Structure Tree" in first_screen and "Dagster" in first_screen
    assert "## Two commands" in first_screen
    assert "make run" in first_screen and "make test" in first_screen


README_MAX_LINES = 400  # a size bound, not a count to hit: the front door stays one read; detail goes to docs/


def test_the_readme_stays_within_its_size_bound() -> None:
    lines = len(readme_text().splitlines())
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines, over its {README_MAX_LINES}: move detail to docs/"


def test_the_fast_tier_the_readme_names_runs_tests_unit() -> None:
    assert "make test-unit" in readme_text()
    recipe = " ".join(makefile_recipes()["test-unit"])
    assert "pytest" in recipe and "-m unit" in recipe and "tests/unit" in recipe


def test_every_local_link_of_the_readme_and_docs_exists() -> None:
    documents = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    for document in documents:
        for target in re.findall(r"\]\(([^)#]+)\)", document.read_text(encoding="utf-8")):
            if "://" in target:
                continue
            assert (document.parent / target).exists(), f"{document.name} links to missing {target}"


# What a work log says and a user document must not: numbered sessions, issues or rounds; "this
# session", "last round", "this stop"; days ("today", "on 2026-11-26"); commits (a document describes
# the code as it is, not the commit it was written at). Dated notes (docs/notes/2026-11-26-x.md)
# are experiment records, linked by name: a date alone is not a work-log phrase.
WORK_LOG = {
    "a numbered session, issue or round": r"\b(?:session|issue|round|stop|ticket|iteration)s? #?\d+",
    "a session or round of work": (
        r"\b(?:this|last|previous|earlier|that|current|prior) (?:session|round|stop|sitting|iteration|sprint)\b"
    ),
    "a day": r"\b(?:today|yesterday|tonight|this (?:morning|afternoon|evening|week))\b",
    "a dated phrase": r"\b(?:on|since|as of|until) 20\d\d-\d\d-\d\d\b",
}
# a commit-like hash: 7 to 40 hex digits with a digit and a letter among them
COMMIT = r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b"
# a wall-clock run time ("takes about 6 minutes", "(about 16 min"): measured, it belongs in
# docs/results.md with its command, so the README carries none (a setting's default, "120 s", is
# not a run time)
RUN_TIME = (
    r"\b(?:takes?|took|lasts?|lasted|about|around|roughly|under|over)\s+(?:about\s+|around\s+)?~?\d+(?:[.,]\d+)?\s*"
    r"(?:h|hours?|min|minutes?|s|secs?|seconds?)\b"
)


def benchmark_baselines() -> set[str]:
    """The commits benchmarks read a baseline from (BASELINE_COMMIT = "..."): the one kind of commit
    docs/results.md may name, since the command that reproduces the figure needs it."""
    return {
        found
        for path in sorted((REPO / "benchmarks").glob("*.py"))
        for found in re.findall(r"^\w*COMMIT\w* = \"([0-9a-f]{7,40})\"", path.read_text(encoding="utf-8"), re.M)
    }


# a run id (a UUID): the generated tables of docs/results.md name the run each comes from
RUN_ID = r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"


def work_log_phrases(name: str, text: str, baselines: set[str] = frozenset()) -> list[str]:
    """(what, the text) of every work-log phrase of a document named `name` (README.md, results.md, ...)."""
    text = re.sub(RUN_ID, "RUN-ID", text)
    found = [f"{what}: {m.group(0)!r}" for what, pattern in WORK_LOG.items() for m in re.finditer(pattern, text, re.I)]
    allowed = baselines if name == "results.md" else set()
    found += [f"a commit: {m.group(0)!r}" for m in re.finditer(COMMIT, text) if m.group(0) not in allowed]
    if name == "README.md":
        found += [f"a run time: {m.group(0)!r}" for m in re.finditer(RUN_TIME, text, re.I)]
    return found


def test_readme_and_docs_carry_no_work_log_numbers() -> None:
    baselines = benchmark_baselines()
    for document in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        found = work_log_phrases(document.name, document.read_text(encoding="utf-8"), baselines)
        assert found == [], f"{document.name} carries work-log text: {found}"


# A log that claims what it did, in the words the rule must catch (one sample a line): each line
# alone is caught.
A_WORK_LOG = [
    line
    for line in (REPO / "tests" / "fixtures" / "work_log_samples.txt").read_text(encoding="utf-8").splitlines()
    if line and not line.startswith("#")
]


@pytest.mark.parametrize("line", A_WORK_LOG)
def test_the_work_log_rule_catches_a_log(line: str) -> None:
    assert len(work_log_phrases("evaluation.md", line)) == 1, line


def test_the_work_log_rule_catches_a_run_time_in_the_readme_and_a_foreign_commit_in_the_results() -> None:
    claim = "`make run` takes about 6 minutes on 2 CPU cores (about 16 min with FinanceBench)."
    assert work_log_phrases("README.md", claim) == [
        "a run time: 'takes about 6 minutes'",
        "a run time: 'about 16 min'",
    ]
    # results.md keeps its measured times, and names a commit only as a benchmark's baseline
    assert work_log_phrases("results.md", claim) == []
    assert work_log_phrases("results.md", "read from git at `ec1ab43`", {"ec1ab43"}) == []
    assert work_log_phrases("results.md", "read from git at `ec1ab44`", {"ec1ab43"}) == ["a commit: 'ec1ab44'"]
    # a generated table names its run by id, which is no commit
    assert work_log_phrases("results.md", "run `723fe3bc-3582-45e2-a917-4e2a80289c53`", set()) == []
    assert "ec1ab43" in benchmark_baselines()  # the baseline scan sees the one benchmark that has one


def test_the_work_log_rule_passes_what_a_user_document_says() -> None:
    prose = (
        "A failed batch is tried again on the next round. `RAG_LOCK_TIMEOUT` | 120 s | the wait. "
        "See the [2026-11-28 note](notes/2026-11-28-financebench-routed-views.md); 10,206 pages; "
        "CIK 0000764478; the previous run's rows stay."
    )
    assert work_log_phrases("README.md", prose) == []


def test_every_results_section_names_the_command_that_reproduces_it() -> None:
    text = (REPO / "docs" / "results.md").read_text(encoding="utf-8")
    sections = re.split(r"^## ", text, flags=re.M)[1:]
    assert len(sections) >= 5
    for section in sections:
        title = section.splitlines()[0]
        assert re.search(r"`(?:make |\.venv/bin/python |\.venv/bin/rag )[^`]*`", section), (
            f"docs/results.md section {title!r} names no command"
        )


def test_the_cli_commands_the_readme_shows_exist() -> None:
    from typer.main import get_command

    from rag_assets.cli import app

    commands = get_command(app).commands  # type: ignore[attr-defined]
    shown = set(re.findall(r"^\.venv/bin/rag (\w+)", readme_text(), re.M))
    assert {"run", "ask", "trace", "search", "serve"} <= shown
    missing = shown - set(commands)
    assert not missing, f"the README shows rag commands that do not exist: {sorted(missing)}"


# Variables the code reads that are not the project's to document: the operating system's.
NOT_OURS = {"TMPDIR"}


def environment_reads() -> set[str]:
    """Every variable the code reads: `os.environ.get(X)`, `os.environ[X]`, `os.getenv(X)`, with
    X a string or a module constant holding one (writes such as `setdefault` are not reads)."""
    trees = [
        ast.parse(path.read_text(encoding="utf-8"))
        for folder in ("rag_assets", "resources", "checks", "cluster")
        for path in sorted((REPO / folder).rglob("*.py"))
    ]
    constants = {
        target.id: node.value.value
        for tree in trees
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        for target in node.targets
        if isinstance(target, ast.Name)
    }

    def environ(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr == "environ"

    names: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
                func = node.func
                if (func.attr == "get" and environ(func.value)) or func.attr == "getenv":
                    key = node.args[0]
                else:
                    continue
            elif isinstance(node, ast.Subscript) and environ(node.value) and isinstance(node.ctx, ast.Load):
                key = node.slice
            else:
                continue
            if isinstance(key, ast.Constant):
                names.add(key.value)
            elif isinstance(key, ast.Name):
                names.add(constants[key.id])
    return names


def readme_prose() -> str:
    """The README without its fenced code blocks (a name in an example command or a code comment
    documents nothing)."""
    return re.sub(r"^```.*?^```", "", readme_text(), flags=re.S | re.M)


def test_the_code_reads_the_environment_variables_the_scan_expects() -> None:
    # guards the scan itself: a read through a constant and one through a subscript are found
    reads = environment_reads()
    assert {"RAG_EXECUTOR", "RAG_SERVICE_URL", "RAG_LOCK_TIMEOUT", "RAG_OPENAI_API_KEY", "RAG_RUN_CONFIG"} <= reads
    assert not {"HF_HUB_OFFLINE", "GX_ANALYTICS_ENABLED"} & reads  # only set by the code, never read


def test_every_environment_variable_the_code_reads_is_in_the_readme_prose() -> None:
    documented = set(re.findall(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b", readme_prose()))
    undocumented = environment_reads() - NOT_OURS - documented
    assert not undocumented, f"read by the code, missing from the README's prose and tables: {sorted(undocumented)}"


def test_every_environment_variable_the_readme_names_is_read_by_the_code() -> None:
    named = set(re.findall(r"`(RAG_[A-Z_]+)`", readme_text()))
    unread = sorted(named - environment_reads())
    assert not unread, f"the README names environment variables no code reads: {unread}"
