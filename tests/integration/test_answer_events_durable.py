"""No lost lineage: answers stored by a process killed (kill -9) before its in-memory queue of
Dagster events was written, and by an MCP stdio server whose agent left at once, all become
`served_answers` events: at the next start (`answers_reported`) or by `answer_events_sensor`."""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import dagster as dg
import pytest

from rag_assets.core.lineage import store_answers
from rag_assets.core.store.connections import catalogue_connection
from rag_assets.core.store.lineage import stored_answer_ids, utc_now
from rag_assets.defs.answer_events_sensor import answer_events_sensor
from rag_assets.events.reconcile import report_unreported
from rag_assets.events.served_answers import SERVED_ANSWERS
from tests.conftest import REPO_ROOT, write_corpus
from tests.unit.service_catalogue import answer_record, build_catalogue

pytestmark = pytest.mark.integration

# What the service does where it stores an answer (serving/asking.py): store it in the catalogue,
# then queue its event; then the process dies by SIGKILL before the queue's thread writes it.
STORE_QUEUE_AND_DIE = """
import os, signal, sys, duckdb
from rag_assets.core.lineage import store_answers
from rag_assets.events.served_answers import enqueue_answers
from tests.unit.service_catalogue import answer_record
with duckdb.connect(sys.argv[1]) as con:
    records = [answer_record(con, f"question {i}?") for i in range(int(sys.argv[2]))]
    store_answers(con, records)
enqueue_answers(records)
print(" ".join(r.answer_id for r in records), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(REPO_ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    data = tmp_path / "data"
    build_catalogue(data, write_corpus(tmp_path / "corpus"), with_tokens=False)
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.setenv("RAG_DATA_DIR", str(data))
    return {"home": home, "data": data, "catalogue": data / "catalogue.duckdb"}


def _reported(instance: dg.DagsterInstance) -> set[str]:
    return set(instance.get_materialized_partitions(SERVED_ANSWERS))


def _stored(project: dict[str, Path]) -> set[str]:
    with catalogue_connection(project["catalogue"], read_only=True) as con:
        return set(stored_answer_ids(con))


@pytest.mark.timeout(600)
def test_answers_of_a_process_killed_before_its_flush_are_reported_at_the_next_start(
    project: dict[str, Path],
) -> None:
    died = subprocess.run(
        [sys.executable, "-c", STORE_QUEUE_AND_DIE, str(project["catalogue"]), "5"],
        env={**os.environ},
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=300,
    )
    assert died.returncode == -signal.SIGKILL, died.stderr[-2000:]
    killed = set(died.stdout.split())
    assert len(killed) == 5 and killed <= _stored(project)
    with dg.DagsterInstance.from_config(str(project["home"])) as instance:
        assert not killed & _reported(instance)  # the in-memory queue died with its process
        assert report_unreported(instance, in_flight_s=0) == len(_stored(project))
        assert _reported(instance) == _stored(project)  # every stored answer, the killed ones too
        assert report_unreported(instance, in_flight_s=0) == 0  # reported once


@pytest.mark.timeout(600)
def test_the_sensor_reports_answers_without_an_event_once_they_are_out_of_flight(project: dict[str, Path]) -> None:
    with catalogue_connection(project["catalogue"], read_only=False) as con:
        fresh = answer_record(con, "asked just now?")  # may still be in its process's queue
        old = dataclasses.replace(answer_record(con, "asked a while ago?"), created_at=utc_now() - timedelta(minutes=2))
        store_answers(con, [fresh, old])
    with dg.DagsterInstance.from_config(str(project["home"])) as instance:
        context = dg.build_sensor_context(instance=instance)
        assert answer_events_sensor(context).skip_message == "1 stored answer(s) reported"  # `old` alone
        assert old.answer_id in _reported(instance) and fresh.answer_id not in _reported(instance)
        assert answer_events_sensor(context).skip_message == "every stored answer has its event"
        assert report_unreported(instance, in_flight_s=0) == 2  # at exit: the fresh ones too
        assert _reported(instance) == _stored(project)


# An MCP stdio server as `rag mcp` runs it (answers_reported around the tools), whose ask stores
# and queues an answer as serving/asking.py does, with no model behind it.
MCP_SERVER = """
from rag_assets.core.lineage import store_answers
from rag_assets.core.store.connections import catalogue_connection
from rag_assets.events.served_answers import enqueue_answers
from rag_assets.events.reconcile import answers_reported
from rag_assets.serving.access import OVER_STDIO, TokenBook
from rag_assets.serving.asking import AskResult
from rag_assets.serving.mcp_server import McpAccess, build_mcp
from rag_assets.serving.catalogue_reads import catalogue_path
from rag_assets.serving.query import QueryService
from tests.answer_outcomes import answer_outcome
from tests.unit.service_catalogue import answer_record

class Storing(QueryService):
    def ask(self, question, **_):
        with catalogue_connection(catalogue_path(), read_only=False) as con:
            record = answer_record(con, question)
            store_answers(con, [record])
        enqueue_answers([record])
        return AskResult(record, answer_outcome(question, "80 C", ""), None, "short")

with answers_reported():
    build_mcp(Storing(), McpAccess(TokenBook(tokens_required=False), None, None, OVER_STDIO)).run("stdio")
"""


async def _ask_and_leave(env: dict[str, str], questions: list[str]) -> list[str]:
    """Asks each question over stdio, then closes the session at once (the SDK ends the server)."""
    import json

    from mcp import Client, StdioServerParameters

    server = StdioServerParameters(command=sys.executable, args=["-c", MCP_SERVER], env=env, cwd=str(REPO_ROOT))
    async with Client(server) as session:
        asked = [await session.call_tool("ask", {"question": q, "collection": "tiny"}) for q in questions]
    return [json.loads(r.content[0].text)["answer_id"] for r in asked]


@pytest.mark.timeout(600)
def test_answers_of_an_mcp_agent_that_leaves_at_once_all_become_events(project: dict[str, Path]) -> None:
    import asyncio

    env = {**os.environ, "DAGSTER_HOME": str(project["home"]), "RAG_DATA_DIR": str(project["data"])}
    answered = set(asyncio.run(_ask_and_leave(env, [f"question {i}?" for i in range(4)])))
    assert len(answered) == 4 and answered <= _stored(project)
    with dg.DagsterInstance.from_config(str(project["home"])) as instance:
        report_unreported(instance, in_flight_s=0)  # the next start (or the sensor)
        assert _reported(instance) == _stored(project)
