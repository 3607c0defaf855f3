"""Local Redis and PostgreSQL for the cluster profile: started on 127.0.0.1, data under one folder.

Both are the Debian packages (`redis-server`, `postgresql`); `cluster/install-packages.sh`
installs them when missing. PostgreSQL refuses to run as root, so as root its tools run as the
`postgres` user (`runuser`), with the data folder owned by that user.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path

STATE_FILE = "services.json"
PG_DATABASE = "dagster"
PG_USER = "postgres"


class ServiceError(RuntimeError):
    """A service could not be found, started or reached; the message says which and why."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, what: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise ServiceError(f"{what} did not accept connections on 127.0.0.1:{port} within {timeout_s:.0f} s")


def redis_binary() -> str | None:
    return shutil.which("redis-server")


def postgres_bindir() -> Path | None:
    """The folder holding initdb/pg_ctl/postgres: on PATH, else Debian's /usr/lib/postgresql/<v>/bin."""
    initdb = shutil.which("initdb")
    if initdb:
        return Path(os.path.realpath(initdb)).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(versions[-1]).parent if versions else None


def missing_binaries() -> list[str]:
    missing = []
    if redis_binary() is None:
        missing.append("redis-server (Debian package redis-server)")
    if postgres_bindir() is None:
        missing.append("initdb/pg_ctl (Debian package postgresql)")
    return missing


def _as_postgres(cmd: list[str]) -> list[str]:
    """PostgreSQL will not run as root: as root, run its tools as the `postgres` user."""
    if os.geteuid() != 0:
        return cmd
    runuser = shutil.which("runuser")
    if runuser is None:
        raise ServiceError("running as root and `runuser` is missing: cannot start PostgreSQL as user postgres")
    return [runuser, "-u", PG_USER, "--", *cmd]


def _chown_to_postgres(path: Path) -> None:
    if os.geteuid() != 0:
        return
    import pwd

    try:
        entry = pwd.getpwnam(PG_USER)
    except KeyError:
        raise ServiceError(
            f"running as root but there is no {PG_USER!r} user (install the postgresql package)"
        ) from None
    os.chown(path, entry.pw_uid, entry.pw_gid)


@dataclass(slots=True)
class Services:
    """What runs, where: written to <state>/services.json so `down` can stop exactly these."""

    state_dir: str
    redis_port: int
    redis_pid: int
    pg_port: int
    pg_data: str

    @property
    def broker_url(self) -> str:
        return f"redis://127.0.0.1:{self.redis_port}/0"

    @property
    def backend_url(self) -> str:
        return f"redis://127.0.0.1:{self.redis_port}/1"

    @property
    def postgres_url(self) -> str:
        # the psycopg2 driver named: SQLAlchemy 2.1 would pick psycopg (3), which the extra does not install
        return f"postgresql+psycopg2://{PG_USER}@127.0.0.1:{self.pg_port}/{PG_DATABASE}"

    def save(self) -> None:
        Path(self.state_dir, STATE_FILE).write_text(json.dumps(asdict(self), indent=2))

    @classmethod
    def load(cls, state_dir: Path) -> Services | None:
        path = state_dir / STATE_FILE
        return cls(**json.loads(path.read_text())) if path.is_file() else None


def _pg_data_dir(state_dir: Path) -> Path:
    """PostgreSQL's folder must be reachable by the postgres user: as root the state folder may sit
    under a private folder (pytest's tmp_path is 0700), so the data then goes to its own /tmp folder."""
    if os.geteuid() != 0:
        return state_dir / "postgres"
    import tempfile

    return Path(tempfile.mkdtemp(prefix="rag-cluster-pg-"))


