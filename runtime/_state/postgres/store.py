"""The shared task store on PostgreSQL: several skillrt processes on several machines, one DB.

Selected by ``state_url = "postgresql://…"`` (extra ``skillrt[postgres]``: psycopg 3 and its
pool). It keeps the embedded store's promises and adds what sharing needs:

- ``PgTaskStore``: checkpoints and the step journal. ``apply`` is one transaction, committed
  (WAL flushed, ``synchronous_commit`` as the server sets it: on by default) before it returns,
  so a step is durable before ``ctx.step`` returns, as with SQLite. A write for a task whose
  lease another live worker holds is refused (``StoreUnavailable(reason="lease_lost")``): a
  worker that lost its lease (paused by the OS, cut off) cannot journal a step the new owner
  is also running, so a completed step never runs twice on two workers.
- ``PgHistory``: the same entries as the SQLite history, as durable (an entry survives a
  crash of the worker once written; it does not wait for the WAL flush).
- ``PgRunLocks``: run locks as **leases**. A worker holds a lease per task it runs and a
  thread renews them every ``lease_s / 3``; when a worker dies its leases expire after
  ``lease_s`` and another worker may take the tasks over (``orphans``).
- ``PgFileLocks``: the per-path write locks, as PostgreSQL advisory locks keyed by the content
  root and the path, so workers on different machines never write one post at once.

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
import hashlib
import json
import os
import re
import secrets
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from skillrt._state.embedded.checkpoints import LoadResult, _dump, _parse
from skillrt._state.postgres.schema import SCHEMA_VERSION, migrate, schema_version
from skillrt._state.records import RecordText, TaskRecord
from skillrt.blog.locks import FileLockManager
from skillrt.exceptions import MissingDependency, StoreUnavailable, UserError

__all__ = [
    "PgBackend",
    "PgFileLocks",
    "PgHistory",
    "PgRunLocks",
    "PgTaskStore",
    "inspect_database",
    "redact_url",
]

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


class PgBackend:
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


class PgTaskStore:
    """Task records in ``skillrt_tasks`` (the ``TaskStore`` protocol; see the module docstring)."""

    def __init__(self, backend: PgBackend) -> None:
        self.backend = backend
        self._reports: list[str] = []

    def save(self, record: TaskRecord) -> None:
        self.apply([record], [])

    def apply(self, saves: Sequence[TaskRecord | RecordText], deletes: list[str]) -> None:
        """Save and delete in one transaction, committed when this returns.

        Records of tasks another live worker holds a lease on are not written; after the rest
        is committed this raises ``StoreUnavailable(reason="lease_lost")`` naming them.
        """
        rows = [(r.id, r.state, r.updated_at, _dump(r)) for r in saves]
        fenced: list[str] = []
        with self.backend.connection() as conn, conn.transaction():
            if rows:
                # Every lease row of these tasks is locked, whoever holds it, and judged as it
                # is once locked: a takeover in flight either commits first (and this write is
                # fenced) or waits until this write is committed (and then reads it).
                leases = conn.execute(
                    "SELECT task_id, worker_id <> %s AND expires_at > now() FROM skillrt_leases "
                    "WHERE task_id = ANY(%s) ORDER BY task_id FOR SHARE",
                    (self.backend.worker_id, [row[0] for row in rows]),
                ).fetchall()
                fenced = [task_id for task_id, elsewhere in leases if elsewhere]
                rows = [row for row in rows if row[0] not in fenced]
            if rows:
                with conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO skillrt_tasks (task_id, state, updated_at, record) "
                        "VALUES (%s, %s, %s, %s) ON CONFLICT (task_id) DO UPDATE SET "
                        "state = EXCLUDED.state, updated_at = EXCLUDED.updated_at, "
                        "record = EXCLUDED.record",
                        rows,
                    )
            if deletes:
                conn.execute("DELETE FROM skillrt_tasks WHERE task_id = ANY(%s)", (deletes,))
        if fenced:
            raise StoreUnavailable(
                f"task(s) {', '.join(fenced)} now run on another worker (this worker's lease "
                "expired); not writing their checkpoints",
                reason="lease_lost",
            )

    def get(self, task_id: str) -> TaskRecord | None:
        with self.backend.connection() as conn:
            row = conn.execute(
                "SELECT record FROM skillrt_tasks WHERE task_id = %s", (task_id,)
            ).fetchone()
        if row is None:
            return None
        try:
            return _parse(task_id, row[0].encode("utf-8"))
        except ValueError as exc:
            self._reports.append(self._quarantine(task_id, row[0], str(exc)))
            return None

    def delete(self, task_id: str) -> bool:
        with self.backend.connection() as conn:
            cur = conn.execute("DELETE FROM skillrt_tasks WHERE task_id = %s", (task_id,))
            return bool(cur.rowcount)

    def load_recent(self, *, max_age_s: float, now: float) -> LoadResult:
        cutoff = now - max_age_s
        with self.backend.connection() as conn:
            rows = conn.execute(
                "SELECT task_id, record FROM skillrt_tasks WHERE updated_at >= %s "
                "ORDER BY updated_at DESC",
                (cutoff,),
            ).fetchall()
        records: list[TaskRecord] = []
        for task_id, text in rows:
            try:
                records.append(_parse(task_id, text.encode("utf-8")))
            except ValueError as exc:
                self._reports.append(self._quarantine(task_id, text, str(exc)))
        quarantined, self._reports = self._reports, []
        return LoadResult(records=records, quarantined=quarantined)

    def all_ids(self) -> list[str]:
        with self.backend.connection() as conn:
            rows = conn.execute("SELECT task_id FROM skillrt_tasks ORDER BY task_id").fetchall()
        return [task_id for (task_id,) in rows]

    def close(self) -> None:
        """Nothing of its own to close: the backend owns the pool."""

    def _quarantine(self, task_id: str, text: str, reason: str) -> str:
        with self.backend.connection() as conn, conn.transaction():
            conn.execute(
                "INSERT INTO skillrt_quarantine (task_id, reason, record) VALUES (%s, %s, %s)",
                (task_id, reason, text),
            )
            conn.execute("DELETE FROM skillrt_tasks WHERE task_id = %s", (task_id,))
        return f"task record {task_id!r}: {reason}; moved to the skillrt_quarantine table"


class PgHistory:
    """The ``History`` API on PostgreSQL: task entries and chat messages, newest first."""

    def __init__(self, backend: PgBackend, *, limit: int = 1000) -> None:
        if limit < 1:
            raise UserError(f"History limit must be at least 1, got {limit}")
        self.backend = backend
        self.limit = limit
        self.path: Path | None = None

    @staticmethod
    def _json(what: str, entry: dict[str, Any]) -> str:
        try:
            return json.dumps(entry, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        except (TypeError, ValueError) as exc:
            raise UserError(f"{what} is not JSON-serialisable: {exc}") from exc

    def add_task(self, entry: dict[str, Any]) -> None:
        task_id, session_id = entry.get("task_id"), entry.get("session_id")
        if not isinstance(task_id, str) or not isinstance(session_id, str):
            raise UserError("a task history entry needs task_id and session_id strings")
        data = self._json(f"history entry of task {task_id!r}", entry)
        # A replaced entry moves to the newest place: the seq its insert drew.
        self._add(
            "skillrt_history_tasks",
            "INSERT INTO skillrt_history_tasks (task_id, session_id, data) VALUES (%s, %s, %s) "
            "ON CONFLICT (task_id) DO UPDATE SET seq = EXCLUDED.seq, "
            "session_id = EXCLUDED.session_id, data = EXCLUDED.data",
            (task_id, session_id, data),
        )

    def add_message(self, session_id: str, message: dict[str, Any]) -> None:
        data = self._json(f"chat message of session {session_id!r}", message)
        self._add(
            "skillrt_history_messages",
            "INSERT INTO skillrt_history_messages (session_id, data) VALUES (%s, %s)",
            (session_id, data),
        )

    def _add(self, table: str, insert: str, params: tuple[Any, ...]) -> None:
        """Run ``insert``, then trim ``table`` to its newest ``limit`` entries.

        Through the bookkeeping pool: like the SQLite history (``synchronous=NORMAL``), an
        entry survives a crash of this worker once this returns, and does not make the task
        wait for the database's WAL flush (it is a record for people, not a checkpoint).
        """
        with self.backend.connection(durable=False) as conn:
            conn.execute(insert, params)
            conn.execute(
                # S608: the table name is one of two constants, never input.
                f"DELETE FROM {table} WHERE seq <= (SELECT max(seq) FROM {table}) - %s",  # noqa: S608
                (self.limit,),
            )

    def tasks(self, session_id: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        query = "SELECT data FROM skillrt_history_tasks ORDER BY seq DESC LIMIT %s"
        params: tuple[Any, ...] = (limit,)
        if session_id is not None:
            query = (
                "SELECT data FROM skillrt_history_tasks WHERE session_id = %s "
                "ORDER BY seq DESC LIMIT %s"
            )
            params = (session_id, limit)
        with self.backend.connection() as conn:
            rows = conn.execute(query, params).fetchall()
        return [json.loads(data) for (data,) in rows]

    def messages(self, session_id: str, limit: int = 50) -> list[dict[str, Any]]:
        with self.backend.connection() as conn:
            rows = conn.execute(
                "SELECT data FROM skillrt_history_messages WHERE session_id = %s "
                "ORDER BY seq DESC LIMIT %s",
                (session_id, limit),
            ).fetchall()
        return [json.loads(data) for (data,) in rows]

    def close(self) -> None:
        """Nothing of its own to close: the backend owns the pool."""


class PgRunLocks:
    """Run locks as leases (the ``RunLocks`` API plus ``orphans``); a thread renews them."""

    def __init__(self, backend: PgBackend, *, lease_s: float = 30.0) -> None:
        if lease_s <= 0:
            raise UserError(f"lease_s must be positive, got {lease_s}")
        self.backend = backend
        self.lease_s = lease_s
        self._held: set[str] = set()
        self._mutex = threading.Lock()
        self._stop = threading.Event()
        self.renewed_at = time.monotonic()
        self._thread = threading.Thread(
            target=self._renew_loop, name="skillrt-lease-renewal", daemon=True
        )
        self._thread.start()

    def hold(self, task_id: str) -> bool:
        """Take (or keep) the task's lease; False while another live worker holds it."""
        with self.backend.connection(durable=False) as conn:
            row = conn.execute(
                "INSERT INTO skillrt_leases (task_id, worker_id, expires_at) "
                "VALUES (%s, %s, now() + make_interval(secs => %s)) "
                "ON CONFLICT (task_id) DO UPDATE SET worker_id = EXCLUDED.worker_id, "
                "expires_at = EXCLUDED.expires_at "
                "WHERE skillrt_leases.worker_id = EXCLUDED.worker_id "
                "OR skillrt_leases.expires_at <= now() RETURNING task_id",
                (task_id, self.backend.worker_id, self.lease_s),
            ).fetchone()
        if row is None:
            return False
        with self._mutex:
            self._held.add(task_id)
        return True

    def release(self, task_id: str) -> None:
        with self._mutex:
            self._held.discard(task_id)
        with self.backend.connection(durable=False) as conn:
            conn.execute(
                "DELETE FROM skillrt_leases WHERE task_id = %s AND worker_id = %s",
                (task_id, self.backend.worker_id),
            )

    def running_elsewhere(self, task_id: str) -> bool:
        with self.backend.connection(durable=False) as conn:
            row = conn.execute(
                "SELECT 1 FROM skillrt_leases WHERE task_id = %s AND worker_id <> %s "
                "AND expires_at > now()",
                (task_id, self.backend.worker_id),
            ).fetchone()
        return row is not None

    def held_elsewhere(self, task_ids: Sequence[str]) -> set[str]:
        """Of ``task_ids``, those another live worker holds: ``running_elsewhere`` for many
        tasks in one round trip (listing resumable tasks asks it of each)."""
        if not task_ids:
            return set()
        with self.backend.connection(durable=False) as conn:
            rows = conn.execute(
                "SELECT task_id FROM skillrt_leases WHERE task_id = ANY(%s) AND worker_id <> %s "
                "AND expires_at > now()",
                (list(task_ids), self.backend.worker_id),
            ).fetchall()
        return {task_id for (task_id,) in rows}

    def orphans(self, states: tuple[str, ...]) -> list[str]:
        """Tasks in one of ``states`` that no live worker holds: their worker died."""
        with self.backend.connection(durable=False) as conn:
            rows = conn.execute(
                "SELECT t.task_id FROM skillrt_tasks t WHERE t.state = ANY(%s) AND NOT EXISTS "
                "(SELECT 1 FROM skillrt_leases l WHERE l.task_id = t.task_id "
                " AND l.expires_at > now()) ORDER BY t.updated_at",
                (list(states),),
            ).fetchall()
        return [task_id for (task_id,) in rows]

    def renew(self) -> None:
        """Push back every lease this worker holds, and its heartbeat."""
        with self.backend.connection(durable=False) as conn, conn.transaction():
            conn.execute(
                "UPDATE skillrt_leases SET expires_at = now() + make_interval(secs => %s) "
                "WHERE worker_id = %s",
                (self.lease_s, self.backend.worker_id),
            )
            conn.execute(
                "UPDATE skillrt_workers SET heartbeat_at = now() WHERE worker_id = %s",
                (self.backend.worker_id,),
            )
        self.renewed_at = time.monotonic()

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.lease_s / 3):
            with contextlib.suppress(Exception):  # a missed renewal is retried next round
                self.renew()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        with self._mutex:
            held, self._held = list(self._held), set()
        for task_id in held:
            with contextlib.suppress(Exception):
                self.release(task_id)


