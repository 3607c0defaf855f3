"""A tiny materialized project (sources -> trees -> passages -> published index, the `reindex`
job, in a subprocess because the code location resolves its data folder when imported) and a
real `rag serve` over it on a free port: what the CLI, service and browser tests share."""

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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import REPO_ROOT, write_corpus

STARTUP_LIMIT_S = 600  # the service loads the embedder and the reader first: minutes on a busy machine

MATERIALIZE = """
import dagster as dg
from rag_assets.definitions import defs
from rag_assets.defs.partitions import register_collections
with dg.DagsterInstance.get() as instance:
    register_collections(instance, ["tiny"])
    result = defs.resolve_job_def("reindex").execute_in_process(partition_key="tiny", instance=instance)
    print("success" if result.success else "failed")
"""


def project_env(root: Path, checkpoint: Path, corpus_writer: Callable[[Path], Path] = write_corpus) -> dict[str, str]:
    """A DAGSTER_HOME, collections file and data folder under `root` over the conftest corpus (or
    the one `corpus_writer` writes), with the session's converted SmolLM2 where the LLM resource
    looks for it."""
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO_ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    corpus = corpus_writer(root / "corpus")
    collections = root / "collections.yaml"
    collections.write_text(f"collections:\n  - name: tiny\n    path: {corpus}\n")
    data = root / "data"
    (data / "models").mkdir(parents=True, exist_ok=True)
    link = data / "models" / checkpoint.name
    if not link.exists():
        link.symlink_to(checkpoint, target_is_directory=True)
    return {
        "DAGSTER_HOME": str(home),
        "RAG_COLLECTIONS": str(collections),
        "RAG_DATA_DIR": str(data),
        "RAG_SERVICE_URL": "",
    }


def cli_env(root: Path, corpus: Path, collections: tuple[str, ...] = ("tiny",)) -> dict[str, str]:
    """A DAGSTER_HOME, collections file (each collection over `corpus`) and data folder under
    `root`, as the environment of `rag` commands run in a subprocess."""
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO_ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    listed = root / "collections.yaml"
    listed.write_text("collections:\n" + "".join(f"  - name: {n}\n    path: {corpus}\n" for n in collections))
    return {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "RAG_COLLECTIONS": str(listed),
        "RAG_DATA_DIR": str(root / "data"),
        "RAG_SERVICE_URL": "",
    }


def stop(process: subprocess.Popen) -> None:
    """Terminate a server process; kill it if it has not ended 30 s later."""
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def start_materialization(env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", MATERIALIZE],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
    )


def materialize(env: dict[str, str]) -> None:
    run = start_materialization(env)
    out, err = run.communicate(timeout=1200)
    assert run.returncode == 0 and "success" in out, out[-3000:] + err[-3000:]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, timeout: float = 300) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


def post(url: str, body: dict, timeout: float = 600) -> tuple[int, dict]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


@contextmanager
def running_service(env: dict[str, str], *extra: str) -> Iterator[str]:
    """`rag serve` on a free port (models preloaded); yields its base URL, stops it after."""
    port = free_port()
    log = Path(env["RAG_DATA_DIR"]).parent / f"serve-{port}.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "rag_assets.cli", "serve", "--port", str(port), *extra],
            env={**os.environ, **env},
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=REPO_ROOT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_LIMIT_S
        while True:
            assert server.poll() is None, log.read_text()[-3000:]
            try:
                if get(f"{url}/health", timeout=5)[0] == 200:
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            assert time.monotonic() < deadline, "rag serve did not start:\n" + log.read_text()[-3000:]
            time.sleep(1)
        yield url
    finally:
        stop(server)
