"""The MCP tools answering without any model (an in-process client, over stdio's access and over
the app's HTTP): refusals say how to send the token and are logged as the API's are, a caller
without rights learns nothing of an answer, and a not-found answer says why."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from rag_assets.core.answering.no_answer import RelevanceFloor
from rag_assets.serving.access import OVER_STDIO, TokenBook
from rag_assets.serving.app import create_app
from rag_assets.serving.asking import AskResult
from rag_assets.serving.catalogue_reads import read_catalogue
from rag_assets.serving.mcp_server import McpAccess, build_mcp
from rag_assets.serving.query import QueryService
from tests.answer_outcomes import answer_outcome
from tests.unit.service_catalogue import ServedCatalogue, answer_record, served_catalogue_in

pytestmark = pytest.mark.unit


@pytest.fixture
def served_catalogue(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ServedCatalogue:
    return served_catalogue_in(tmp_path, monkeypatch)


LOCAL = "http://127.0.0.1:8765"


async def _calls(client: Any, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[bool, str]]:
    async with client as session:
        return [
            (result.is_error, result.content[0].text)
            for result in [await session.call_tool(name, arguments) for name, arguments in calls]
        ]


def _stdio(service: QueryService, token: str | None) -> Client:
    """The tools as `rag mcp` serves them (the token of RAG_SERVICE_TOKEN), called in process."""
    return Client(build_mcp(service, McpAccess(TokenBook(tokens_required=False), None, token, OVER_STDIO)))


def _logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "rag_assets.serving"]


def test_a_stdio_refusal_names_rag_service_token_and_every_refusal_is_logged(
    served_catalogue: ServedCatalogue, caplog: pytest.LogCaptureFixture
) -> None:
    service = QueryService()
    with caplog.at_level(logging.WARNING, logger="rag_assets.serving"):
        ((error, text),) = asyncio.run(_calls(_stdio(service, None), [("search", {"query": "tea"})]))
        assert error and "RAG_SERVICE_TOKEN" in text and "Authorization" not in text, text
        ((error, text),) = asyncio.run(_calls(_stdio(service, "rag_forged"), [("list_collections", {})]))
        assert error and "RAG_SERVICE_TOKEN" in text, text
        reader = _stdio(service, served_catalogue.tokens["reader"])
        ((error, text),) = asyncio.run(_calls(reader, [("ask", {"question": "tea?", "collection": "tiny"})]))
        assert error and "may not ask in collection 'tiny'" in text
    assert _logged(caplog) == [
        "MCP tool search -> 401 (no token, client stdio)",
        "MCP tool list_collections -> 401 (an unknown token, client stdio)",
        "MCP tool ask -> 403 (token 'reader', client stdio)",
    ]


def test_an_http_mcp_refusal_is_logged_with_the_client_address(
    served_catalogue: ServedCatalogue, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(QueryService())

    async def session() -> list[tuple[bool, str]]:
        async with app.state.mcp.session_manager.run():
            transport = httpx.ASGITransport(app=app, client=("192.0.2.7", 50000))
            async with httpx.AsyncClient(transport=transport, base_url=LOCAL) as http:
                return await _calls(
                    Client(streamable_http_client(f"{LOCAL}/mcp/", http_client=http)), [("search", {"query": "tea"})]
                )

    with caplog.at_level(logging.WARNING, logger="rag_assets.serving"):
        ((error, text),) = asyncio.run(session())
    assert error and "send Authorization: Bearer TOKEN" in text
    assert _logged(caplog) == ["MCP tool search -> 401 (no token, client 192.0.2.7)"]


def test_an_mcp_caller_without_rights_cannot_tell_a_stored_answer_from_an_unknown_id(
    served_catalogue: ServedCatalogue,
) -> None:
    known = served_catalogue.answer.answer_id
    unknown = "0" * len(known)
    service = QueryService()
    ((error, traced),) = asyncio.run(
        _calls(_stdio(service, served_catalogue.tokens["reader"]), [("trace", {"answer_id": known})])
    )
    assert not error and json.loads(traced)["answer"]["answer_id"] == known
    elsewhere = _stdio(service, served_catalogue.tokens["elsewhere"])
    forbidden, missing = asyncio.run(_calls(elsewhere, [("trace", {"answer_id": i}) for i in (known, unknown)]))
    assert forbidden[0] and missing[0]
    assert forbidden[1].replace(known, "ID") == missing[1].replace(unknown, "ID")


FLOOR = RelevanceFloor(0.42, "minilm", 30)


class NothingFound(QueryService):
    """Answers every question 'not found' below the collection's relevance floor, as the reader does."""

    def ask(self, question: str, **_: Any) -> AskResult:
        outcome = answer_outcome(question, "not found", "", not_found=True, relevance=0.11)
        with read_catalogue() as con:
            record = answer_record(con, question, not_found=True, relevance=0.11)
        return AskResult(record, outcome, None, "short", notes=[], floor=FLOOR)


def test_an_mcp_not_found_answer_says_why_in_the_words_of_the_http_answer(served_catalogue: ServedCatalogue) -> None:
    service = NothingFound()
    token = served_catalogue.tokens["asker"]
    body = {"question": "Who won the 1930 world cup?", "collection": "tiny", "strategy": "rag-hybrid"}
    ((error, text),) = asyncio.run(_calls(_stdio(service, token), [("ask", body)]))
    assert not error, text
    over_http = TestClient(create_app(service), base_url=LOCAL).post(
        "/ask", json=body, headers={"Authorization": f"Bearer {token}"}
    )
    assert over_http.status_code == 200
    assert json.loads(text)["form_note"] == over_http.json()["form_note"] == FLOOR.note(0.11)
    assert "not found: the evidence given does not answer the question" in json.loads(text)["form_note"]