def _lock_key(root: Path, path: str) -> int:
    digest = hashlib.sha256(f"{root}\0{path}".encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class PgFileLocks(FileLockManager):
    """``FileLockManager`` whose cross-process lock is a PostgreSQL advisory lock.

    The key is a hash of the content root and the path, so every worker that mounts the blog
    at the same path shares the lock. A held lock keeps its own connection (session-level
    advisory locks live as long as their session); if the worker dies, the server drops the
    session and the lock with it. Holders are named in ``skillrt_file_locks``. The lock calls
    take the manager's mutex, which also guards the idle connections.
    """

    def __init__(self, backend: PgBackend, content_root: Path, *, expiry_s: float = 300.0) -> None:
        super().__init__(Path(content_root) / ".skillrt" / "locks", expiry_s=expiry_s)
        self.backend = backend
        self.content_root = Path(content_root).expanduser().resolve()
        # Connections that hold no lock now, kept for the next one; one is opened here so that
        # a worker's first write does not wait for a connection (several ms).
        self._idle: list[Any] = [backend.dedicated()]

    def _connection(self) -> Any:
        while self._idle:
            conn = self._idle.pop()
            if not conn.closed:
                return conn
        return self.backend.dedicated()

    def _os_acquire(self, path: str, task_id: str) -> Any:
        key = _lock_key(self.content_root, path)
        conn = self._connection()
        try:
            (taken,) = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
            if not taken:
                row = conn.execute(
                    "SELECT task_id, worker_id FROM skillrt_file_locks WHERE lock_key = %s",
                    (key,),
                ).fetchone()
                self._idle.append(conn)
                return f"{row[0]} (worker {row[1]})" if row else "unknown (another worker)"
            conn.execute(
                "INSERT INTO skillrt_file_locks (lock_key, path, task_id, worker_id) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (lock_key) DO UPDATE SET "
                "task_id = EXCLUDED.task_id, worker_id = EXCLUDED.worker_id, since = now()",
                (key, path, task_id, self.backend.worker_id),
            )
        except BaseException:
            conn.close()
            raise
        return (conn, key)

    def _release_os_lock(self, path: str, held: Any) -> None:
        conn, key = held.os_lock
        try:
            conn.execute(
                "DELETE FROM skillrt_file_locks WHERE lock_key = %s AND worker_id = %s",
                (key, self.backend.worker_id),
            )
            conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
            self._idle.append(conn)
        except Exception:
            conn.close()  # closing the session drops its advisory locks

    def close(self) -> None:
        super().close()
        while self._idle:
            self._idle.pop().close()
