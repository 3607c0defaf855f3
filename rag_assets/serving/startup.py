"""`rag serve` starting: the refusal to expose a catalogue without API tokens, the banner naming
URLs the service answers, the one-line log, then uvicorn over the app of serving/app.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rag_assets.core.errors import ConfigError
from rag_assets.serving.access import allowed_hosts, host_literal, is_loopback, is_wildcard, local_url
from rag_assets.serving.limits import DEFAULT_RATE


def run_service(
    *,
    host: str,
    port: int,
    max_asks: int,
    preload: bool,
    hosts: list[str] | None = None,
    rate: str = DEFAULT_RATE,
    threads: int = 1,
) -> None:
    """Serve on `host`:`port`. Another address than loopback needs API tokens: without any in the
    catalogue the service refuses to start (ConfigError), as anyone reaching the port could read all.

    `threads`: torch's threads per model call. One by default: a query embedding or a small
    reader's step is too small to gain from a second thread, and where another process keeps a
    core busy (an index run beside the service), a call split over two threads waits for the one
    that is not scheduled (docs/results.md, "Serving beside indexing", measures both)."""
    import torch
    import uvicorn

    torch.set_num_threads(threads)

    from rag_assets.commands.catalogue_start import start_checks
    from rag_assets.commands.errors import console
    from rag_assets.core.store.api_tokens import valid_tokens
    from rag_assets.serving.app import create_app
    from rag_assets.serving.catalogue_reads import catalogue_path, read_catalogue

    start_checks()  # an older catalogue upgraded, each missing published piece named
    exposed = not is_loopback(host)
    if exposed:
        has_tokens = catalogue_path().exists() and bool(_read(read_catalogue, valid_tokens))
        if not has_tokens:
            raise ConfigError(
                f"refusing to serve on {host}: no API token exists, so anyone reaching the port could read "
                "every collection; create one first (rag token create NAME --collection C --scope read)"
            )
    for line in banner(host, port, hosts):
        console.print(line, highlight=False, soft_wrap=True)  # a URL is never cut in two
    quiet_one_line_log()
    app = create_app(
        max_asks=max_asks, preload=preload, tokens_required=exposed, hosts=allowed_hosts(host, hosts), rate=rate
    )
    uvicorn.run(app, host=host.strip("[]"), port=port, log_level="warning")


def banner(host: str, port: int, extra_hosts: list[str] | None = None) -> list[str]:
    """What `rag serve` prints: where it serves and the RAG_SERVICE_URL a client uses, each a URL
    whose Host the service answers (never http://0.0.0.0, whose Host is refused)."""
    url = local_url(host, port)
    lines = [f"serving on [cyan]{url}/[/cyan] (API: /docs; CLI: RAG_SERVICE_URL={url})"]
    if is_wildcard(host):
        if extra_hosts:
            lines.append(f"from other machines: RAG_SERVICE_URL=http://{host_literal(extra_hosts[0])}:{port}")
        else:
            lines.append(
                f"from other machines: RAG_SERVICE_URL=http://NAME:{port} with this machine's NAME, "
                "once `--allow-host NAME` lets the service answer it"
            )
    return lines


def quiet_one_line_log() -> None:
    """The service's log (serving/limits.py: one line per refusal) on stderr, one record a line."""
    import logging
    import sys

    logger = logging.getLogger("rag_assets.serving")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%Y-%m-%d %H:%M:%S"))
        logger.addHandler(handler)
        logger.setLevel(logging.WARNING)
        logger.propagate = False


def _read(connect: Callable[[], Any], read: Callable[[Any], Any]) -> Any:
    with connect() as con:
        return read(con)
