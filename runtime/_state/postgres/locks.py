"""``PgFileLocks``: the per-path write locks, as PostgreSQL advisory locks.

Keyed by the content root and the path, so workers on different machines never write one post
at once.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillrt.blog.locks import FileLockManager
from skillrt.exceptions import StoreUnavailable

if TYPE_CHECKING:
    from skillrt._state.postgres.database import PgDatabase
    from skillrt._state.postgres.leases import PgRunLocks

__all__ = ["PgFileLocks"]


def _lock_key(root: Path, path: str) -> int:
    digest = hashlib.sha256(f"{root}\0{path}".encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


# A lock for a task this worker runs is taken, or kept, only while the task's lease names this
# worker (one statement: the check rides on the lock's own round trip). NULL: the lease is gone.
_OURS = "EXISTS (SELECT 1 FROM skillrt_leases WHERE task_id = %(task)s AND worker_id = %(me)s)"
_TAKE_FENCED = f"SELECT CASE WHEN {_OURS} THEN pg_try_advisory_lock(%(key)s) END"
_STILL_OURS = f"SELECT {_OURS}"
# The session holding an advisory lock of a bigint key: pg_locks splits the key in two oids.
_END_HOLDER = (
    "SELECT pg_terminate_backend(pid, %(wait_ms)s) FROM pg_locks WHERE locktype = 'advisory' "
    "AND granted AND objsubid = 1 AND classid::int8 = %(high)s AND objid::int8 = %(low)s "
    "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
    "AND pid <> pg_backend_pid()"
)


def _lease_lost(task_id: str) -> StoreUnavailable:
    return StoreUnavailable(
        f"task {task_id} was taken over by another worker (this one lost its lease): "
        "it writes no post", reason="lease_lost",
    )  # fmt: skip


class PgFileLocks(FileLockManager):
    """``FileLockManager`` whose cross-process lock is a PostgreSQL advisory lock.

    The key is a hash of the content root and the path, so every worker that mounts the blog
    at the same path shares the lock. A held lock keeps its own connection (session-level
    advisory locks live as long as their session); if the worker dies, the server drops the
    session and the lock with it. Holders are named in ``skillrt_file_locks``. The lock calls
    take the manager's mutex, which also guards the idle connections.
    """

    def __init__(
        self,
        db: PgDatabase,
        content_root: Path,
        *,
        expiry_s: float = 300.0,
        runlocks: PgRunLocks | None = None,
    ) -> None:
        super().__init__(Path(content_root) / ".skillrt" / "locks", expiry_s=expiry_s)
        self.db = db
        self.runlocks = runlocks  # fences the locks of the tasks this worker runs (``_fenced``)
        self.content_root = Path(content_root).expanduser().resolve()
        # Connections that hold no lock now, kept for the next one; one is opened here so that
        # a worker's first write does not wait for a connection (several ms).
        self._idle: list[Any] = [db.dedicated()]

    def _connection(self) -> tuple[Any, bool]:
        """A connection for a new lock, and whether it is a spare (kept from an earlier lock:
        it may have died with the server since, nothing drops it as the pool's are)."""
        while self._idle:
            conn = self._idle.pop()
            if not conn.closed:
                return conn, True
        return self.db.dedicated(), False

    def _os_acquire(self, path: str, task_id: str) -> Any:
        """Take the advisory lock (see ``FileLockManager._os_acquire``). A spare connection
        that fails is closed and the lock asked again once on a new one: after a restart of
        the database the first write of a post failed its whole task with the driver's
        "terminating connection due to administrator command" (not resumable), and the
        second try worked. A new connection that fails too is ``StoreUnavailable`` (an
        outage: the task stops at its last completed step)."""
        key = _lock_key(self.content_root, path)
        conn, spare = self._connection()
        try:
            return self._lock_on(conn, key, path, task_id)
        except self.db.operational as exc:
            if not spare:
                raise self.db.refusal(exc) from exc
        conn = self.db.dedicated()  # (StoreUnavailable when the store is down)
        try:
            return self._lock_on(conn, key, path, task_id)
        except self.db.operational as exc:
            raise self.db.refusal(exc) from exc

    def _fenced(self, task_id: str) -> bool:
        """Is ``task_id`` a task this worker runs, so that its locks follow its lease? (An
        ``undo`` takes a lock under an owner of its own, with no lease.)"""
        return self.runlocks is not None and bool(self.runlocks.holding([task_id]))

    def _lock_on(self, conn: Any, key: int, path: str, task_id: str) -> Any:
        """The advisory lock of ``key`` taken on ``conn``: ``(conn, key)``, or the holder's
        name (``conn`` kept for the next lock). ``conn`` is closed if a statement fails.

        A task this worker runs takes the lock only while its lease names this worker
        (``StoreUnavailable(reason="lease_lost")`` once another worker took it over: a worker
        frozen past its lease came back and wrote the post its task's new owner was writing).
        A lock held by the task itself on another worker is its stale twin's (``_end_twin``)."""
        me = self.db.worker_id
        try:
            if self._fenced(task_id):
                args = {"task": task_id, "me": me, "key": key}
                (taken,) = conn.execute(_TAKE_FENCED, args).fetchone()
            else:
                (taken,) = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
            if taken is None:
                self._idle.append(conn)
                raise _lease_lost(task_id)
            if not taken:
                row = conn.execute(
                    "SELECT task_id, worker_id FROM skillrt_file_locks WHERE lock_key = %s",
                    (key,),
                ).fetchone()
                if row is None or not self._end_twin(conn, key, task_id, *row):
                    self._idle.append(conn)
                    return f"{row[0]} (worker {row[1]})" if row else "unknown (another worker)"
            conn.execute(
                "INSERT INTO skillrt_file_locks (lock_key, path, task_id, worker_id) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (lock_key) DO UPDATE SET "
                "task_id = EXCLUDED.task_id, worker_id = EXCLUDED.worker_id, since = now()",
                (key, path, task_id, me),
            )
        except StoreUnavailable:
            raise
        except BaseException:
            conn.close()
            raise
        return (conn, key)

    def _end_twin(self, conn: Any, key: int, task_id: str, holder: str, worker: str) -> bool:
        """Take the lock from the stale twin of ``task_id``: the same task on the worker that
        lost it to this one (frozen past its lease, cut off), whose lock session lives on. The
        server ends that session (its lock goes with it) and the lock is taken here. True once
        taken. Before, the task taken over waited for its own lock and ended ERROR
        ("being written by another task (<its own id>)"), its checkpoint deleted, not done.
        Only a task whose lease now names this worker (``_fenced`` and the lease checked
        by the lock's statement) does so; a role the server does not let end the session
        keeps the ``LockConflict``."""
        if holder != task_id or worker == self.db.worker_id or not self._fenced(task_id):
            return False
        unsigned = key & 0xFFFF_FFFF_FFFF_FFFF
        args = {"high": unsigned >> 32, "low": unsigned & 0xFFFF_FFFF,
                "wait_ms": int(self.db.timeout_s * 1000)}  # fmt: skip
        try:
            conn.execute(_END_HOLDER, args)
        except self.db.operational:
            raise
        except self.db.refused:  # not allowed to end it: the conflict stands
            return False
        (taken,) = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
        return bool(taken)

    def _os_lock_lost(self, held: Any) -> bool:
        """Is the session that holds ``held``'s advisory lock gone (the database restarted,
        or the connection broke)? One round trip on it, before each write that reuses the
        lock. The server drops a session's advisory locks with it: a task whose lock died so
        went on writing its post while another worker's task locked and wrote it too. Lost,
        the lock is taken again on a new connection, or the write meets its new holder
        (``LockConflict``); a post changed meanwhile fails the write's ``expected_hash``.

        The same round trip asks whether the task's lease still names this worker: once
        another worker took the task over, the lock is given back (its session closed) and
        the write refused, ``StoreUnavailable(reason="lease_lost")``."""
        conn, _key = held.os_lock
        fenced = self._fenced(held.task_id)
        if not conn.closed:
            try:
                if fenced:
                    args = {"task": held.task_id, "me": self.db.worker_id}
                    (ours,) = conn.execute(_STILL_OURS, args).fetchone()
                else:
                    ours = conn.execute("SELECT 1").fetchone() is not None
            except self.db.operational:
                pass
            else:
                if ours:
                    return False
                conn.close()  # the lock goes with its session: the task's new owner takes it
                raise _lease_lost(held.task_id)
        conn.close()
        return True

    def _release_os_lock(self, path: str, held: Any) -> None:
        conn, key = held.os_lock
        try:
            conn.execute(
                "DELETE FROM skillrt_file_locks WHERE lock_key = %s AND worker_id = %s",
                (key, self.db.worker_id),
            )
            conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
            self._idle.append(conn)
        except Exception:
            conn.close()  # closing the session drops its advisory locks

    def close(self) -> None:
        super().close()
        while self._idle:
            self._idle.pop().close()
