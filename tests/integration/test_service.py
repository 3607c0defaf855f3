"""`rag serve` for real: a uvicorn process over a tiny materialized project, asked over HTTP and
through the CLI (RAG_SERVICE_URL); then served while a materialization of the same collection
runs, and picking up the index it publishes without a restart."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.integration.served_project import (
    get,
    materialize,
    post,
    project_env,
    running_service,
    start_materialization,
)

KETTLE = "How hot should the water be for green tea?"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, smollm2_checkpoint: Path) -> dict[str, str]:
    env = project_env(tmp_path_factory.mktemp("served"), smollm2_checkpoint)
    materialize(env)
    return env


def _search(url: str, query: str, **params: object) -> tuple[int, dict]:
    return get(f"{url}/search?{urllib.parse.urlencode({'q': query, **params}, doseq=True)}")


def _stream(url: str, body: dict) -> list[tuple[str, dict]]:
    from rag_assets.serving.client import parse_events

    request = urllib.request.Request(
        f"{url}/ask/stream", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=600) as response:
        return list(parse_events(line.decode() for line in response))


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rag_assets.cli", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO_ROOT,
    )


@pytest.mark.timeout(2400)
def test_search_ask_stream_trace_answers_over_http_and_the_cli(project: dict[str, str]) -> None:
    with running_service(project, "--max-asks", "1") as url:
        status, schema = get(f"{url}/openapi.json")
        assert status == 200
        assert {"/search", "/ask", "/ask/stream", "/trace/{answer_id}", "/answers"} <= set(schema["paths"])

        status, found = _search(url, "how hot for green tea", k=2)
        assert status == 200 and found["hits"][0]["doc_id"] == "tiny/kettle.md"
        assert "green tea | 80 C" in found["hits"][0]["text"]
        (pair,) = found["published"]  # which published pair answered
        assert pair["collection"] == "tiny" and pair["tag"].startswith("tiny-") and pair["consistent"]
        status, bm25 = _search(url, "green tea", mode="bm25", k=1)
        assert status == 200 and bm25["hits"][0]["doc_id"] == "tiny/kettle.md"
        status, unknown = _search(url, "tea", collection="../../x")
        assert status == 400 and "unknown collection '../../x'" in unknown["detail"]

        status, asked = post(
            f"{url}/ask", {"question": KETTLE, "strategy": "rag-hybrid", "top_k": 2, "form": "generated"}
        )
        assert status == 200, asked
        row = asked["answer"]
        # the reader's form asked for by name (the default, unmeasured here, is the quote)
        assert row["source"] == "service" and row["strategy"] == "rag-hybrid" and row["answer"]
        assert json.loads(row["knobs"])["router"] is None
        assert asked["citations"][0]["doc_id"] == "tiny/kettle.md" and asked["citations"][0]["n"] == 1
        versions = json.loads(row["versions"])
        assert versions["index"]["tag"] == pair["tag"] and versions["index"]["version"] == pair["version"]
        assert versions["reader_model"] and versions["embedder"] and "tiny/kettle.md" in versions["doc_hashes"]
        assert post(f"{url}/ask", {"question": "   "})[0] == 400

        events = _stream(url, {"question": KETTLE, "strategy": "rdr2", "form": "generated"})  # the reader streams
        kinds = [event for event, _ in events]
        assert kinds[-1] == "answer" and "token" in kinds and "note" in kinds
        streamed = "".join(data["text"] for event, data in events if event == "token").strip()
        final = events[-1][1]["answer"]
        # what was streamed is the stored answer, one string
        assert final["answer"] and streamed == final["answer"]
        assert final["strategy"] == "rdr2-similarity"  # no trained encoder router in this project
        knobs = json.loads(final["knobs"])
        assert knobs["top_k"] == 2 and knobs["expand_iterations"] == 1  # the evaluated rdr2
        assert knobs["evidence_budget_from"] == "rag-hybrid"

        status, trace = get(f"{url}/trace/{row['answer_id']}")
        assert status == 200 and trace["sources"] and not trace["changed"]
        assert all(s["current_text"] == s["recorded_text"] for s in trace["sources"])
        assert get(f"{url}/trace/0123456789ab")[0] == 404
        status, listing = get(f"{url}/answers?source=service")
        assert [a["answer_id"] for a in listing["answers"]] == [final["answer_id"], row["answer_id"]]
        status, doc = get(f"{url}/documents/tiny/tiny/kettle.md")
        assert status == 200 and doc["nodes"][0]["text"] == "Kettle manual"

        # one question in flight (--max-asks 1): the next is refused with the reason, not queued
        started = threading.Event()

        def ask_slowly() -> None:
            request = urllib.request.Request(
                f"{url}/ask/stream",
                data=json.dumps({"question": "What keeps the pond fish alive in winter?"}).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=600) as response:
                for line in response:  # the first event: the question is in flight
                    if line.startswith(b"event:"):
                        started.set()

        worker = threading.Thread(target=ask_slowly)
        worker.start()
        assert started.wait(300)
        status, refused = post(f"{url}/ask", {"question": KETTLE, "strategy": "no-retrieval"})
        worker.join(600)
        assert status == 503 and "overloaded" in refused["detail"]

        # the CLI through the service: same answers, stored as the service's
        service_env = {**project, "RAG_SERVICE_URL": url}
        searched = _cli(service_env, "search", "how hot for green tea", "-k", "1", "--json")
        assert searched.returncode == 0, searched.stderr
        assert json.loads(searched.stdout)[0]["doc_id"] == "tiny/kettle.md"
        cli_ask = _cli(service_env, "ask", KETTLE, "-s", "rag-hybrid", "--json")
        assert cli_ask.returncode == 0, cli_ask.stderr
        assert json.loads(cli_ask.stdout)["source"] == "service"
        bad = _cli(service_env, "search", "tea", "-c", "nosuch")
        assert bad.returncode == 2 and "unknown collection 'nosuch'" in bad.stderr
        listed = _cli(service_env, "answers", "--source", "service", "--json")
        assert json.loads(cli_ask.stdout)["answer_id"] in {a["answer_id"] for a in json.loads(listed.stdout)}
    down = _cli({**project, "RAG_SERVICE_URL": url}, "search", "tea")
    assert down.returncode == 4 and "no service at" in down.stderr


def _niceness(pid: int) -> int:
    """A process's niceness (field 19 of /proc/PID/stat; the name in field 2 may hold spaces)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # it ended meanwhile
        return -100
    return int(stat.rsplit(")", 1)[1].split()[16])


