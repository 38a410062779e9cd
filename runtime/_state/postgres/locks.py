"""``PgFileLocks``: the per-path write locks, as PostgreSQL advisory locks.

Keyed by the content root and the path, so workers on different machines never write one post
at once.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillrt.blog.locks import FileLockManager

if TYPE_CHECKING:
    from skillrt._state.postgres.database import PgDatabase

__all__ = ["PgFileLocks"]


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

    def __init__(self, db: PgDatabase, content_root: Path, *, expiry_s: float = 300.0) -> None:
        super().__init__(Path(content_root) / ".skillrt" / "locks", expiry_s=expiry_s)
        self.db = db
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

    def _lock_on(self, conn: Any, key: int, path: str, task_id: str) -> Any:
        """The advisory lock of ``key`` taken on ``conn``: ``(conn, key)``, or the holder's
        name (``conn`` kept for the next lock). ``conn`` is closed if a statement fails."""
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
                (key, path, task_id, self.db.worker_id),
            )
        except BaseException:
            conn.close()
            raise
        return (conn, key)

    def _os_lock_lost(self, held: Any) -> bool:
        """Is the session that holds ``held``'s advisory lock gone (the database restarted,
        or the connection broke)? One round trip on it, before each write that reuses the
        lock. The server drops a session's advisory locks with it: a task whose lock died so
        went on writing its post while another worker's task locked and wrote it too. Lost,
        the lock is taken again on a new connection, or the write meets its new holder
        (``LockConflict``); a post changed meanwhile fails the write's ``expected_hash``."""
        conn, _key = held.os_lock
        if not conn.closed:
            try:
                conn.execute("SELECT 1")
            except self.db.operational:
                pass
            else:
                return False
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
