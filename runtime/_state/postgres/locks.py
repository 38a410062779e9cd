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

    def _connection(self) -> Any:
        while self._idle:
            conn = self._idle.pop()
            if not conn.closed:
                return conn
        return self.db.dedicated()

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
                (key, path, task_id, self.db.worker_id),
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