@pytest.mark.timeout(2400)
def test_served_while_the_collection_is_re_indexed(project: dict[str, str]) -> None:
    """A search and an ask answered while a materialization of the same collection runs (no lock
    error, no lost answer), then the index it published is served without a restart."""
    with running_service(project) as url:
        before = _search(url, "green tea")[1]["published"][0]
        kettle = Path(project["RAG_COLLECTIONS"]).parent / "corpus" / "kettle.md"
        kettle.write_text(kettle.read_text() + "\n## Descaling\n\nDescale the kettle monthly with citric acid.\n")
        assert get(f"{url}/health")[1]["model_threads"] == 1  # `rag serve --threads`' default
        run = start_materialization(project)
        served: list[tuple[str, int, str]] = []
        run_niceness: set[int] = set()
        try:
            while run.poll() is None or not served:
                run_niceness.add(_niceness(run.pid))
                status, found = _search(url, "green tea")
                during = run.poll() is None
                served.append(("search", status, "" if status == 200 else found["detail"]))
                status, asked = post(f"{url}/ask", {"question": KETTLE, "strategy": "rag-hybrid"})
                served.append(("ask", status, asked["answer"]["answer_id"] if status == 200 else asked["detail"]))
                if during and run.poll() is None:
                    served.append(("both-during-run", 200, ""))
                time.sleep(0.5)
        finally:
            out, err = run.communicate(timeout=1200)
        assert run.returncode == 0 and "success" in out, out[-2000:] + err[-2000:]
        assert all(status == 200 for _, status, _ in served), served
        assert ("both-during-run", 200, "") in served  # at least one search and one ask while it ran
        # the pipeline yields the CPU (RAG_PIPELINE_NICE, default 10) once it has loaded its definitions
        assert max(run_niceness) == max(10, os.nice(0)), run_niceness
        asked_ids = {detail for kind, _, detail in served if kind == "ask"}
        stored = {a["answer_id"] for a in get(f"{url}/answers?source=service&limit=1000")[1]["answers"]}
        assert asked_ids <= stored  # no answer lost

        after = _search(url, "citric acid descale", mode="bm25", k=1)[1]
        assert after["published"][0]["version"] > before["version"]
        assert after["published"][0]["tag"] != before["tag"]
        assert "citric acid" in after["hits"][0]["text"]
