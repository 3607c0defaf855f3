"""The CLI's side of `rag serve`: when RAG_SERVICE_URL is set, `rag search|ask|trace|answers`
send their query to the running service (warm models: no start-up cost) instead of working in
process. Plain urllib: talking to the service imports nothing heavy."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

from rag_assets.core.errors import BackendUnavailable, ConfigError
from rag_assets.core.settings import SERVICE_URL_ENV, service_token

DEFAULT_PORT = 8765


class ServiceClient:
    def __init__(self, url: str, *, timeout_s: float = 600.0, token: str | None = None) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self.token = token if token is not None else service_token()

    def _open(self, path: str, params: dict[str, Any] | None = None, body: dict[str, Any] | None = None):
        query = urllib.parse.urlencode({k: v for k, v in (params or {}).items() if v is not None}, doseq=True)
        request = urllib.request.Request(
            f"{self.url}{path}{'?' + query if query else ''}",
            data=json.dumps(body).encode() if body is not None else None,
            headers={
                **({"Content-Type": "application/json"} if body is not None else {}),
                **({"Authorization": f"Bearer {self.token}"} if self.token else {}),
            },
            method="POST" if body is not None else "GET",
        )
        try:
            return urllib.request.urlopen(request, timeout=self.timeout_s)
        except urllib.error.HTTPError as err:
            detail = _detail(err)
            if err.code in (400, 401, 403, 404, 413, 422):
                raise ConfigError(detail) from None
            raise BackendUnavailable(f"the service at {self.url} answered {err.code}: {detail}") from None
        except (urllib.error.URLError, ConnectionError, TimeoutError) as err:
            raise BackendUnavailable(
                f"no service at {self.url} ({SERVICE_URL_ENV}): {getattr(err, 'reason', err)}; "
                f"start it with `rag serve` or unset {SERVICE_URL_ENV}"
            ) from None

    def get(self, path: str, **params: Any) -> Any:
        with self._open(path, params) as response:
            return json.load(response)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        with self._open(path, body=body) as response:
            return json.load(response)

    def stream(self, path: str, body: dict[str, Any]) -> Iterator[tuple[str, Any]]:
        """(event, data) pairs of a server-sent event stream."""
        with self._open(path, body=body) as response:
            yield from parse_events(line.decode("utf-8") for line in response)


def parse_events(lines: Iterator[str] | Any) -> Iterator[tuple[str, Any]]:
    """Server-sent events: `event: name` then `data: json` lines, a blank line ends one."""
    event, data = "message", []
    for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if data:
                yield event, json.loads("\n".join(data))
            event, data = "message", []
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
    if data:
        yield event, json.loads("\n".join(data))


def _detail(err: urllib.error.HTTPError) -> str:
    try:
        detail = json.loads(err.read().decode() or "{}").get("detail")
    except (ValueError, OSError):
        detail = None
    if isinstance(detail, list):  # FastAPI's validation errors
        detail = "; ".join(f"{'.'.join(map(str, d.get('loc', [])))}: {d.get('msg')}" for d in detail)
    return str(detail or err.reason)


def ask_streaming(client: ServiceClient, body: dict[str, Any], on_text: Callable[[str], None]) -> dict[str, Any]:
    """Ask through the service's stream: the reader's text goes to `on_text`, the stored answer
    (or the error) comes back."""
    for event, data in client.stream("/ask/stream", body):
        if event == "token":
            on_text(data["text"])
        elif event == "answer":
            return data
        elif event == "error":
            if data.get("status") in (400, 404):
                raise ConfigError(data["detail"])
            raise BackendUnavailable(f"the service failed the question: {data['detail']}")
    raise BackendUnavailable("the service closed the stream before the answer")
