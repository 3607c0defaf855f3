"""No lost lineage under disconnects and a killed service: N asks to a real `rag serve` and to real
`rag mcp` (stdio) servers over a copy of a materialized catalogue, each client leaving at a random
moment (HTTP `/ask` and `/ask/stream`, MCP over HTTP, MCP over stdio), the service killed with
SIGKILL midway (asks in flight) and started again, then stopped. Every answer stored in the
catalogue must have its `served_answers` Dagster event (written by the process that answered, at
its next start, or at exit: rag_assets/events/reconcile.py), and every answer a client received
must be stored. Printed: asks per transport, answers received, stored, reported, lost.

    RAG_DATA_DIR=dagster_home/data .venv/bin/python -m benchmarks.lineage_drill -c python-reference --asks 200
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import dagster as dg

from benchmarks.records import add_record_option, keep_figures
from rag_assets.core.settings import data_dir
from rag_assets.core.store.connections import catalogue_connection
from rag_assets.core.store.lineage import stored_answer_ids
from rag_assets.core.store.question_table import load_question_rows
from rag_assets.events.served_answers import SERVED_ANSWERS
from tests.integration.served_project import free_port, get

REPO = Path(__file__).resolve().parents[1]
TRANSPORTS = ("http", "http-stream", "mcp-http", "stdio")
STDIO_ASKS = 5  # asks per `rag mcp` session; the client leaves during one of them


def deployment(root: Path, name: str, source: Path | None, *, linked: bool = False) -> dict[str, str]:
    """A data folder under `root` (a copy of `source`; `linked`: its catalogue copied and its store
    folders linked, read-only; None: empty) and a fresh Dagster home, as a `rag` process's environment."""
    data, home = root / f"{name}-data", root / f"{name}-home"
    if source is None:
        data.mkdir()
    elif linked:
        data.mkdir()
        shutil.copy(source / "catalogue.duckdb", data / "catalogue.duckdb")
        for entry in (e for e in source.iterdir() if e.is_dir()):
            (data / entry.name).symlink_to(entry.resolve(), target_is_directory=True)
    else:
        shutil.copytree(source, data, symlinks=False)
    home.mkdir()
    shutil.copy(REPO / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    return {**os.environ, "RAG_DATA_DIR": str(data), "DAGSTER_HOME": str(home), "RAG_SERVICE_URL": ""}


def start_service(env: dict[str, str], port: int, log: Path) -> subprocess.Popen:
    with log.open("a") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "rag_assets.cli", "serve", "--port", str(port), "--preload"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=REPO,
        )
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit("rag serve ended at start:\n" + log.read_text()[-3000:])
        try:
            if get(f"http://127.0.0.1:{port}/health", timeout=5)[0] == 200:
                return server
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(1)
    raise SystemExit("rag serve did not start in 600 s:\n" + log.read_text()[-3000:])


