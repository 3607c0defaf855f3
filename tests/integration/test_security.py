"""The service tried as an attacker and as a team lead would, against a real `rag serve`: API
tokens with a scope per collection on every endpoint, the Host allow-list (DNS rebinding), the
reranker path probe, size caps, an abandoned ask freeing its slot, rate limits, no server path in
a response, one log line per refusal, /docs offline, and a refused start on a public address."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.integration.served_project import materialize, project_env, running_service

pytestmark = pytest.mark.integration

KETTLE = "How hot should the water be for green tea?"
FAST_ASK = {"question": KETTLE, "collection": "tiny", "strategy": "no-retrieval"}
TOKENS = {  # name -> (collection, scope)
    "reader": ("tiny", "read"),
    "asker": ("tiny", "ask"),
    "elsewhere": ("other", "admin"),  # every scope, in another collection
    "boss": ("*", "admin"),
}


def _cli(env: dict[str, str], *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rag_assets.cli", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO_ROOT,
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, smollm2_checkpoint: Path) -> dict[str, str]:
    env = project_env(tmp_path_factory.mktemp("secured"), smollm2_checkpoint)
    materialize(env)
    return env


@pytest.fixture(scope="module")
def tokens(project: dict[str, str]) -> dict[str, str]:
    made = {}
    for name, (collection, scope) in TOKENS.items():
        created = _cli(project, "token", "create", name, "--collection", collection, "--scope", scope)
        assert created.returncode == 0, created.stderr
        made[name] = created.stdout.strip()
    return made


@pytest.fixture(scope="module")
def served(project: dict[str, str], tokens: dict[str, str]) -> str:
    with running_service(project, "--max-asks", "1") as url:
        yield url


def call(
    url: str,
    method: str,
    path: str,
    body: dict | bytes | None = None,
    token: str | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict, dict[str, str]]:
    """(status, JSON body, headers) of one request (an event stream's body: {'events': text})."""
    parsed = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=600)
    sent = {**(headers or {})}
    if token:
        sent["Authorization"] = f"Bearer {token}"
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    if data is not None:
        sent.setdefault("Content-Type", "application/json")
    connection.request(method, path, body=data, headers=sent)
    response = connection.getresponse()
    raw = response.read()
    connection.close()
    kind = response.getheader("content-type", "")
    payload = {"events": raw.decode()} if "event-stream" in kind else json.loads(raw or b"{}") if "json" in kind else {}
    return response.status, payload, {k.lower(): v for k, v in response.getheaders()}


def _an_answer(url: str, tokens: dict[str, str]) -> dict:
    status, asked, _ = call(url, "POST", "/ask", FAST_ASK, tokens["asker"])
    assert status == 200, asked
    return asked["answer"]


ENDPOINTS = [  # method, path, body, the scope it needs (in collection tiny)
    ("GET", "/search?q=green+tea&collection=tiny", None, "read"),
    ("GET", "/search?q=green+tea", None, "read"),
    ("GET", "/documents/tiny/tiny/kettle.md", None, "read"),
    ("GET", "/answers?collection=tiny", None, "read"),
    ("GET", "/trace/{answer_id}", None, "read"),
    ("POST", "/ask", FAST_ASK, "ask"),
    ("POST", "/ask/stream", FAST_ASK, "ask"),
]


@pytest.mark.timeout(2400)
@pytest.mark.parametrize(("method", "path", "body", "scope"), ENDPOINTS)
def test_each_endpoint_without_a_token_with_the_wrong_collection_and_with_the_right_scope(
    served: str, tokens: dict[str, str], method: str, path: str, body: dict | None, scope: str
) -> None:
    if "{answer_id}" in path:
        path = path.format(answer_id=_an_answer(served, tokens)["answer_id"])
    status, refused, headers = call(served, method, path, body)
    assert status == 401 and "API token" in refused["detail"] and headers["www-authenticate"] == "Bearer"
    assert call(served, method, path, body, "not-a-token")[0] == 401
    status, refused, _ = call(served, method, path, body, tokens["elsewhere"])
    # an answer of a collection the token may not read is not there for it
    assert status == (404 if path.startswith("/trace") else 403), refused
    if scope == "ask":  # reading is not asking
        status, refused, _ = call(served, method, path, body, tokens["reader"])
        assert status == 403 and "may not ask in collection 'tiny'" in refused["detail"]
    right = tokens["reader"] if scope == "read" else tokens["asker"]
    status, answered, _ = call(served, method, path, body, right)
    assert status == 200, answered
    assert call(served, method, path, body, tokens["boss"])[0] == 200


