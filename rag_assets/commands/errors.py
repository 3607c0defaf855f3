"""One error path for every command: exit codes, the one-line message, the `--debug` traceback.

A user mistake or an unavailable backend prints ONE line on stderr (`error: ...`) and exits with
a documented code; anything else is a bug (exit 70) and says so.
"""

from __future__ import annotations

import functools
import traceback
import urllib.error
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import typer
import typer.core
from rich.console import Console
from rich.markup import escape

from rag_assets.core.errors import BackendUnavailable, ConfigError, ConfigMistakes
from rag_assets.core.settings import data_dir, data_dir_is_set, debug_enabled, export_dagster_home

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_SOURCE_CHANGED, EXIT_UNAVAILABLE = 0, 1, 2, 3, 4
EXIT_INTERNAL, EXIT_INTERRUPTED = 70, 130
EXIT_CODES_HELP = (
    "Exit codes: 0 ok; 1 a run or check failed; 2 usage or configuration mistake (unknown collection, "
    "empty question, bad DAGSTER_HOME or data dir); 3 (trace) a cited source changed; 4 backend "
    "unavailable (LLM endpoint, service, busy catalogue); 70 internal error; 130 interrupted. "
    "--debug shows the traceback of an error."
)

console = Console()
errors = Console(stderr=True)
state = {"debug": debug_enabled()}


def classify(err: BaseException) -> tuple[int, str]:
    """(exit code, one-line message) for an error raised by a command."""
    if isinstance(err, KeyboardInterrupt):
        return EXIT_INTERRUPTED, "interrupted"
    unavailable: tuple[type[BaseException], ...] = (
        BackendUnavailable,
        urllib.error.URLError,
        ConnectionError,
        TimeoutError,
    )
    if isinstance(err, unavailable) or type(err).__name__ == "OpenAIEngineError":
        return EXIT_UNAVAILABLE, str(err)
    from rag_assets.core.store.connections import is_lock_conflict, lock_holder

    if is_lock_conflict(err):
        return EXIT_UNAVAILABLE, f"the catalogue is in use by {lock_holder(err)}; try again when it finishes"
    if isinstance(err, (ConfigError, ValueError, FileNotFoundError, NotADirectoryError, PermissionError)):
        return EXIT_USAGE, str(err)
    if isinstance(err, KeyError):
        return EXIT_USAGE, str(err.args[0]) if err.args else "unknown key"
    if type(err).__name__ == "DagsterInvalidConfigError":
        return EXIT_USAGE, " ".join(str(err).split())
    return EXIT_INTERNAL, f"internal error: {type(err).__name__}: {err} (rerun with --debug for the traceback)"


def fail(message: str, code: int = EXIT_USAGE) -> typer.Exit:
    """Print `error: message` on stderr; the caller raises the returned Exit."""
    errors.print(f"[red]error:[/red] {escape(' '.join(message.split()))}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


def one_error_path(command: Callable[..., Any]) -> Callable[..., Any]:
    """Every command's errors become one line and an exit code (the traceback only with --debug)."""

    @functools.wraps(command)
    def run_command(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except (typer.Exit, click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except (Exception, KeyboardInterrupt) as err:
            code, message = classify(err)
            if state["debug"]:
                errors.print(escape("".join(traceback.format_exception(err))), highlight=False)
            for line in err.lines[:-1] if isinstance(err, ConfigMistakes) else ():
                fail(line, code)  # one line per mistake; the last one below
            raise fail(
                err.lines[-1] if isinstance(err, ConfigMistakes) else message or type(err).__name__, code
            ) from None

    return run_command


def say_waiting(message: str) -> None:
    errors.print(f"[yellow]waiting:[/yellow] {escape(message)}", highlight=False, soft_wrap=True)


def checked_home(*, create: bool) -> Path:
    """DAGSTER_HOME (default: the project's dagster_home), checked: a path that exists and is not
    a folder, or a missing one a read-only command cannot use, is a usage mistake."""
    home = export_dagster_home()
    if home.exists() and not home.is_dir():
        raise ConfigError(f"DAGSTER_HOME={home} is not a folder")
    if not home.exists():
        if not create:
            raise ConfigError(f"DAGSTER_HOME={home} does not exist: run `rag run` first or point it at a project")
        home.mkdir(parents=True)
    return home


def checked_data_dir() -> Path:
    """The data folder (RAG_DATA_DIR, else DAGSTER_HOME/data) of a read command: DAGSTER_HOME must
    exist when it decides, and the folder may not be a file (a missing folder is reported by the
    catalogue read as "no catalogue at ...")."""
    if not data_dir_is_set():
        checked_home(create=False)
    folder = data_dir()
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"the data folder {folder} (RAG_DATA_DIR) is not a folder")
    return folder


try:  # typer >= 0.22 parses with its own copy of click
    from typer._click import exceptions as _parsing
except ImportError:  # pragma: no cover - older typer parses with click itself
    from click import exceptions as _parsing


def _one_line_usage(parse: Callable[[], Any]) -> Any:
    """`parse()`, with a bad option, argument or command turned into one `error:` line (exit 2)
    instead of click's usage panel; `rag` alone still prints the help."""
    try:
        return parse()
    except _parsing.UsageError as err:
        if isinstance(err, _parsing.NoArgsIsHelpError):
            raise
        message = err.format_message().strip().rstrip(".")
        message = message[:1].lower() + message[1:]
        where = f" (see `{err.ctx.command_path} --help`)" if err.ctx is not None else ""
        raise fail(f"{message}{where}") from None


class OneLineCommand(typer.core.TyperCommand):
    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        return _one_line_usage(lambda: super(OneLineCommand, self).make_context(*args, **kwargs))


class OneLineGroup(typer.core.TyperGroup):
    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        return _one_line_usage(lambda: super(OneLineGroup, self).make_context(*args, **kwargs))

    def resolve_command(self, *args: Any, **kwargs: Any) -> Any:
        return _one_line_usage(lambda: super(OneLineGroup, self).resolve_command(*args, **kwargs))
