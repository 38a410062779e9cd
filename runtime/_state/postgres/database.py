"""The PostgreSQL database the shared state backend keeps: its pools, its schema, this worker.

Two pools per process, both psycopg's synchronous ``ConnectionPool``. Checkpoints go through
the *durable* one (each commit waits for the WAL flush), and so do the reads. Leases,
heartbeats, file-lock holders and the history go through a *bookkeeping* one whose sessions
run with ``synchronous_commit = off``: a lease write lost in a database crash costs at most a
takeover that fencing already guards, and it spares every task start and end a WAL flush (a
few ms on a busy disk). The advisory locks themselves live in the server's memory.

The pools are synchronous on purpose. The storage protocols are synchronous: the runtime's
committer applies each group commit in its own thread, and the lease renewal is a thread too.
An asyncio pool belongs to one event loop, so those threads would have to hop onto the loop
for every commit (tying step durability to the loop's responsiveness), and a runtime driven
through ``process_input_sync`` would meet it on a loop of its own. The few calls the runtime
makes per task outside those threads (take and give back a lease, look a task up) are single
round trips, or batched (``PgRunLocks.held_elsewhere``), cheap to run in a thread.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import socket
from collections.abc import Iterator
from typing import Any

from skillrt._state.postgres.schema import SCHEMA_VERSION, migrate, schema_version
from skillrt.exceptions import MissingDependency, StoreUnavailable

__all__ = ["PgDatabase", "inspect_database", "redact_url"]


_URL_PASSWORD = re.compile(r"(://[^:/@]*:)[^@]*@")
_NO_WAL_WAIT = "-c synchronous_commit=off"  # the bookkeeping sessions' setting


def redact_url(url: str) -> str:
    """The URL with its password replaced by ``***`` (for messages and logs)."""
    return _URL_PASSWORD.sub(r"\1***@", url)


def _modules() -> tuple[Any, Any]:
    try:
        import psycopg
        import psycopg_pool
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise MissingDependency("a PostgreSQL state_url", "postgres") from exc
    return psycopg, psycopg_pool


class PgDatabase:
    """The database's two pools (durable and bookkeeping, see the module docstring), the
    schema brought up to date, and this worker's id.

    Raises ``StoreUnavailable`` when the server cannot be reached (at once when it refuses,
    else within ``connect_timeout_s``) or the database is on a newer schema than this package.
    """

    def __init__(
        self,
        url: str,
        *,
        worker_id: str | None = None,
        pool_size: int = 8,
        connect_timeout_s: float = 10.0,
    ) -> None:
        psycopg, psycopg_pool = _modules()
        self._psycopg = psycopg
        self.url = url
        self.worker_id = worker_id or (
            f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        )
        connect = {"autocommit": True, "connect_timeout": max(1, int(connect_timeout_s))}
        self._connect = {**connect, "options": _NO_WAL_WAIT}  # a bookkeeping session's
        self._start(connect)
        self.pool = psycopg_pool.ConnectionPool(
            url, min_size=1, max_size=pool_size, kwargs=connect, open=False, name="skillrt"
        )
        self.bookkeeping = psycopg_pool.ConnectionPool(
            url,
            min_size=1,
            max_size=4,
            kwargs=self._connect,
            open=False,
            name="skillrt-bookkeeping",
        )
        try:
            for pool in (self.pool, self.bookkeeping):
                pool.open(wait=True, timeout=connect_timeout_s)
        except psycopg_pool.PoolTimeout as exc:
            self._close_pools()
            raise StoreUnavailable(
                f"cannot reach PostgreSQL at {redact_url(url)} within {connect_timeout_s:g} s "
                "(is the server running, and state_url right?)"
            ) from exc

    def _start(self, connect: dict[str, Any]) -> None:
        """Connect once on its own, migrate the schema and register this worker.

        A wrong URL or a server that is down is reported at once with the server's or the
        client library's reason (a pool would retry until its timeout and say only that).
        """
        psycopg = self._psycopg
        try:
            with psycopg.connect(self.url, **connect) as conn:
                self.migrated_from, self.schema_version = migrate(conn)
                conn.execute(
                    "INSERT INTO skillrt_workers (worker_id, host, pid) VALUES (%s, %s, %s) "
                    "ON CONFLICT (worker_id) DO UPDATE SET heartbeat_at = now()",
                    (self.worker_id, socket.gethostname(), os.getpid()),
                )
        except psycopg.Error as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            password = psycopg.conninfo.conninfo_to_dict(self.url).get("password")
            if password:
                reason = reason.replace(str(password), "***")
            raise StoreUnavailable(
                f"cannot use PostgreSQL at {redact_url(self.url)}: {reason} "
                "(is the server running, and state_url right?)"
            ) from exc

    @contextlib.contextmanager
    def connection(self, *, durable: bool = True) -> Iterator[Any]:
        """A pooled connection (autocommit); database errors become ``StoreUnavailable``.

        ``durable=False``: a bookkeeping connection, whose commits do not wait for the WAL
        flush (leases, heartbeats, lock holders; never checkpoints or history).
        """
        psycopg = self._psycopg
        try:
            with (self.pool if durable else self.bookkeeping).connection() as conn:
                yield conn
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(f"PostgreSQL at {redact_url(self.url)}: {exc}") from exc

    def dedicated(self) -> Any:
        """A bookkeeping connection of its own (not pooled), for session-level advisory locks."""
        try:
            return self._psycopg.connect(self.url, **self._connect)
        except self._psycopg.OperationalError as exc:
            raise StoreUnavailable(f"PostgreSQL at {redact_url(self.url)}: {exc}") from exc

    def live_workers(self, stale_s: float) -> list[dict[str, Any]]:
        """Workers that sent a heartbeat within ``stale_s`` seconds, newest first."""
        with self.connection() as conn:
            rows = conn.execute(
                "SELECT worker_id, host, pid, started_at, heartbeat_at, "
                "(SELECT count(*) FROM skillrt_leases l WHERE l.worker_id = w.worker_id "
                " AND l.expires_at > now()) FROM skillrt_workers w "
                "WHERE heartbeat_at > now() - make_interval(secs => %s) "
                "ORDER BY heartbeat_at DESC",
                (stale_s,),
            ).fetchall()
        keys = ("worker_id", "host", "pid", "started_at", "heartbeat_at", "tasks")
        return [dict(zip(keys, row, strict=True)) for row in rows]

    def heartbeat(self) -> None:
        with self.connection(durable=False) as conn:
            conn.execute(
                "UPDATE skillrt_workers SET heartbeat_at = now() WHERE worker_id = %s",
                (self.worker_id,),
            )

    def close(self) -> None:
        with contextlib.suppress(Exception), self.pool.connection(timeout=2) as conn:
            conn.execute("DELETE FROM skillrt_workers WHERE worker_id = %s", (self.worker_id,))
        self._close_pools()

    def _close_pools(self) -> None:
        self.bookkeeping.close()
        self.pool.close()


def inspect_database(url: str, *, stale_s: float) -> dict[str, Any]:
    """What ``skillrt doctor`` shows of the database at ``url``, read only (nothing migrated):
    its schema version, this package's, the workers alive within ``stale_s`` and the tasks."""
    psycopg, _ = _modules()
    with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
        version = schema_version(conn)
        workers: list[dict[str, Any]] = []
        tasks = 0
        if version >= 2:
            rows = conn.execute(
                "SELECT worker_id, host, pid, heartbeat_at FROM skillrt_workers "
                "WHERE heartbeat_at > now() - make_interval(secs => %s) ORDER BY worker_id",
                (stale_s,),
            ).fetchall()
            workers = [
                {"worker_id": w, "host": h, "pid": p, "heartbeat_at": at.isoformat()}
                for w, h, p, at in rows
            ]
        if version >= 1:
            (tasks,) = conn.execute("SELECT count(*) FROM skillrt_tasks").fetchone()
    return {"schema": version, "package_schema": SCHEMA_VERSION, "workers": workers,
            "tasks": tasks}  # fmt: skip