@pytest.mark.timeout(1200)
def test_answers_name_their_token_and_each_token_sees_only_what_it_may_read(
    served: str, tokens: dict[str, str]
) -> None:
    answer = _an_answer(served, tokens)
    status, listing, _ = call(served, "GET", "/answers", token=tokens["reader"])
    assert status == 200
    mine = {a["answer_id"]: a for a in listing["answers"]}
    assert mine[answer["answer_id"]]["asked_by"] == "asker"
    assert listing["facets"]["collection"] == ["tiny"]
    status, listing, _ = call(served, "GET", "/answers", token=tokens["elsewhere"])
    assert status == 403  # its one collection has no trees in this catalogue: nothing it may read
    status, listing, _ = call(served, "GET", "/collections", token=tokens["reader"])
    assert [c["collection"] for c in listing["collections"]] == ["tiny"]
    status, health, _ = call(served, "GET", "/health")
    assert status == 200 and health["collections"] == [] and health["token"] is None
    assert call(served, "GET", "/health", token=tokens["reader"])[1]["collections"] == ["tiny"]
    status, listed, _ = call(served, "GET", "/tokens", token=tokens["boss"])
    assert status == 200 and {t["name"] for t in listed["tokens"]} == set(TOKENS)
    assert all("hash" not in json.dumps(t) for t in listed["tokens"])
    assert call(served, "GET", "/tokens", token=tokens["asker"])[0] == 403


@pytest.mark.timeout(1200)
def test_a_revoked_token_is_refused_from_the_next_request_on(project: dict[str, str], served: str) -> None:
    created = _cli(project, "token", "create", "temp", "--collection", "tiny", "--scope", "read")
    token = created.stdout.strip()
    assert call(served, "GET", "/documents/tiny/tiny/kettle.md", token=token)[0] == 200
    revoked = _cli(project, "token", "revoke", "temp")
    assert revoked.returncode == 0, revoked.stderr
    status, refused, _ = call(served, "GET", "/documents/tiny/tiny/kettle.md", token=token)
    assert status == 401 and "unknown or revoked" in refused["detail"]
    listed = _cli(project, "token", "list")
    assert "temp" not in listed.stdout and "reader" in listed.stdout and token not in listed.stdout


@pytest.mark.timeout(1200)
def test_a_foreign_host_header_is_refused(served: str, tokens: dict[str, str]) -> None:
    """DNS rebinding: a page of evil.example resolving to 127.0.0.1 sends Host: evil.example."""
    path = "/documents/tiny/tiny/kettle.md"
    assert call(served, "GET", path, token=tokens["reader"], headers={"Host": "evil.example"})[0] == 400
    assert call(served, "GET", path, token=tokens["reader"], headers={"Host": "localhost"})[0] == 200


@pytest.mark.timeout(1200)
def test_the_reranker_parameter_names_no_folder(served: str, tokens: dict[str, str]) -> None:
    """`reranker=/root` and `reranker=/etc/passwd` once told which paths exist; now any value but
    `latest` or a published id is refused alike, without reading the disk."""
    details = []
    for probe in ("/root", "/etc/passwd", "/no/such/folder"):
        query = urllib.parse.urlencode({"q": "tea", "collection": "tiny", "reranker": probe})
        status, refused, _ = call(served, "GET", f"/search?{query}", token=tokens["reader"])
        assert status == 400, refused
        details.append(refused["detail"].replace(probe, "X"))
    assert len(set(details)) == 1 and "published reranker id" in details[0]


@pytest.mark.timeout(1200)
def test_sizes_and_bounds_are_refused_naming_the_limit(served: str, tokens: dict[str, str]) -> None:
    asker = tokens["asker"]
    status, refused, _ = call(served, "POST", "/ask", {**FAST_ASK, "question": "tea? " * 200_000}, asker)
    assert status == 413 and "65536" in refused["detail"]
    status, refused, _ = call(served, "POST", "/ask", {**FAST_ASK, "question": "x" * 2001}, asker)
    assert status == 413 and "2001 characters" in refused["detail"] and "limit is 2000" in refused["detail"]
    status, refused, _ = call(served, "POST", "/ask/stream", {**FAST_ASK, "question": "x" * 2001}, asker)
    assert status == 413 and "limit is 2000" in refused["detail"]
    status, refused, _ = call(served, "GET", f"/search?q={'x' * 1001}&collection=tiny", token=asker)
    assert status == 413 and "limit is 1000" in refused["detail"]
    assert call(served, "POST", "/ask", {**FAST_ASK, "top_k": 51}, asker)[0] == 422
    assert call(served, "GET", "/search?q=tea&k=101", token=asker)[0] == 422
    many = "&".join(f"collection=c{i}" for i in range(17))
    assert call(served, "GET", f"/search?q=tea&{many}", token=tokens["boss"])[0] == 413


@pytest.mark.timeout(1200)
def test_the_stream_answers_bad_input_as_the_whole_ask_does(served: str, tokens: dict[str, str]) -> None:
    for bad in ({**FAST_ASK, "question": "   "}, {**FAST_ASK, "strategy": "nope"}, {**FAST_ASK, "collection": "x"}):
        whole = call(served, "POST", "/ask", bad, tokens["boss"])
        streamed = call(served, "POST", "/ask/stream", bad, tokens["boss"])
        assert whole[0] in (400, 403) and streamed[0] == whole[0] and streamed[1] == whole[1]


