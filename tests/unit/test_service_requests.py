"""The service's app answering requests without any model (FastAPI's TestClient over a catalogue
made by hand): the Host allow-list with IPv6 and the banner's URLs, unknown ask fields, what a
caller without rights learns of an answer, and one log line per refusal naming the token."""

from __future__ import annotations

import logging
import re
import urllib.parse
from dataclasses import asdict
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from rag_assets.core.answering.policy.options import AskOptions
from rag_assets.serving.access import allowed_hosts
from rag_assets.serving.app import AskBody, create_app
from rag_assets.serving.query import QueryService
from rag_assets.serving.startup import banner
from tests.unit.service_catalogue import ServedCatalogue, served_catalogue_in

pytestmark = pytest.mark.unit


@pytest.fixture
def served_catalogue(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ServedCatalogue:
    return served_catalogue_in(tmp_path, monkeypatch)


def _client(hosts: list[str] | None = None, **options: object) -> TestClient:
    return TestClient(create_app(QueryService(), hosts=hosts, **options), base_url="http://127.0.0.1:8765")


def _bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def test_an_ipv6_loopback_service_answers_its_bracketed_host_and_prints_it(served_catalogue: ServedCatalogue) -> None:
    client = _client(allowed_hosts("::1"))
    assert client.get("/health", headers={"Host": "[::1]:8765"}).status_code == 200
    assert client.get("/health", headers={"Host": "[::1]"}).status_code == 200
    assert client.get("/health", headers={"Host": "evil.example:8765"}).status_code == 400
    assert "http://[::1]:8765/" in banner("::1", 8765)[0]
    assert "RAG_SERVICE_URL=http://[::1]:8765)" in banner("::1", 8765)[0]


@pytest.mark.parametrize(("bind", "extra"), [("0.0.0.0", []), ("0.0.0.0", ["kb.example.org"]), ("::", [])])
def test_the_banner_of_a_wildcard_address_suggests_urls_the_service_answers(
    served_catalogue: ServedCatalogue, bind: str, extra: list[str]
) -> None:
    lines = banner(bind, 8765, extra)
    assert not any("0.0.0.0" in line or "//[::]" in line for line in lines), lines
    suggested = [u for u in re.findall(r"RAG_SERVICE_URL=(http://[^\s)]+)", "\n".join(lines)) if "NAME" not in u]
    assert suggested, lines
    client = _client(allowed_hosts(bind, extra))
    for url in suggested:
        host = urllib.parse.urlsplit(url).netloc
        assert client.get("/health", headers={"Host": host}).status_code == 200, url
    if not extra:  # other machines: the name to allow is said
        assert "--allow-host NAME" in lines[-1]


@pytest.mark.parametrize("path", ["/ask", "/ask/stream"])
def test_an_unknown_ask_field_is_refused_naming_it(served_catalogue: ServedCatalogue, path: str) -> None:
    client = _client()
    body = {"question": "How hot for green tea?", "collection": "tiny", "reranker": "/etc"}
    refused = client.post(path, json=body, headers=_bearer(served_catalogue.tokens["asker"]))
    assert refused.status_code == 422
    (error,) = refused.json()["detail"]
    assert error["loc"] == ["body", "reranker"] and error["type"] == "extra_forbidden"


def test_every_ask_option_the_cli_sends_is_a_field_of_the_body() -> None:
    sent = {"question": "q", "collection": "tiny", "strategy": "rdr2", **asdict(AskOptions(top_k=3, form="extractive"))}
    assert AskBody(**sent).options() == AskOptions(top_k=3, form="extractive")


def test_a_reader_without_rights_cannot_tell_a_stored_answer_from_an_unknown_id(
    served_catalogue: ServedCatalogue,
) -> None:
    client = _client()
    known = served_catalogue.answer.answer_id
    unknown = "0" * len(known)
    tokens = served_catalogue.tokens
    assert client.get(f"/trace/{known}", headers=_bearer(tokens["reader"])).status_code == 200
    forbidden = client.get(f"/trace/{known}", headers=_bearer(tokens["elsewhere"]))
    missing = client.get(f"/trace/{unknown}", headers=_bearer(tokens["elsewhere"]))
    assert forbidden.status_code == missing.status_code == 404
    assert forbidden.json()["detail"].replace(known, "ID") == missing.json()["detail"].replace(unknown, "ID")
    assert forbidden.headers["content-length"] == missing.headers["content-length"]


def _refusals(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "rag_assets.serving"]


def test_a_refusal_is_one_log_line_naming_the_token_and_the_client(
    served_catalogue: ServedCatalogue, caplog: pytest.LogCaptureFixture
) -> None:
    client = _client()
    secret = served_catalogue.tokens["reader"]
    with caplog.at_level(logging.WARNING, logger="rag_assets.serving"):
        assert client.get("/search", params={"q": "tea"}).status_code == 401
        assert client.get("/search", params={"q": "tea"}, headers=_bearer("rag_forged")).status_code == 401
        assert client.get("/documents/tiny/no%0Aforged line", headers=_bearer(secret)).status_code == 404
    assert _refusals(caplog) == [
        "GET /search -> 401 (no token, client testclient)",
        "GET /search -> 401 (an unknown token, client testclient)",
        r"GET /documents/tiny/no\nforged line -> 404 (token 'reader', client testclient)",
    ]
    assert not any(secret in line or "rag_forged" in line for line in _refusals(caplog))
