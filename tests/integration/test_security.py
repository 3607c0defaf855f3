"""The service tried as an attacker and as a team lead would, against a real `rag serve`: API
tokens with a scope per collection on every endpoint, the Host allow-list (DNS rebinding), the
reranker path probe, size caps, an abandoned ask freeing its slot, rate limits, no server path in
a response, one log line per refusal, /docs offline, and a refused start on a public address."""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any

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
        if collection == "other":  # not in the catalogue: `rag token create` refuses it (a dropped collection's token)
            made[name] = _token_of_a_collection_not_indexed(project, name, collection, scope)
            continue
        created = _cli(project, "token", "create", name, "--collection", collection, "--scope", scope)
        assert created.returncode == 0, created.stderr
        made[name] = created.stdout.strip()
    return made


def _token_of_a_collection_not_indexed(project: dict[str, str], name: str, collection: str, scope: str) -> str:
    import duckdb

    from rag_assets.core.store.api_tokens import create_token

    with duckdb.connect(str(Path(project["RAG_DATA_DIR"]) / "catalogue.duckdb")) as con:
        return create_token(con, name, [collection], scope)


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
        details.append(re.sub(r"'[^']*'", "'X'", refused["detail"]))  # the value echoed back aside
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
# Only the whole ask: the stream now sends settled sentences only (serving/streaming.py), so its
# first token event can come when a one-sentence answer is already complete and stored (the
# generation's own stop on a client gone is tests/unit/test_ask_cancelling.py's).
@pytest.mark.parametrize("path", ["/ask"])
def test_an_abandoned_ask_frees_its_slot_within_a_second(
    project: dict[str, str], served: str, tokens: dict[str, str], path: str
) -> None:
    """--max-asks 1: while an ask runs the next is refused with 503 and Retry-After; the client of
    the running one goes away (the stream: once the reader is generating) and the slot is free
    again within a second; the abandoned ask stops, stores nothing and logs no traceback (its
    cancellation is nobody's error)."""
    asker = tokens["asker"]
    question = f"Abandoned over {path}: how hot should the water be for green tea?"
    conn = _open_ask(
        served, path, {**FAST_ASK, "question": question, "strategy": "rdr2", "top_k": 8, "form": "generated"}, asker
    )
    try:
        if path == "/ask/stream":  # the stream has begun: the reader is generating
            received = b""
            while b"event: token" not in received:
                received += conn.recv(4096)
        status, refused, headers = call(served, "POST", "/ask", {**FAST_ASK, "strategy": "nope"}, asker)
        for _ in range(100):  # until the ask is admitted (an admitted probe is a 400)
            if status == 503:
                break
            time.sleep(0.02)
            status, refused, headers = call(served, "POST", "/ask", {**FAST_ASK, "strategy": "nope"}, asker)
        assert status == 503 and "overloaded" in refused["detail"] and int(headers["retry-after"]) >= 1
    finally:
        conn.close()
    freed = _slot_freed_within(served, asker, 1.0)
    assert freed is not None, "the abandoned ask still held its slot after 1 s"
    time.sleep(10)  # longer than the ask would have taken to finish and be stored
    status, listing, _ = call(served, "GET", f"/answers?contains={urllib.parse.quote(question)}", token=asker)
    assert status == 200 and listing["answers"] == []
    logs = "\n".join(log.read_text() for log in Path(project["RAG_DATA_DIR"]).parent.glob("serve-*.log"))
    assert "POST /ask -> 499" in logs and "never retrieved" not in logs and "Traceback" not in logs


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


def _mcp_http(url: str, token: str | None) -> Any:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return Client(streamable_http_client(f"{url}/mcp/", http_client=create_mcp_http_client(headers=headers)))


def _mcp_stdio(env: dict[str, str], token: str | None) -> Any:
    from mcp import Client, StdioServerParameters

    process_env = {**os.environ, **env, "RAG_SERVICE_TOKEN": token or ""}
    command = [sys.executable, "-m", "rag_assets.cli", "mcp"]
    return Client(StdioServerParameters(command=command[0], args=command[1:], env=process_env, cwd=str(REPO_ROOT)))


