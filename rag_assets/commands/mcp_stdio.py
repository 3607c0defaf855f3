"""`rag mcp`: the MCP tools of rag_assets/serving/mcp_server.py over stdio, for a local agent."""

from __future__ import annotations

from rag_assets.commands.errors import checked_data_dir
from rag_assets.core.settings import service_token


def serve_stdio() -> None:
    """Serve until the agent closes stdin; stdout carries only the protocol's messages."""
    from rag_assets.events.reconcile import answers_reported
    from rag_assets.serving.mcp_server import run_stdio

    checked_data_dir()
    with answers_reported():  # an agent gone at once loses no answer's Dagster event
        run_stdio(service_token())
