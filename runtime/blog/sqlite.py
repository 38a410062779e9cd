"""``SQLiteCache``: one SQLite connection behind a lock, for a database that can be rebuilt.

The post index and the entity graph keep caches of the blog in SQLite and open them the same
way: WAL mode, a 10 s busy timeout, and the schema version in ``user_version`` (a database of
another version has its tables dropped and created again). A file SQLite cannot read is moved
aside (with its ``-wal`` and ``-shm``, each renamed ``*.corrupt``) and a new one is created,
at open or when a call finds it damaged while open (that call fails; the next one works).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from skillrt._io.faults import classify

__all__ = ["SQLiteCache"]


class SQLiteCache:
    """The database in ``db_path``: ``_db`` behind the re-entrant ``_lock``.

    ``tables`` are dropped when the stored schema version is not ``version``; ``schema`` is
    the script that creates them (``CREATE ... IF NOT EXISTS``), run on every open.
    """

    def __init__(self, db_path: Path, *, version: int, tables: Sequence[str], schema: str) -> None:
        self.db_path = Path(db_path)
        self._version = version
        self._drop = "".join(f"DROP TABLE IF EXISTS {table};" for table in tables)
        self._schema = schema
        self._lock = threading.RLock()
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = self._connect()
        except sqlite3.DatabaseError:
            self._quarantine()
            self._db = self._connect()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.db_path, check_same_thread=False, timeout=10.0)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA busy_timeout=10000")
            if db.execute("PRAGMA user_version").fetchone()[0] != self._version:
                db.executescript(self._drop)
            db.executescript(self._schema)
            db.execute(f"PRAGMA user_version={self._version:d}")
            db.commit()
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def _quarantine(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            part = self.db_path.with_name(self.db_path.name + suffix)
            if part.exists():
                part.replace(part.with_name(part.name + ".corrupt"))

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextlib.contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """The connection, under the lock; committed on success, rolled back on any error."""
        with self._lock:
            try:
                yield self._db
            except BaseException as exc:
                with contextlib.suppress(sqlite3.Error):
                    self._db.rollback()
                if isinstance(exc, sqlite3.Error) and classify(exc, self.db_path) == "corrupt":
                    # Cut short or overwritten under us ("no such table"): this call fails,
                    # the next one finds a fresh database that the refresh fills again.
                    self._db.close()
                    self._quarantine()
                    self._db = self._connect()
                raise
            else:
                self._db.commit()