def start_redis(state_dir: Path, port: int) -> int:
    binary = redis_binary()
    if binary is None:
        raise ServiceError(
            "redis-server is not installed (run cluster/install-packages.sh or apt-get install redis-server)"
        )
    folder = state_dir / "redis"
    folder.mkdir(parents=True, exist_ok=True)
    log = open(folder / "redis.log", "ab")  # noqa: SIM115 - the server keeps writing after we return
    process = subprocess.Popen(
        [binary, "--bind", "127.0.0.1", "--port", str(port), "--dir", str(folder), "--save", "", "--appendonly", "no"],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    _wait_for_port(port, "redis-server")
    return process.pid


def start_postgres(state_dir: Path, port: int) -> Path:
    bindir = postgres_bindir()
    if bindir is None:
        raise ServiceError(
            "PostgreSQL is not installed (run cluster/install-packages.sh or apt-get install postgresql)"
        )
    data = _pg_data_dir(state_dir)
    data.mkdir(parents=True, exist_ok=True)
    _chown_to_postgres(data)
    os.chmod(data, 0o700)
    if not (data / "PG_VERSION").exists():
        # trust on 127.0.0.1 only: a throw-away instance bound to the loopback interface
        init = subprocess.run(
            _as_postgres([str(bindir / "initdb"), "-D", str(data), "-U", PG_USER, "--auth=trust", "-E", "UTF8"]),
            capture_output=True,
            text=True,
        )
        if init.returncode != 0:
            raise ServiceError(f"initdb failed in {data}: {init.stderr.strip() or init.stdout.strip()}")
    options = f"-p {port} -k {data} -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off"
    start = subprocess.run(
        _as_postgres(
            [str(bindir / "pg_ctl"), "-D", str(data), "-l", str(data / "server.log"), "-o", options, "-w", "start"]
        ),
        capture_output=True,
        text=True,
    )
    if start.returncode != 0:
        log_tail = (data / "server.log").read_text(errors="replace")[-2000:] if (data / "server.log").exists() else ""
        raise ServiceError(f"pg_ctl start failed: {start.stderr.strip() or start.stdout.strip()}\n{log_tail}")
    _wait_for_port(port, "PostgreSQL")
    created = subprocess.run(
        _as_postgres([str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", PG_USER, PG_DATABASE]),
        capture_output=True,
        text=True,
    )
    if created.returncode != 0 and "already exists" not in created.stderr:
        raise ServiceError(f"createdb {PG_DATABASE} failed: {created.stderr.strip()}")
    return data


def up(state_dir: Path, *, redis_port: int | None = None, pg_port: int | None = None) -> Services:
    """Start both services (or return the ones this state folder already runs)."""
    state_dir.mkdir(parents=True, exist_ok=True)
    running = Services.load(state_dir)
    if running is not None and _alive(running.redis_pid):
        return running
    missing = missing_binaries()
    if missing:
        raise ServiceError("missing: " + "; ".join(missing) + " (run cluster/install-packages.sh)")
    redis_port = redis_port or free_port()
    pg_port = pg_port or free_port()
    redis_pid = start_redis(state_dir, redis_port)
    try:
        pg_data = start_postgres(state_dir, pg_port)
    except BaseException:
        _stop_pid(redis_pid)
        raise
    services = Services(str(state_dir), redis_port, redis_pid, pg_port, str(pg_data))
    services.save()
    return services


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _stop_pid(pid: int, timeout_s: float = 20.0) -> None:
    if not _alive(pid):
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG) != (0, 0):
                return
        except ChildProcessError:  # not our child (started by an earlier `up`): poll instead
            if not _alive(pid):
                return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)


def down(state_dir: Path) -> bool:
    """Stop the services this state folder started; False when none ran."""
    services = Services.load(state_dir)
    if services is None:
        return False
    bindir = postgres_bindir()
    pg_data = Path(services.pg_data)
    if bindir is not None and (pg_data / "postmaster.pid").exists():
        subprocess.run(
            _as_postgres([str(bindir / "pg_ctl"), "-D", str(pg_data), "-m", "fast", "-w", "stop"]),
            capture_output=True,
            text=True,
        )
    _stop_pid(services.redis_pid)
    if pg_data.parent == Path(os.environ.get("TMPDIR", "/tmp")) and pg_data.name.startswith("rag-cluster-pg-"):
        shutil.rmtree(pg_data, ignore_errors=True)
    Path(state_dir, STATE_FILE).unlink(missing_ok=True)
    return True