@pytest.mark.timeout(1200)
def test_no_server_path_in_responses_and_like_wildcards_match_themselves(
    project: dict[str, str], served: str, tokens: dict[str, str]
) -> None:
    root = str(Path(project["RAG_DATA_DIR"]).parent)
    status, document, _ = call(served, "GET", "/documents/tiny/tiny/kettle.md", token=tokens["reader"])
    assert status == 200 and document["uri"] == "kettle.md"
    answer = _an_answer(served, tokens)
    status, trace, _ = call(served, "GET", f"/trace/{answer['answer_id']}", token=tokens["reader"])
    assert status == 200 and root not in json.dumps(trace)
    assert all(not s["uri"].startswith("/") for s in trace["sources"])
    status, listing, _ = call(served, "GET", "/answers?contains=%25", token=tokens["reader"])
    assert status == 200 and listing["answers"] == []  # no question holds a '%'
    status, listing, _ = call(served, "GET", "/answers?contains=green%20tea", token=tokens["reader"])
    assert listing["answers"]


@pytest.mark.timeout(1200)
def test_docs_load_nothing_from_a_cdn(served: str) -> None:
    status, _, _ = call(served, "GET", "/docs")
    parsed = urllib.parse.urlsplit(served)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
    connection.request("GET", "/docs")
    page = connection.getresponse().read().decode()
    assert status == 200 and "/docs-assets/swagger-ui-bundle.js" in page
    assert "cdn" not in page.lower() and "https://" not in page.replace("https://fastapi", "")
    connection.request("GET", "/docs-assets/swagger-ui-bundle.js")
    script = connection.getresponse()
    assert script.status == 200 and len(script.read()) > 100_000


def _open_ask(url: str, path: str, body: dict, token: str) -> socket.socket:
    """A raw connection that sends an ask and does not wait for its answer."""
    parsed = urllib.parse.urlsplit(url)
    conn = socket.create_connection((parsed.hostname, parsed.port))
    data = json.dumps(body).encode()
    conn.sendall(
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {token}\r\nContent-Length: {len(data)}\r\n\r\n".encode()
        + data
    )
    return conn


def _slot_freed_within(url: str, token: str, seconds: float) -> float | None:
    """Seconds until an ask is admitted again (an admitted ask with an unknown strategy is a 400,
    a refused one a 503), or None when it was not within `seconds`."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        status, _, _ = call(url, "POST", "/ask", {**FAST_ASK, "strategy": "nope"}, token)
        if status == 400:
            return time.monotonic() - started
        assert status == 503
        time.sleep(0.05)
    return None


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("path", ["/ask/stream", "/ask"])
def test_an_abandoned_ask_frees_its_slot_within_a_second(served: str, tokens: dict[str, str], path: str) -> None:
    """--max-asks 1: while an ask runs the next is refused with 503 and Retry-After; the client of
    the running one goes away mid-generation and the slot is free again within a second."""
    asker = tokens["asker"]
    conn = _open_ask(served, path, {**FAST_ASK, "strategy": "rdr2"}, asker)
    try:
        if path == "/ask/stream":  # the stream has begun: the reader is generating
            received = b""
            while b"event: token" not in received:
                received += conn.recv(4096)
        else:
            time.sleep(3)  # routing and reading under way
        status, refused, headers = call(served, "POST", "/ask", FAST_ASK, asker)
        assert status == 503 and "overloaded" in refused["detail"] and int(headers["retry-after"]) >= 1
    finally:
        conn.close()
    freed = _slot_freed_within(served, asker, 1.0)
    assert freed is not None, "the abandoned ask still held its slot after 1 s"


@pytest.mark.timeout(1200)
def test_a_refusal_is_one_log_line(project: dict[str, str], served: str) -> None:
    call(served, "GET", "/search?q=tea&collection=nosuch")
    call(served, "GET", "/documents/tiny/none")
    logs = list(Path(project["RAG_DATA_DIR"]).parent.glob("serve-*.log"))
    text = "\n".join(log.read_text() for log in logs)
    assert "GET /search -> 401" in text and "Traceback" not in text


@pytest.mark.timeout(1200)
def test_rate_limit_per_token(project: dict[str, str], tokens: dict[str, str]) -> None:
    with running_service(project, "--no-preload", "--rate-limit", "3/minute") as url:
        path = "/documents/tiny/tiny/kettle.md"
        assert [call(url, "GET", path, token=tokens["reader"])[0] for _ in range(3)] == [200] * 3
        status, refused, headers = call(url, "GET", path, token=tokens["reader"])
        assert status == 429 and "3/minute" in refused["detail"] and int(headers["retry-after"]) >= 1
        assert call(url, "GET", path, token=tokens["boss"])[0] == 200  # another token: its own count


@pytest.mark.timeout(600)
def test_a_public_address_without_tokens_refuses_to_start(tmp_path: Path, smollm2_checkpoint: Path) -> None:
    env = project_env(tmp_path, smollm2_checkpoint)
    started = _cli(env, "serve", "--host", "0.0.0.0", "--port", "1", timeout=120)
    assert started.returncode == 2
    lines = started.stderr.strip().splitlines()
    assert len(lines) == 1 and "refusing to serve on 0.0.0.0: no API token exists" in lines[0]
