"""The settings module reads every environment variable, and the one catalogue connection path
waits for a busy lock with capped, jittered backoff and names the holder when it gives up."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from rag_assets.core import settings
from rag_assets.core.errors import CatalogueBusy, ConfigError
from rag_assets.core.store import connections

LOCKED = (
    'IO Error: Could not set lock on file "{path}": Conflicting lock is held in '
    "/usr/bin/python3.11 (PID 4242) by user x. See also https://duckdb.org/docs/connect/concurrency"
)


def test_data_paths_derive_from_the_data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("RAG_DATA_DIR", raising=False)
    monkeypatch.delenv("RAG_LANCEDB_URI", raising=False)
    assert not settings.data_dir_is_set()
    assert settings.data_dir() == tmp_path / "home" / "data"
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))
    assert settings.data_dir_is_set()
    assert settings.catalogue_file() == tmp_path / "data" / "catalogue.duckdb"
    assert settings.lancedb_uri() == str(tmp_path / "data" / "lancedb")
    assert settings.rerankers_dir() == tmp_path / "data" / "rerankers"
    assert settings.reports_root() == tmp_path / "data" / "reports"
    monkeypatch.setenv("RAG_LANCEDB_URI", "s3://bucket/lancedb")
    assert settings.lancedb_uri() == "s3://bucket/lancedb"


def test_defaults_and_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("RAG_LOCK_TIMEOUT", "RAG_EXECUTOR", "RAG_CELERY_BACKEND", "RAG_SERVICE_URL", "RAG_RUN_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    assert settings.lock_timeout_s() == 120.0
    assert settings.executor_kind() == "in_process"
    assert settings.service_url() is None and settings.run_config_file() is None
    monkeypatch.setenv("RAG_LOCK_TIMEOUT", "7.5")
    monkeypatch.setenv("RAG_EXECUTOR", " Celery ")
    monkeypatch.setenv("RAG_CELERY_BROKER", "redis://h/0")
    monkeypatch.setenv("RAG_SERVICE_URL", "http://127.0.0.1:8765/ ")
    assert settings.lock_timeout_s() == 7.5
    assert settings.executor_kind() == "celery"
    assert settings.celery_backend() == "redis://h/0"  # the broker, unless set
    assert settings.service_url() == "http://127.0.0.1:8765"
    monkeypatch.setenv("RAG_LOCK_TIMEOUT", "soon")
    with pytest.raises(ConfigError, match="RAG_LOCK_TIMEOUT='soon'"):
        settings.lock_timeout_s()


def _locked_for(attempts: int, monkeypatch: pytest.MonkeyPatch, path: Path) -> list[float]:
    """duckdb.connect refuses `attempts` times with DuckDB's lock message; returns the sleeps."""
    real_connect = duckdb.connect
    calls = {"n": 0}
    sleeps: list[float] = []

    def connect(database: str, **kwargs):
        calls["n"] += 1
        if calls["n"] <= attempts:
            raise duckdb.IOException(LOCKED.format(path=database))
        return real_connect(database, **kwargs)

    monkeypatch.setattr(connections.duckdb, "connect", connect)
    monkeypatch.setattr(connections.time, "sleep", sleeps.append)
    return sleeps


def test_the_wait_backs_off_and_tells_who_holds_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "catalogue.duckdb"
    sleeps = _locked_for(8, monkeypatch, db)
    told: list[str] = []
    with connections.catalogue_connection(db, read_only=False, timeout_s=60, on_wait=told.append) as con:
        assert con.execute("SELECT 1").fetchone() == (1,)
    assert len(sleeps) == 8
    assert all(0 < s <= connections.MAX_WAIT_S for s in sleeps)
    assert sleeps[-1] > sleeps[0] * 4  # exponential, not a fixed step
    assert len(told) == 1 and "in use by process 4242 (python3.11)" in told[0]


def test_past_the_timeout_one_error_names_the_holder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "catalogue.duckdb"
    _locked_for(10**9, monkeypatch, db)
    with (
        pytest.raises(CatalogueBusy, match=r"in use by process 4242 \(python3.11\) after 0 s.*RAG_LOCK_TIMEOUT"),
        connections.catalogue_connection(db, read_only=False, timeout_s=0),
    ):
        pass


def test_the_catalogue_resource_goes_through_the_one_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dagster_duckdb import DuckDBResource

    from resources.catalogue import CatalogueResource

    db = tmp_path / "catalogue.duckdb"
    _locked_for(10**9, monkeypatch, db)
    resource = CatalogueResource(database=str(db))
    assert isinstance(resource, DuckDBResource) and resource.lock_timeout_s == 900.0
    with (
        pytest.raises(CatalogueBusy, match="lock_timeout_s"),
        CatalogueResource(database=str(db), lock_timeout_s=0).get_connection(),
    ):
        pass
    assert connections.is_lock_conflict(duckdb.IOException(LOCKED.format(path=db)))
    assert not connections.is_lock_conflict(duckdb.IOException("IO Error: not a valid DuckDB database file"))