async def _mcp_session(client: Any) -> dict[str, Any]:
    """Every tool listed, then each called once: what the calls answered (text, error or not)."""
    async with client as session:
        listed = sorted(tool.name for tool in (await session.list_tools()).tools)
        calls = {
            "list_collections": {},
            "search": {"query": "green tea", "collection": "tiny", "k": 1, "mode": "bm25"},
            "read_document": {"collection": "tiny", "doc_id": "tiny/kettle.md", "node_id": 7},
            "ask": {"question": KETTLE, "collection": "tiny", "strategy": "rag-hybrid"},
        }
        results = {name: await session.call_tool(name, arguments) for name, arguments in calls.items()}
        answered = {n: json.loads(r.content[0].text) for n, r in results.items() if not r.is_error}
        if "ask" in answered:
            traced = await session.call_tool("trace", {"answer_id": answered["ask"]["answer_id"]})
            results["trace"] = traced
            if not traced.is_error:
                answered["trace"] = json.loads(traced.content[0].text)
        errors = {n: r.content[0].text for n, r in results.items() if r.is_error}
        return {"tools": listed, "answered": answered, "errors": errors}


MCP_TOOLS = ["ask", "list_collections", "read_document", "search", "trace"]


def _check_mcp_with_token(found: dict[str, Any]) -> None:
    assert found["tools"] == MCP_TOOLS and found["errors"] == {}
    answered = found["answered"]
    assert answered["list_collections"]["collections"] == [{"collection": "tiny", "scope": "ask"}]
    assert answered["search"]["hits"][0]["doc_id"] == "tiny/kettle.md"
    subtree = answered["read_document"]["nodes"]
    assert subtree[0]["node_id"] == 7 and subtree[0]["kind"] == "structure"  # the "Boiling" heading
    assert "green tea | 80 C" in [n["text"] for n in subtree] and answered["read_document"]["source"] == "kettle.md"
    citations = answered["ask"]["citations"]
    assert answered["ask"]["answer"] and citations and citations[0]["doc_id"] == "tiny/kettle.md"
    assert answered["trace"]["answer"]["answer_id"] == answered["ask"]["answer_id"]


@pytest.mark.timeout(1200)
def test_mcp_over_http_with_and_without_a_token(served: str, tokens: dict[str, str]) -> None:
    import asyncio

    _check_mcp_with_token(asyncio.run(_mcp_session(_mcp_http(served, tokens["asker"]))))
    refused = asyncio.run(_mcp_session(_mcp_http(served, None)))
    assert refused["tools"] == MCP_TOOLS and refused["answered"] == {}
    assert all("needs an API token" in text for text in refused["errors"].values()), refused["errors"]
    reader = asyncio.run(_mcp_session(_mcp_http(served, tokens["reader"])))
    assert set(reader["answered"]) == {"list_collections", "search", "read_document"}
    assert "may not ask in collection 'tiny'" in reader["errors"]["ask"]


@pytest.mark.timeout(1200)
def test_mcp_over_stdio_with_and_without_a_token(project: dict[str, str], tokens: dict[str, str]) -> None:
    import asyncio

    _check_mcp_with_token(asyncio.run(_mcp_session(_mcp_stdio(project, tokens["asker"]))))
    refused = asyncio.run(_mcp_session(_mcp_stdio(project, None)))
    assert refused["answered"] == {} and "needs an API token" in refused["errors"]["search"]


INGEST_MEASURED = """
import json, sys, time
from rag_assets.core.corpus.sources import CollectionSpec, ingest
started = time.monotonic()
result = ingest(CollectionSpec("hostile", sys.argv[1]))
print(json.dumps({
    "seconds": time.monotonic() - started,
    "documents": [d.uri for d in result.documents],
    "reasons": {r.uri.rsplit("/", 1)[-1]: r.reason for r in result.rejections},
}))
"""


