"""A real, throwaway PostgreSQL cluster for the shared-store tests.

``initdb`` and ``pg_ctl`` (Debian's ``postgresql``) make and start a cluster in a temporary
folder on a free loopback port, once per test session; each test gets a database of its own.
When PostgreSQL or psycopg is missing the tests are skipped with the reason, unless
``SKILLRT_REQUIRE_POSTGRES=1`` (CI), where they fail instead. As root (CI), the cluster runs as
the ``postgres`` user: PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REQUIRE_POSTGRES = os.environ.get("SKILLRT_REQUIRE_POSTGRES") == "1"
"""Read at import: the shared conftest clears SKILLRT_* variables before each test."""


def _unavailable(reason: str) -> None:
    if REQUIRE_POSTGRES:
        pytest.fail(reason + " (SKILLRT_REQUIRE_POSTGRES=1)")
    pytest.skip(reason)


def _bindir() -> Path | None:
    found = shutil.which("pg_ctl")
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for folder in ([str(Path(found).resolve().parent)] if found else []) + candidates:
        if (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PgCluster:
    host: str
    port: int
    user: str

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@{self.host}:{self.port}/{database}"

    def create_database(self) -> str:
        return database_beside(self.url())


def database_beside(url: str) -> str:
    """A new empty database on the server of ``url``; its URL."""
    import psycopg

    name = f"t_{secrets.token_hex(6)}"
    with psycopg.connect(url, autocommit=True) as conn:
        # Copying the template's files is twice as quick as logging them (15's default), and
        # keeps the WAL of a session's many databases small.
        fast = conn.info.server_version >= 150000
        conn.execute(f"CREATE DATABASE {name}" + (" STRATEGY = FILE_COPY" if fast else ""))
    return url.rsplit("/", 1)[0] + "/" + name


def drop_database(url: str) -> None:
    """Drop the database of ``url``, closing any session still on it (a test's leftovers)."""
    import psycopg

    server, name = url.rsplit("/", 1)
    with psycopg.connect(server + "/postgres", autocommit=True) as conn:
        force = " WITH (FORCE)" if conn.info.server_version >= 130000 else ""
        conn.execute(f"DROP DATABASE IF EXISTS {name}{force}")


class ClusterProcess:
    """A cluster made with ``initdb`` in a temporary folder, which a test may stop and start
    again (an outage)."""

    def __init__(self) -> None:
        try:
            import psycopg  # noqa: F401
            import psycopg_pool  # noqa: F401
        except ImportError:
            _unavailable("psycopg is not installed: pip install 'skillrt[postgres]'")
        bindir = _bindir()
        if bindir is None:
            _unavailable("PostgreSQL (initdb, pg_ctl) is not installed: apt-get install postgresql")
            raise AssertionError("unreachable")
        self.bindir = bindir
        as_root = os.geteuid() == 0
        self.run_as: list[str] = []
        if as_root:
            try:
                pw = pwd.getpwnam("postgres")
            except KeyError:
                _unavailable("running as root and there is no postgres user to run the server")
                raise
            self.run_as = ["runuser", "-u", "postgres", "--"]
        self.base = Path(tempfile.mkdtemp(prefix="skillrt-pg-"))
        self.data, sockets = self.base / "data", self.base / "sock"
        sockets.mkdir()
        if as_root:
            os.chown(self.base, pw.pw_uid, pw.pw_gid)
            os.chown(sockets, pw.pw_uid, pw.pw_gid)
        self.user = "skillrt"
        self.port = _free_port()
        subprocess.run(
            [*self.run_as, str(bindir / "initdb"), "-D", str(self.data), "-U", self.user,
             "--auth=trust", "-E", "UTF8", "--no-sync"],
            check=True, capture_output=True,
        )  # fmt: skip
        self.options = (
            f"-p {self.port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c full_page_writes=off -c max_connections=200"
        )
        self.start()

    @property
    def cluster(self) -> PgCluster:
        return PgCluster("127.0.0.1", self.port, self.user)

    def start(self) -> None:
        subprocess.run(
            [*self.run_as, str(self.bindir / "pg_ctl"), "-D", str(self.data), "-o",
             self.options, "-l", str(self.base / "server.log"), "-w", "-t", "60", "start"],
            check=True, capture_output=True,
        )  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        subprocess.run(
            [*self.run_as, str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", mode,
             "-w", "stop"],
            capture_output=True,
        )  # fmt: skip

    def remove(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.base, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    server = ClusterProcess()
    try:
        yield server.cluster
    finally:
        server.remove()


@pytest.fixture
def pg_own_cluster() -> Iterator[ClusterProcess]:
    """A cluster of the test's own, which it may stop and start (an outage)."""
    server = ClusterProcess()
    try:
        yield server
    finally:
        server.remove()


@pytest.fixture
def pg_url(pg_cluster: PgCluster) -> Iterator[str]:
    """A fresh, empty database on the session's cluster, dropped after the test."""
    url = pg_cluster.create_database()
    yield url
    drop_database(url)
