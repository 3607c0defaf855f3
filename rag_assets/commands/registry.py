"""The commands defined outside cli.py, added to the `rag` app in one place (each module imports
nothing heavy at import: `rag --help` stays fast)."""

from __future__ import annotations

import typer

from rag_assets.commands.backup import backup, restore
from rag_assets.commands.documents import documents
from rag_assets.commands.results import results


def register_commands(app: typer.Typer) -> None:
    app.command("results")(results)
    app.command("documents")(documents)
    app.command("backup")(backup)
    app.command("restore")(restore)