# Linux keeps a process's peak memory across exec: a child started by this (large) test process
# would report the test's own peak. So a small launcher runs the measured process and reads its
# peak with getrusage(RUSAGE_CHILDREN), the only child it ever has.
MEASURED_CHILD = """
import json, resource, subprocess, sys
run = subprocess.run([sys.executable, "-c", sys.argv[1], *sys.argv[2:]], capture_output=True, text=True)
sys.stderr.write(run.stderr)
result = json.loads(run.stdout.strip().splitlines()[-1])
result["peak_mib"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps(result))
"""


def write_zip_bomb(path: Path, expanded_mib: int) -> None:
    """A .docx (python-docx's own parts) whose document.xml expands to `expanded_mib` MiB of
    paragraphs while the file stays a few MB: written in 1 MiB pieces, never held whole."""
    import io
    import zipfile

    import docx

    blank = io.BytesIO()
    docx.Document().save(blank)
    paragraph = b"<w:p><w:r><w:t>lol</w:t></w:r></w:p>"
    piece = paragraph * (1024 * 1024 // len(paragraph))
    piece += b" " * (1024 * 1024 - len(piece))  # exactly 1 MiB
    with zipfile.ZipFile(io.BytesIO(blank.getvalue())) as source, zipfile.ZipFile(path, "w") as bomb:
        for entry in source.infolist():
            if entry.filename != "word/document.xml":
                bomb.writestr(entry, source.read(entry))
        info = zipfile.ZipInfo("word/document.xml")
        info.compress_type = zipfile.ZIP_DEFLATED
        with bomb.open(info, "w", force_zip64=True) as part:
            part.write(b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>')
            for _ in range(expanded_mib):
                part.write(piece)
            part.write(b"</w:body></w:document>")


@pytest.mark.timeout(600)
def test_a_zip_bomb_is_rejected_within_5_s_and_300_mib(tmp_path: Path) -> None:
    """An 11 MB Word file expanding to 3.2 GB once reached 8.3 GB of memory; a 1 GiB one here is
    refused from the zip's directory, measured in a process of its own."""
    folder = tmp_path / "hostile"
    folder.mkdir()
    write_zip_bomb(folder / "bomb.docx", expanded_mib=1024)
    assert (folder / "bomb.docx").stat().st_size < 32 * 1024 * 1024  # passes the file size limit
    run = subprocess.run(
        [sys.executable, "-c", MEASURED_CHILD, INGEST_MEASURED, str(folder)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    assert run.returncode == 0, run.stderr[-3000:]
    measured = json.loads(run.stdout.strip().splitlines()[-1])
    assert measured["documents"] == []
    assert re.search(r"would expand to 102\d MB, over the 64 MB limit \(a zip bomb", measured["reasons"]["bomb.docx"])
    assert measured["seconds"] < 5, measured
    assert measured["peak_mib"] < 300, measured


@pytest.mark.timeout(1200)
def test_the_page_signs_in_with_a_token(served: str, tokens: dict[str, str]) -> None:
    """The page asks for a token when the service answers 401, keeps it in the browser and sends it."""
    from tests.integration.test_browser import CHROMIUM, CHROMIUM_ARGS

    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the dev extra)")
    if not Path(CHROMIUM).exists():
        pytest.skip("no system Chromium: cluster/install-packages.sh installs it (apt-get install chromium)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page()
            page.goto(served)
            sync_api.expect(page.locator("#signin")).to_be_visible(timeout=120_000)
            assert page.locator("#signin-status").inner_text() == "this service needs a token"
            page.fill("#signin-token", tokens["reader"])
            page.click("#signin button")
            sync_api.expect(page.locator("#status")).to_have_text("ready", timeout=120_000)
            assert page.locator("#collection").input_value() == "tiny"
            assert page.evaluate("localStorage.getItem('rag-token')") == tokens["reader"]
            assert page.locator("#signin").is_hidden() and page.locator("#signout").is_visible()
        finally:
            browser.close()
