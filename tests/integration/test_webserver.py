"""The Dagster UI for real: `dagster-webserver` on 127.0.0.1 over a tiny materialized project,
asked through its GraphQL API for the assets, their groups, their checks and the metadata of the
last materialization."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

STARTUP_LIMIT_S = 900  # loading the code location imports torch and friends: minutes on a busy machine

ASSETS_QUERY = """
{
  assetNodes {
    assetKey { path }
    groupName
    isPartitioned
    metadataEntries { label }
    assetChecksOrError { ... on AssetChecks { checks { name } } }
    assetMaterializations(limit: 1) {
      partition
      metadataEntries {
        label
        ... on IntMetadataEntry { intValue }
        ... on MarkdownMetadataEntry { mdStr }
      }
    }
  }
}
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def graphql(port: int, query: str) -> dict:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=json.dumps({"query": query}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        body = json.loads(response.read())
    assert "errors" not in body, body["errors"]
    return body["data"]


def wait_for_code_location(port: int, server: subprocess.Popen, limit_s: float = STARTUP_LIMIT_S) -> None:
    """Until the webserver answers and has loaded the code location (or has died)."""
    query = "{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus } } } }"
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"dagster-webserver exited with {server.returncode}")
        try:
            entries = graphql(port, query)["workspaceOrError"]["locationEntries"]
            if entries and all(e["loadStatus"] == "LOADED" for e in entries):
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(2)
    raise TimeoutError(f"the code location did not load within {limit_s:.0f} s")


@contextmanager
def running_webserver(env: dict[str, str], log: Path | None = None) -> Iterator[int]:
    """`dagster-webserver` over the project's workspace with `env`, on a free port, once it has
    loaded the code location; yields the port, stops the server after (its output to `log`)."""
    port = _free_port()
    webserver = Path(sys.executable).with_name("dagster-webserver")
    out = log.open("w") if log is not None else subprocess.DEVNULL
    server = subprocess.Popen(
        [str(webserver), "-h", "127.0.0.1", "-p", str(port), "-w", str(REPO_ROOT / "workspace.yaml")],
        cwd=REPO_ROOT,
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for_code_location(port, server)
        yield port
    finally:
        server.terminate()
        server.wait(timeout=60)
        if log is not None:
            out.close()


@pytest.fixture
def materialized_home(tmp_path: Path, corpus_dir: Path) -> dict[str, str]:
    """A DAGSTER_HOME where `rag index` materialized the tiny collection (sources -> index)."""
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(REPO_ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    collections = tmp_path / "collections.yaml"
    collections.write_text(f"collections:\n  - name: tiny\n    path: {corpus_dir}\n")
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "RAG_COLLECTIONS": str(collections),
        "RAG_DATA_DIR": str(tmp_path / "data"),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
    }
    index = subprocess.run(
        [sys.executable, "-m", "rag_assets.cli", "index"], env=env, capture_output=True, text=True, timeout=900
    )
    assert index.returncode == 0, index.stdout[-3000:] + index.stderr[-3000:]
    return env


def test_the_webserver_shows_assets_groups_checks_and_metadata(materialized_home: dict[str, str]) -> None:
    with running_webserver(materialized_home) as port:
        nodes = {"/".join(n["assetKey"]["path"]): n for n in graphql(port, ASSETS_QUERY)["assetNodes"]}

    # every stage and side table, in its group
    groups = {name: node["groupName"] for name, node in nodes.items()}
    assert groups["source_documents"] == "corpus" and groups["questions"] == "corpus"
    assert groups["document_trees"] == "structure" and groups["document_texts"] == "structure"
    assert groups["rejected_documents"] == "structure" and groups["synthetic_questions"] == "structure"
    assert groups["passage_index"] == "index" and groups["router_adapter"] == "routing"
    assert groups["evaluation_report"] == "evaluation"
    # every stage is per collection; only the namespace router spans all of them
    assert all(node["isPartitioned"] for name, node in nodes.items() if name != "namespace_router")
    assert not nodes["namespace_router"]["isPartitioned"]

    # the checks beside the assets they guard
    def checks(name: str) -> set[str]:
        return {c["name"] for c in nodes[name]["assetChecksOrError"]["checks"]}

    assert {"document_trees_are_valid", "every_document_accounted_for"} <= checks("document_trees")
    assert {"index_matches_catalogue", "index_vectors_and_fts"} <= checks("passage_index")
    assert "evaluation_summary_is_complete" in checks("evaluation_report")

    # definition metadata: the catalogue table and its columns
    assert {"dagster/table_name", "dagster/column_schema"} <= {m["label"] for m in nodes["passages"]["metadataEntries"]}

    # the last materialization of the tiny partition, with its metadata
    [trees] = nodes["document_trees"]["assetMaterializations"]
    meta = {m["label"]: m for m in trees["metadataEntries"]}
    assert trees["partition"] == "tiny"
    assert meta["dagster/partition_row_count"]["intValue"] > 0 and meta["documents"]["intValue"] == 6
    assert "```" in meta["sample_tree"]["mdStr"]
    [texts] = nodes["document_texts"]["assetMaterializations"]  # the side table's own materialization
    assert {m["label"]: m for m in texts["metadataEntries"]}["dagster/partition_row_count"]["intValue"] == 6
    assert nodes["evaluation_report"]["assetMaterializations"] == []  # `rag index` stops at the index