def ask_http(url: str, question: str, collection: str, leave_after: float, stream: bool) -> str | None:
    """The answer id the client received, None when it left first (its socket closed)."""
    body = json.dumps({"question": question, "collection": collection}).encode()
    path = "/ask/stream" if stream else "/ask"
    request = urllib.request.Request(f"{url}{path}", body, {"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=leave_after) as response:
            text = response.read().decode()
    except (TimeoutError, urllib.error.URLError, ConnectionError):
        return None
    if stream:
        done = [line for line in text.splitlines() if line.startswith("data:") and '"answer_id"' in line]
        return json.loads(done[-1][5:])["answer"]["answer_id"] if done else None
    return json.loads(text)["answer"]["answer_id"]


async def _ask_mcp_http(url: str, question: str, collection: str) -> str:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with Client(streamable_http_client(f"{url}/mcp/")) as session:
        result = await session.call_tool("ask", {"question": question, "collection": collection})
    return json.loads(result.content[0].text)["answer_id"]


def ask_mcp_http(url: str, question: str, collection: str, leave_after: float) -> str | None:
    try:
        return asyncio.run(asyncio.wait_for(_ask_mcp_http(url, question, collection), leave_after))
    except (TimeoutError, ConnectionError, OSError):
        return None


async def _stdio_session(env: dict[str, str], questions: list[str], collection: str, leave_after: float) -> list[str]:
    from mcp import Client, StdioServerParameters

    server = StdioServerParameters(command=sys.executable, args=["-m", "rag_assets.cli", "mcp"], env=env, cwd=str(REPO))
    received: list[str] = []

    async def asking() -> None:
        async with Client(server) as session:
            for question in questions:
                result = await session.call_tool("ask", {"question": question, "collection": collection})
                received.append(json.loads(result.content[0].text)["answer_id"])

    with contextlib.suppress(TimeoutError):  # the agent leaves: its session closed, the server ended
        await asyncio.wait_for(asking(), leave_after)
    return received


def stdio_session(env: dict[str, str], questions: list[str], collection: str, leave_after: float) -> list[str]:
    return asyncio.run(_stdio_session(env, questions, collection, leave_after))


def lineage(env: dict[str, str]) -> tuple[set[str], set[str]]:
    """The answer ids stored in the catalogue, and those with a `served_answers` event."""
    with catalogue_connection(Path(env["RAG_DATA_DIR"]) / "catalogue.duckdb", read_only=True) as con:
        stored = set(stored_answer_ids(con))
    with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        reported = set(instance.get_materialized_partitions(SERVED_ANSWERS))
    return stored, reported


class Drill:
    """The asks of one run: a plan of (transport, its questions, when the client leaves), the service
    killed at the middle ask, what was sent and what the clients received."""

    def __init__(self, env: dict[str, str], collection: str, texts: list[str], args: argparse.Namespace) -> None:
        self.env, self.collection, self.texts = env, collection, texts
        self.rng = random.Random(args.seed)
        self.plan: list[tuple[str, list[str], float]] = []  # (transport, its questions, when the client leaves)
        planned = 0
        while planned < args.asks:
            transport = self.rng.choice(TRANSPORTS)
            count = min(STDIO_ASKS if transport == "stdio" else 1, args.asks - planned)
            self.plan.append((transport, self.rng.sample(texts, count), self.rng.uniform(0.05, args.leave_within)))
            planned += count
        self.kill_at = len(self.plan) // 2
        self.sent = dict.fromkeys(TRANSPORTS, 0)
        self.received: list[str] = []
        self.failed: dict[str, int] = {}  # asks that ended in an error at the client, by its type
        self.unreported_at_kill = 0
        self.lock = threading.Lock()
        self.port, self.log = free_port(), Path(env["RAG_DATA_DIR"]).parent / "serve.log"
        self.url = f"http://127.0.0.1:{self.port}"
        self.service = start_service(env, self.port, self.log)

    def restart(self, i: int) -> None:
        """An answer received, then at once SIGKILL (its event still queued: the queue writes within
        2 s), with other asks in flight; the answers stored without an event counted; a fresh start."""
        answer = ask_http(self.url, self.texts[0], self.collection, 600, stream=False)
        self.service.send_signal(signal.SIGKILL)
        self.service.wait()
        with self.lock:
            self.sent["http"] += 1
            self.received.extend([answer] if answer else [])
        stored, reported = lineage(self.env)
        self.unreported_at_kill = len(stored - reported)
        print(f"ask {i}: rag serve killed with SIGKILL, {self.unreported_at_kill} stored answers without an event")
        self.service = start_service(self.env, self.port, self.log)

    def one(self, i: int) -> None:
        transport, batch, leave_after = self.plan[i]
        if i == self.kill_at:
            self.restart(i)
        try:
            got = self.ask(transport, batch, leave_after)
        except Exception as err:  # the service killed under the client: nothing received
            got = []
            with self.lock:
                self.failed[type(err).__name__] = self.failed.get(type(err).__name__, 0) + 1
        with self.lock:
            self.sent[transport] += len(batch)
            self.received.extend(a for a in got if a)

    def ask(self, transport: str, batch: list[str], leave_after: float) -> list[str | None]:
        if transport == "stdio":
            return stdio_session(self.env, batch, self.collection, leave_after * STDIO_ASKS * 4)
        if transport == "mcp-http":
            return [ask_mcp_http(self.url, batch[0], self.collection, leave_after)]
        return [ask_http(self.url, batch[0], self.collection, leave_after, transport == "http-stream")]

    def stop(self) -> None:
        """A clean stop: the service's queue written at exit."""
        self.service.send_signal(signal.SIGTERM)
        self.service.wait(timeout=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-c", "--collection", required=True)
    parser.add_argument(
        "--asks", type=int, default=200, help="asks in all; a stdio session asks up to 5 (default: 200)"
    )
    parser.add_argument("--clients", type=int, default=3, help="clients asking at once (default: 3)")
    parser.add_argument("--leave-within", type=float, default=4.0, help="a client leaves within this many seconds")
    parser.add_argument("--seed", type=int, default=0)
    add_record_option(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = deployment(Path(tmp), "drill", data_dir(), linked=True)
        with catalogue_connection(Path(env["RAG_DATA_DIR"]) / "catalogue.duckdb", read_only=True) as con:
            texts = [q.query for q in load_question_rows(con, args.collection)]
            before = set(stored_answer_ids(con))
        if not texts:
            raise SystemExit(f"{args.collection}: no questions in the catalogue of {data_dir()}")
        drill = Drill(env, args.collection, texts, args)
        started = time.perf_counter()
        try:
            with ThreadPoolExecutor(args.clients) as pool:
                list(pool.map(drill.one, range(len(drill.plan))))
        finally:
            drill.stop()
        seconds = time.perf_counter() - started
        stored, reported = lineage(env)
    stored -= before
    lost, not_stored, sent = stored - reported, set(drill.received) - stored, sum(drill.sent.values())
    per = ", ".join(f"{k} {v}" for k, v in drill.sent.items())
    print(f"{args.collection}: {sent} asks in {seconds:.0f} s ({per})")
    print(
        f"answers received by their clients: {len(drill.received)}; stored: {len(stored)}; with their event: {len(stored & reported)}"
    )
    print(f"asks ended by an error at the client (the service killed under them): {drill.failed or 'none'}")
    print(f"stored answers without their event right after the SIGKILL: {drill.unreported_at_kill}")
    print(f"lost: {len(lost)} stored without an event, {len(not_stored)} received but not stored")
    if args.record:
        name = args.collection
        keep_figures(
            "benchmarks.lineage_drill",
            [
                (f"{name}: asks with clients leaving at random and a SIGKILL", sent),
                (f"{name}: answers received by their clients", len(drill.received)),
                (f"{name}: answers stored", len(stored)),
                (f"{name}: stored answers without their event right after the SIGKILL", drill.unreported_at_kill),
                (f"{name}: stored answers without their Dagster event", len(lost)),
                (f"{name}: answers received but not stored", len(not_stored)),
            ],
        )


if __name__ == "__main__":
    main()
