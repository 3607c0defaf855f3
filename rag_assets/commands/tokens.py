"""`rag token create|revoke|list`: the service's API tokens, kept hashed in the catalogue
(rag_assets/core/store/api_tokens.py). A running `rag serve` sees a change from its next request on."""

from __future__ import annotations

import sys

from rich.markup import escape

from rag_assets.commands.errors import checked_data_dir, console, errors, say_waiting
from rag_assets.core.errors import ConfigError
from rag_assets.core.settings import catalogue_file
from rag_assets.core.store.answers import tree_collections
from rag_assets.core.store.api_tokens import EVERY_COLLECTION, create_token, list_tokens, revoke_token
from rag_assets.core.store.connections import catalogue_connection


def unknown_collections(known: list[str], wanted: list[str]) -> list[str]:
    """Of the collections a token is asked for, those the catalogue does not hold ('*' is every one)."""
    return [c for c in wanted if c != EVERY_COLLECTION and c not in known]


def check_collections_exist(known: list[str], wanted: list[str]) -> None:
    """A ConfigError naming each of `wanted` the catalogue's `known` collections lack (a typo
    would make a token that opens nothing). An empty catalogue (nothing indexed yet) checks
    nothing: a team may create its tokens before the first index run; `create` says so."""
    unknown = unknown_collections(known, wanted)
    if known and unknown:
        raise ConfigError(
            f"no collection {', '.join(map(repr, unknown))} in the catalogue: it has {', '.join(known)} "
            "(or '*' for every collection)"
        )


def create(name: str, collections: list[str], scope: str) -> None:
    """Create the token and print it once (on stdout, alone: `TOKEN=$(rag token create ...)`)."""
    folder = checked_data_dir()
    folder.mkdir(parents=True, exist_ok=True)
    with catalogue_connection(catalogue_file(), read_only=False, on_wait=say_waiting) as con:
        known = tree_collections(con)
        check_collections_exist(known, collections)
        secret = create_token(con, name, collections, scope)
    if not known and unknown_collections(known, collections):
        errors.print(
            f"note: the catalogue holds no collection yet, so {', '.join(map(escape, collections))} could not be "
            "checked: make sure the names match the collections you index",
            highlight=False,
        )
    sys.stdout.write(secret + "\n")
    errors.print(
        f"token {escape(name)!r}: {scope} in {', '.join(map(escape, collections))}. It is shown this once; "
        "send it as `Authorization: Bearer TOKEN` (the page asks for it; the CLI reads RAG_SERVICE_TOKEN).",
        highlight=False,
    )


def revoke(name: str) -> None:
    checked_data_dir()
    with catalogue_connection(catalogue_file(), read_only=False, on_wait=say_waiting) as con:
        revoke_token(con, name)
    errors.print(f"token {escape(name)!r} revoked", highlight=False)


def show_list(include_revoked: bool) -> None:
    checked_data_dir()
    if not catalogue_file().exists():
        tokens = []
    else:
        with catalogue_connection(catalogue_file(), read_only=True, on_wait=say_waiting) as con:
            tokens = list_tokens(con)
    shown = [t for t in tokens if include_revoked or t.revoked_at is None]
    if not shown:
        console.print("no tokens: `rag serve` on loopback answers anyone on this machine", highlight=False)
    for token in shown:
        scopes = ", ".join(f"{escape(c)}: {s}" for c, s in sorted(token.scopes.items()))
        revoked = f" [red]revoked {token.revoked_at:%Y-%m-%d %H:%M}[/red]" if token.revoked_at else ""
        console.print(
            f"[cyan]{escape(token.name)}[/cyan]  {scopes}  [dim]created {token.created_at:%Y-%m-%d %H:%M}[/dim]{revoked}",
            highlight=False,
        )
