"""``SQLiteCache``: one SQLite connection behind a lock, for a database that can be rebuilt.

The post index and the entity graph keep caches of the blog in SQLite and open them the same
way: WAL mode with ``synchronous=NORMAL`` (no fsync per commit), a 10 s busy timeout, and
the schema version in ``user_version`` (a database of another version has its tables dropped
and created again).

A file found damaged (SQLite cannot read it, a page is malformed, a text is not UTF-8) is moved
aside (with its ``-wal`` and ``-shm``, each renamed ``*.corrupt``, never deleted), reported
(``faults.moved_aside``: a ``skillrt: warning:`` line on the CLI), and a new one is made and
filled again (``_refill``: the post index reads the posts again). That happens at open, and
in use: every method that reads or writes the database is ``rebuilt_when_damaged``, so the call
that finds the damage is made again on the new database and succeeds. Before, that call
raised the raw SQLite error: a task that searched the index failed ("database disk image is
malformed") and was lost, and ``skillrt index`` exited 74 on a path that was not UTF-8. A
database damaged again at once raises ``StoreUnavailable`` (one paragraph, no SQLite text).
``check()`` reads the whole file (``PRAGMA quick_check`` and every row), for ``skillrt index``.
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

from skillrt._io.faults import classify, moved_aside, stamp, undecodable
from skillrt.exceptions import StoreUnavailable

__all__ = ["SQLiteCache", "quick_check_problem", "rebuilt_when_damaged"]

_P = ParamSpec("_P")
_R = TypeVar("_R")
_C = TypeVar("_C", bound="SQLiteCache")
_FAULTS = (sqlite3.DatabaseError, UnicodeDecodeError)


def rebuilt_when_damaged(
    method: Callable[Concatenate[_C, _P], _R],
) -> Callable[Concatenate[_C, _P], _R]:
    """``method``, made again on a new database when it finds this one damaged (see the module
    docstring); other errors raise as they are."""

    @functools.wraps(method)
    def guarded(self: _C, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(self, *args, **kwargs)
        except _FAULTS as exc:
            if not self._damaged(exc):
                raise
            self._renew(exc)
        try:
            return method(self, *args, **kwargs)
        except _FAULTS as exc:
            if not self._damaged(exc):
                raise
            self._renew(exc)
            raise StoreUnavailable(
                f"skillrt cannot use its {self.what} {self.db_path}: it was found damaged again"
                f" as soon as it was made again ({type(exc).__name__}). Check the disk, then run"
                " skillrt doctor.",
                reason="unusable",
            ) from exc

    return guarded


def quick_check_problem(found: list[tuple[object, ...]]) -> str:
    """The first problem ``PRAGMA quick_check`` reports (its rows may hold many lines each)."""
    lines = [line for row in found for line in str(row[0]).splitlines()]
    return next((line for line in lines if not line.startswith("***")), "damaged")


class SQLiteCache:
    """The database in ``db_path``: ``_db`` behind the re-entrant ``_lock``.

    ``tables`` are dropped when the stored schema version is not ``version``; ``schema`` is
    the script that creates them (``CREATE ... IF NOT EXISTS``), run on every open.
    """

    what = "database"
    """What it is, in the warnings and errors that name it."""

    def __init__(self, db_path: Path, *, version: int, tables: Sequence[str], schema: str) -> None:
        self.db_path = Path(db_path)
        self._version = version
        self._drop = "".join(f"DROP TABLE IF EXISTS {table};" for table in tables)
        self._schema = schema
        self._lock = threading.RLock()
        self._depth = 0  # nested _tx: only the outermost commits
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = self._connect()
        except _FAULTS as exc:
            self._quarantine(exc)
            self._db = self._connect()

    def _connect(self) -> sqlite3.Connection:
        """The connection, schema made. ``synchronous=NORMAL``: in WAL mode a commit then
        writes the log without waiting for the disk, and a crash (``kill -9``) still loses
        nothing committed; only a power cut may lose the last commits of a cache that is made
        again from the posts. The graph committed each post of a 3,000-note vault apart, and
        the first refresh spent 7.2 s of its 9.4 s waiting for fsync."""
        db = sqlite3.connect(self.db_path, check_same_thread=False, timeout=10.0)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # see _connect's docstring
            db.execute("PRAGMA busy_timeout=10000")
            if db.execute("PRAGMA user_version").fetchone()[0] != self._version:
                db.executescript(self._drop)
            db.executescript(self._schema)
            db.execute(f"PRAGMA user_version={self._version:d}")
            db.commit()
        except BaseException:
            db.close()
            raise
        return db

    def _damaged(self, exc: BaseException) -> bool:
        """Whether ``exc`` says the file is damaged (not busy, full or read-only)."""
        return undecodable(exc) or (
            isinstance(exc, sqlite3.DatabaseError) and classify(exc, self.db_path) == "corrupt"
        )

    def _quarantine(self, exc: BaseException) -> None:
        """Move the file and its ``-wal`` and ``-shm`` aside (``*.corrupt``; with a timestamp
        when an earlier one is there), and say so."""
        name = self.db_path.name
        base = (
            name if not self.db_path.with_name(name + ".corrupt").exists() else f"{name}-{stamp()}"
        )
        target = self.db_path.with_name(base + ".corrupt")
        for suffix in ("", "-wal", "-shm"):
            part = self.db_path.with_name(name + suffix)
            if part.exists():
                part.replace(self.db_path.with_name(base + suffix + ".corrupt"))
        detail = "a text that is not UTF-8" if undecodable(exc) else str(exc)
        moved_aside(
            f"the {self.what} {self.db_path} was damaged ({detail}); moved to {target} and"
            " made again"
        )

    def _renew(self, exc: BaseException) -> None:
        """The damaged file moved aside, a new one made and filled again (``_refill``)."""
        with self._lock:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._quarantine(exc)
            self._db = self._connect()
            try:
                self._refill()
            except _FAULTS as again:  # damaged at once: left empty, the next call finds out
                if not self._damaged(again):
                    raise

    def _refill(self) -> None:
        """Fill a database made again after damage (nothing here: what a subclass keeps)."""

    @rebuilt_when_damaged
    def check(self) -> None:
        """Read the whole file (``PRAGMA quick_check`` and every row of every table): a damaged
        one is moved aside and made again, as when a call finds it."""
        with self._lock:
            found = self._db.execute("PRAGMA quick_check").fetchall()
            if found != [("ok",)]:
                raise sqlite3.DatabaseError(
                    f"database disk image is malformed ({quick_check_problem(found)})"
                )
            tables = self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            for (table,) in tables.fetchall():
                self._db.execute(f'SELECT * FROM "{table}"').fetchall()  # noqa: S608

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextlib.contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """The connection, under the lock; committed on success (by the outermost ``_tx`` or
        ``batch``), rolled back on any error (a damaged file is then moved aside by the
        ``rebuilt_when_damaged`` method)."""
        with self._lock:
            self._depth += 1
            try:
                yield self._db
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    self._db.rollback()
                raise
            else:
                if self._depth == 1:
                    self._db.commit()
            finally:
                self._depth -= 1

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Every write inside as one transaction, committed at its end (under the lock: other
        threads wait). The graph's sync of 3,000 notes committed each note apart: a third of
        its time. A crash inside loses the batch whole, never half of it."""
        with self._tx():
            yield
