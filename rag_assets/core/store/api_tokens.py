"""The service's API tokens (`api_tokens`) and which token asked each stored answer (`answer_askers`).

A token is a random secret shown once when it is created; the catalogue keeps only its SHA-256
(a token has 256 random bits, so a plain hash cannot be reversed by guessing). Each token has a
name (who holds it) and one scope per collection it may use:

- `read`: search, read documents, traces and past answers of the collection;
- `ask`: also ask questions (the answers are stored, with the token's name);
- `admin`: also list the collection's tokens.

Collection `*` stands for every collection. Revoking keeps the rows (with `revoked_at`), so an old
answer still names who asked it.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import duckdb

from rag_assets.core.errors import ConfigError
from rag_assets.core.store.transactions import ensure_schema, table_exists, transaction

TABLE = "api_tokens"
ASKERS = "answer_askers"
SCOPES = ("read", "ask", "admin")  # each includes the ones before it
EVERY_COLLECTION = "*"
TOKEN_PREFIX = "rag_"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}")


@dataclass(frozen=True, slots=True)
class TokenGrant:
    """What one valid token may do: its name and its scope per collection."""

    name: str
    scopes: dict[str, str] = field(default_factory=dict)  # collection ('*': every one) -> scope

    def scope_in(self, collection: str) -> str | None:
        """The token's scope in `collection` (the larger of its own and `*`'s), None: no access."""
        found = [self.scopes[c] for c in (collection, EVERY_COLLECTION) if c in self.scopes]
        return max(found, key=SCOPES.index) if found else None

    def allows(self, collection: str, scope: str) -> bool:
        granted = self.scope_in(collection)
        return granted is not None and SCOPES.index(granted) >= SCOPES.index(scope)


@dataclass(frozen=True, slots=True)
class TokenInfo:
    """One token as `rag token list` shows it (never the secret)."""

    name: str
    scopes: dict[str, str]
    created_at: datetime
    revoked_at: datetime | None


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def checked_scope(scope: str) -> str:
    if scope not in SCOPES:
        raise ConfigError(f"scope must be one of {', '.join(SCOPES)}, not {scope!r}")
    return scope


def create_token(con: duckdb.DuckDBPyConnection, name: str, collections: Sequence[str], scope: str) -> str:
    """A new token `name` with `scope` in each of `collections`; returns the secret (shown once)."""
    if not _NAME.fullmatch(name):
        raise ConfigError(f"token name {name!r}: use 1-64 letters, digits, '_', '.', '@' or '-'")
    if not collections:
        raise ConfigError("say which collection(s) the token may use (--collection NAME, or '*' for every one)")
    checked_scope(scope)
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    now = datetime.now(UTC).replace(tzinfo=None)
    ensure_schema(con, [TABLE])
    with transaction(con):
        if con.execute(f"SELECT count(*) FROM {TABLE} WHERE name = ? AND revoked_at IS NULL", [name]).fetchone()[0]:
            raise ConfigError(f"a token named {name!r} exists: revoke it first (rag token revoke {name})")
        for collection in dict.fromkeys(collections):
            con.execute(
                f"INSERT INTO {TABLE} VALUES (?, ?, ?, ?, ?, NULL)", [name, hash_token(secret), collection, scope, now]
            )
    return secret


def revoke_token(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """Revoke the valid token `name` (its rows stay, marked revoked)."""
    ensure_schema(con, [TABLE])
    with transaction(con):
        revoked = con.execute(
            f"UPDATE {TABLE} SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL RETURNING name",
            [datetime.now(UTC).replace(tzinfo=None), name],
        ).fetchall()
    if not revoked:
        raise ConfigError(f"no valid token named {name!r} (rag token list shows them)")


def list_tokens(con: duckdb.DuckDBPyConnection) -> list[TokenInfo]:
    """Every token, valid and revoked, oldest first."""
    if not table_exists(con, TABLE):
        return []
    rows = con.execute(
        f"SELECT name, token_hash, created_at, any_value(revoked_at), list(collection ORDER BY collection), "
        f"list(scope ORDER BY collection) FROM {TABLE} GROUP BY name, token_hash, created_at ORDER BY created_at, name"
    ).fetchall()
    return [
        TokenInfo(name, dict(zip(colls, scopes)), created, revoked) for name, _, created, revoked, colls, scopes in rows
    ]


def valid_tokens(con: duckdb.DuckDBPyConnection) -> dict[str, TokenGrant]:
    """token hash -> its grant, for every token not revoked (read-only: no table is created)."""
    if not table_exists(con, TABLE):
        return {}
    grants: dict[str, TokenGrant] = {}
    rows = con.execute(f"SELECT token_hash, name, collection, scope FROM {TABLE} WHERE revoked_at IS NULL").fetchall()
    for token_hash, name, collection, scope in rows:
        grants.setdefault(token_hash, TokenGrant(name)).scopes[collection] = scope
    return grants


def record_asker(con: duckdb.DuckDBPyConnection, answer_id: str, token_name: str) -> None:
    ensure_schema(con, [ASKERS])
    con.execute(f"INSERT INTO {ASKERS} VALUES (?, ?)", [answer_id, token_name])


def askers(con: duckdb.DuckDBPyConnection, answer_ids: Sequence[str]) -> dict[str, str]:
    """answer id -> the name of the token that asked it (answers asked without a token: absent)."""
    if not answer_ids or not table_exists(con, ASKERS):
        return {}
    rows = con.execute(
        f"SELECT answer_id, token_name FROM {ASKERS} WHERE list_contains(?, answer_id)", [list(answer_ids)]
    )
    return dict(rows.fetchall())
