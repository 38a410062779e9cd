"""The two task stores the checkpoint and resume tests run on: the embedded SQLite store (the
default) and the shared PostgreSQL store (``state_url``).

A test that takes the ``store_kind`` fixture runs once per store. On PostgreSQL the fixture
gives the test a fresh database on the session's throwaway cluster (``pg_support``) and sets
``SKILLRT_STATE_URL`` for it, so every runtime the test makes (and every child process it
hands the environment to, see ``StoreKind.env``) uses that database; the test's assertions
stay the same. Failover is off there: these tests resume by hand, and a second runtime must
not take a task over on its own. Leases are short, so a task of a child killed with SIGKILL is
free again about a second later (``wait_for_dead_leases``), as a crashed process's OS locks
are free at once with SQLite.

``StoreKind`` also reaches into the store the way a test needs to: open it as another process
would, damage a record, read what was quarantined, and dump every byte it holds.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from skillrt._state.embedded.checkpoints import CheckpointStore, TaskStore

__all__ = ["LEASE_S", "StoreKind", "store_kind"]

LEASE_S = 1.0
"""The lease of a runtime in these tests: renewed every third of it by a thread."""


@dataclass(frozen=True)
class StoreKind:
    name: str  # "sqlite", "sqlite-on-loop" or "postgres"
    state_url: str | None  # None: the embedded SQLite store in the state folder
    on_loop: bool = False  # ``commit_on_loop``: a lone task's commits made on the event loop

    @property
    def shared(self) -> bool:
        return self.state_url is not None

    def env(self) -> dict[str, str]:
        """The store's settings for a child process (empty for SQLite, the default)."""
        if self.state_url is None:
            return {"SKILLRT_COMMIT_ON_LOOP": "true"} if self.on_loop else {}
        return {
            "SKILLRT_STATE_URL": self.state_url,
            "SKILLRT_LEASE_S": str(LEASE_S),
            "SKILLRT_FAILOVER": "false",
        }

    @contextlib.contextmanager
    def open(self, state_dir: Path) -> Iterator[TaskStore]:
        """The task store a runtime with this state folder writes to, opened separately (as
        another process would open it)."""
        if self.state_url is None:
            store = CheckpointStore(state_dir / "checkpoints")
            try:
                yield store
            finally:
                store.close()
            return
        from skillrt._state.postgres import PgDatabase, PgTaskStore

        backend = PgDatabase(self.state_url)
        try:
            yield PgTaskStore(backend)
        finally:
            backend.close()

    def corrupt(self, state_dir: Path, task_id: str, value: str | bytes) -> None:
        """Replace a stored record behind the store's back (as a bug or a bad disk would).
        Bytes that are not UTF-8 only fit SQLite: a PostgreSQL text column refuses them."""
        if self.state_url is None:
            with sqlite3.connect(state_dir / "checkpoints" / "cache" / "cache.db") as db:
                db.execute("UPDATE Cache SET value = ? WHERE key = ?", (value, task_id))
            return
        import psycopg

        text = value.decode("utf-8") if isinstance(value, bytes) else value
        with psycopg.connect(self.state_url, autocommit=True) as conn:
            conn.execute("UPDATE skillrt_tasks SET record = %s WHERE task_id = %s", (text, task_id))

    def stored_text(self, state_dir: Path, task_id: str) -> str:
        """A stored record's text as it is in the store, unparsed."""
        if self.state_url is None:
            with sqlite3.connect(state_dir / "checkpoints" / "cache" / "cache.db") as db:
                (text,) = db.execute("SELECT value FROM Cache WHERE key = ?", (task_id,)).fetchone()
            return str(text)
        import psycopg

        with psycopg.connect(self.state_url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT record FROM skillrt_tasks WHERE task_id = %s", (task_id,)
            ).fetchone()
        assert row is not None, task_id
        return str(row[0])

    def quarantined(self, state_dir: Path, task_id: str | None = None) -> list[bytes]:
        """The records moved aside as unusable (of one task, or all), byte for byte, oldest
        first: files in the state folder's ``checkpoints/quarantine``, or the rows of the
        ``skillrt_quarantine`` table."""
        if self.state_url is None:
            folder = state_dir / "checkpoints" / "quarantine"
            pattern = f"record-{task_id}-*.json" if task_id is not None else "record-*.json"
            files = sorted(folder.glob(pattern), key=lambda p: p.stat().st_mtime_ns)
            return [p.read_bytes() for p in files]
        import psycopg

        with psycopg.connect(self.state_url, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT task_id, record FROM skillrt_quarantine ORDER BY id"
            ).fetchall()
        return [text.encode("utf-8") for tid, text in rows if task_id in (None, tid)]

    def everything_stored(self, state_dir: Path) -> bytes:
        """Every byte the runtime's state holds: the state folder's files and, on PostgreSQL,
        every row of every skillrt table (checkpoints, quarantine, history, locks)."""
        found = b"".join(p.read_bytes() for p in state_dir.rglob("*") if p.is_file())
        if self.state_url is None:
            return found
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.state_url, autocommit=True) as conn:
            tables = conn.execute(
                "SELECT tablename FROM pg_tables WHERE tablename LIKE 'skillrt%%'"
            ).fetchall()
            for (table,) in tables:
                query = sql.SQL("SELECT * FROM {}").format(sql.Identifier(table))
                for row in conn.execute(query).fetchall():
                    found += "\n".join(str(value) for value in row).encode("utf-8")
        return found

    def wait_for_dead_leases(self, state_url: str | None = None, timeout: float = 30) -> None:
        """After a SIGKILL: wait until no task is leased any more (the killed worker renewed
        its leases for the last time at most ``LEASE_S`` before it died). Nothing to wait for
        on SQLite: the OS drops a dead process's locks."""
        url = state_url or self.state_url
        if url is None:
            return
        import psycopg

        deadline = time.monotonic() + timeout
        with psycopg.connect(url, autocommit=True) as conn:
            while True:
                (live,) = conn.execute(
                    "SELECT count(*) FROM skillrt_leases WHERE expires_at > now()"
                ).fetchone()
                if live == 0:
                    return
                assert time.monotonic() < deadline, f"{live} lease(s) still live after {timeout} s"
                time.sleep(0.05)


@pytest.fixture(params=["sqlite", "sqlite-on-loop", "postgres"])
def store_kind(
    request: pytest.FixtureRequest, isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[StoreKind]:
    """Each store in turn; on PostgreSQL a fresh database, set for the test's runtimes (and
    checked afterwards to have been used: the test did not fall back to SQLite).
    ``sqlite-on-loop`` is SQLite with ``commit_on_loop`` on (as the CLI runs it): a task
    alone commits on the event loop, so every promise is checked on that path too."""
    if request.param in ("sqlite", "sqlite-on-loop"):
        kind = StoreKind(request.param, None, on_loop=request.param == "sqlite-on-loop")
        for name, value in kind.env().items():
            monkeypatch.setenv(name, value)
        yield kind
        return
    import psycopg

    kind = StoreKind("postgres", request.getfixturevalue("pg_url"))
    for name, value in kind.env().items():
        monkeypatch.setenv(name, value)
    yield kind
    with psycopg.connect(kind.state_url, autocommit=True) as conn:
        (used,) = conn.execute("SELECT to_regclass('skillrt_schema') IS NOT NULL").fetchone()
    assert used, "the test never opened the PostgreSQL store"
