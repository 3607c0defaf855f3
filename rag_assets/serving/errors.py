"""What an error of a request answers: its HTTP status and a one-line detail with no server path
(the HTTP API and the MCP tools answer alike)."""

from __future__ import annotations

from rag_assets.core.errors import BackendUnavailable, ConfigError
from rag_assets.serving.redaction import without_paths


def status_of(err: BaseException) -> int:
    if isinstance(err, (BackendUnavailable, TimeoutError, ConnectionError)):
        return 503
    if isinstance(err, KeyError):
        return 404
    if isinstance(err, (ConfigError, ValueError, FileNotFoundError)):
        return 400
    from rag_assets.core.store.connections import is_lock_conflict

    return 503 if is_lock_conflict(err) else 500


def detail_of(err: BaseException) -> str:
    if isinstance(err, KeyError) and err.args:
        return without_paths(str(err.args[0]))
    return without_paths(" ".join(str(err).split())) or type(err).__name__


def described(err: BaseException) -> tuple[int, str]:
    return status_of(err), detail_of(err)
