"""``History``: what tasks ran and what was said, per session, newest first, bounded.

One SQLite file (``history.db`` in ``directory``; in memory when ``directory`` is None) in WAL
mode with ``synchronous=NORMAL``: an entry survives a process crash once ``add_*`` returns, and
a power cut may lose the last few (never corrupting the file). History is a record for people;
resuming reads only the checkpoints, which are fsynced at every write, so the history does not
pay three fsyncs per task for a guarantee nothing relies on. Entries are JSON text, never
pickle. Each table shows at most ``limit`` entries, the newest by seq; the oldest go first.
Past the limit, the rows below it are deleted every ``_TRIM_EVERY`` writes, not at each (a
trim dirtied as many pages as the write itself: the oldest rows' table and index pages, each
a frame of the log); the reads show only the newest ``limit`` by seq meanwhile, exactly what
trimming at every write would leave (as the PostgreSQL history does).

A task has one entry: adding a task id again (a resumed task that finished) replaces the old
entry and moves it to the front.

Faults (see ``faults.py``): a file SQLite cannot read (not a database, another schema, foreign
tables (see ``schema``), a folder in its place, 0 bytes) is moved to
``quarantine/history.db-<time>`` and a fresh one started, listed in ``quarantined``; a deleted
folder is made again and the open connection's entries copied into it; a read-only folder or
a full disk raise ``StoreUnavailable``.

``MemoryHistory`` is the history of a runtime without checkpoints (``checkpoints = false``):
kept in memory as ``History(None)`` keeps it (the same entries, JSON text, bound and order),
in Python, with no SQLite statement to run for a write to memory.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sqlite3
import threading
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic_core import to_json

from skillrt._io.faults import classify, quarantine_file, unavailable
from skillrt._io.opening import opening
from skillrt._state.embedded.schema import HISTORY_SCHEMA, foreign_schema
from skillrt.exceptions import UserError

_T = TypeVar("_T")

__all__ = ["History", "MemoryHistory"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id TEXT NOT NULL UNIQUE,
    session_id TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS tasks_session ON tasks (session_id, seq);
CREATE TABLE IF NOT EXISTS messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_session ON messages (session_id, seq);
"""


_FLAT = frozenset({str, int, bool, type(None)})


def _plain(entry: dict[str, Any]) -> bool:
    """Whether every key of ``entry`` is a string and every value a string, a finite number,
    a bool or None (every entry the runtime writes)."""
    for key, value in entry.items():
        kind = type(value)
        if type(key) is not str or (
            kind not in _FLAT and (kind is not float or not math.isfinite(value))
        ):
            return False
    return True


def _to_json(what: str, entry: dict[str, Any]) -> str:
    """Compact JSON, non-ASCII as it is, no NaN or infinity. An entry of plain values (every one
    the runtime writes: strings, numbers, None) is encoded by pydantic-core, about five times
    faster than ``json.dumps`` with these options (two entries per task, in the commit thread);
    anything else by ``json.dumps``, which says what it cannot encode. Both read back the same
    with ``json.loads``."""
    if _plain(entry):
        try:
            return to_json(entry).decode()
        except ValueError:  # a lone surrogate: json.dumps says so as before
            pass
    try:
        return json.dumps(entry, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise UserError(f"{what} is not JSON-serialisable: {exc}") from exc


_TASK, _MESSAGE = "history entry of task", "chat message of session"


def _text(entry: dict[str, Any], noun: str, name: str) -> str:
    """``_to_json`` whose ``what`` (``noun`` and the ``name`` it names) is worded only for an
    entry that may be refused, not at every write."""
    if _plain(entry):
        try:
            return to_json(entry).decode()
        except ValueError:
            pass
    return _to_json(f"{noun} {name!r}", entry)


# A task's entry replaces its earlier one (a resumed task that finished), which REPLACE deletes
# before it inserts: the new row gets the next seq, at the front.
_PUT_TASK = "INSERT OR REPLACE INTO tasks (task_id, session_id, data) VALUES (?, ?, ?)"
_PUT_MESSAGE = "INSERT INTO messages (session_id, data) VALUES (?, ?)"
_TABLES = ("tasks", "messages")


_MANY = 16  # rows inserted by one statement of as many rows; more by ``executemany``
_TRIM_EVERY = 32  # writes past the limit per trim (see the module docstring)
# Reads: the newest ``limit`` rows of a table by seq (what a trim at every write would leave).
_READ_TASKS = (
    "SELECT data FROM tasks WHERE seq > (SELECT MAX(seq) FROM tasks) - ? ORDER BY seq DESC LIMIT ?"
)
_READ_SESSION_TASKS = (
    "SELECT data FROM tasks WHERE session_id = ? AND seq > (SELECT MAX(seq) FROM tasks) - ?"
    " ORDER BY seq DESC LIMIT ?"
)
_READ_MESSAGES = (
    "SELECT data FROM messages WHERE session_id = ?"
    " AND seq > (SELECT MAX(seq) FROM messages) - ? ORDER BY seq DESC LIMIT ?"
)
_statements: dict[tuple[str, int], str] = {}


def _put(db: sqlite3.Connection, statement: str, rows: Sequence[tuple[str, ...]]) -> int | None:
    """``rows`` inserted, in order; the seq of the last one (None when there were more than
    ``_MANY``: ``executemany`` does not say). A few rows go as one statement of as many rows
    (a chat turn's two messages: no ``executemany``, and its seq known)."""
    if len(rows) == 1:
        return db.execute(statement, rows[0]).lastrowid
    if len(rows) > _MANY:
        db.executemany(statement, rows)
        return None
    many = _statements.get((statement, len(rows)))
    if many is None:
        one = statement[statement.index("VALUES ") + 7 :]
        many = _statements[statement, len(rows)] = statement + (", " + one) * (len(rows) - 1)
    return db.execute(many, [value for row in rows for value in row]).lastrowid


def _floor(db: sqlite3.Connection, table: str) -> int:
    """A seq no row of ``table`` has or is below: the lowest seq less one, or when the table is
    empty the highest seq it ever gave (AUTOINCREMENT's counter; new rows come above it)."""
    # S608: the table name is one of two constants, never input.
    (low,) = db.execute(f"SELECT MIN(seq) FROM {table}").fetchone()  # noqa: S608
    if low is not None:
        return int(low) - 1
    given = db.execute("SELECT seq FROM sqlite_sequence WHERE name = ?", (table,)).fetchone()
    return 0 if given is None else int(given[0])


class History:
    """Task and chat history in SQLite (see the module docstring)."""

    def __init__(self, directory: Path | None, *, limit: int = 1000) -> None:
        if limit < 1:
            raise UserError(f"History limit must be at least 1, got {limit}")
        self.limit = limit
        if directory is None:
            self.path: Path | None = None
            target = ":memory:"
        else:
            directory = Path(directory).expanduser().resolve()
            directory.mkdir(parents=True, exist_ok=True)
            self.path = directory / "history.db"
            target = str(self.path)  # (also what each write's check stats: no Path method)
        self._mutex = threading.RLock()
        self.quarantined: list[str] = []  # what was moved aside, for the runtime to report
        self._target = target
        self._identity: tuple[int, int] | None = None
        # Per table, a seq no row has or is below (rows only come above the highest): a trim
        # that would delete nothing is not made (see ``_trim``).
        self._floors: dict[str, int] = {}
        # Per table, the writes past the limit since its last trim (due at once at first: what
        # an earlier life or another writer left).
        self._untrimmed: dict[str, int] = {}
        self._db = self._open()

    @property
    def in_memory(self) -> bool:
        """Kept in memory (no file): its writes are no I/O."""
        return self.path is None

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(
            self._target, timeout=10, isolation_level=None, check_same_thread=False
        )
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # see the module docstring
            db.executescript(_SCHEMA)
            db.execute("SELECT seq, task_id, session_id, data FROM tasks LIMIT 0")
            db.execute("SELECT seq, session_id, data FROM messages LIMIT 0")
            self._floors = {table: _floor(db, table) for table in _TABLES}
            if self.path is not None:
                st = os.stat(self.path)
                self._identity = (st.st_dev, st.st_ino)
        except BaseException:
            db.close()
            raise
        return db

    def _open(self) -> sqlite3.Connection:
        path = self.path
        if path is None:
            return self._connect()
        with opening(path):  # another process may be making the file right now
            return self._open_checked(path)

    def _open_checked(self, path: Path) -> sqlite3.Connection:
        if path.is_dir():
            self._quarantine(path, "a folder stands where the database file should be")
        elif path.is_file() and path.stat().st_size == 0:
            self._quarantine(path, "the database file is empty (0 bytes)")
        elif path.is_file() and (foreign := foreign_schema(path, HISTORY_SCHEMA)) is not None:
            self._quarantine(path, foreign)
        try:
            return self._connect()
        except (sqlite3.Error, OSError) as exc:
            fault = classify(exc, path)
            if fault != "corrupt":
                raise unavailable("history", path.parent, fault, exc) from exc
            self._quarantine(path, str(exc))
        try:
            return self._connect()
        except (sqlite3.Error, OSError) as exc:
            raise unavailable("history", path.parent, classify(exc, path), exc) from exc

    def _quarantine(self, path: Path, detail: str) -> None:
        moved = quarantine_file(path, path.parent / "quarantine")
        self.quarantined.append(f"history {path} unreadable ({detail}); moved to {moved}")

    def _guarded(self, op: Callable[[], _T]) -> _T:
        """Run ``op`` under the mutex. A deleted file is made again from the open connection
        and a corrupt one moved aside, then ``op`` runs once more; other faults raise
        ``StoreUnavailable``."""
        with self._mutex:
            path = self.path
            if path is None:
                return op()
            try:
                self._check_file(path)
                return op()
            except (sqlite3.Error, OSError) as exc:
                fault = classify(exc, path)
                if fault == "missing":
                    self._rescue(path)
                elif fault == "corrupt":
                    self._db.close()
                    self._quarantine(path, str(exc))
                    self._db = self._open()
                else:
                    raise unavailable("history", path.parent, fault, exc) from exc
                try:
                    return op()
                except (sqlite3.Error, OSError) as again:
                    fault = classify(again, path)
                    raise unavailable("history", path.parent, fault, again) from again

    def _check_file(self, path: Path) -> None:
        try:
            st = os.stat(self._target)
        except FileNotFoundError:
            self._rescue(path)
            return
        if (st.st_dev, st.st_ino) != self._identity:  # another file took its place
            self._db.close()
            self._db = self._open()

    def _rescue(self, path: Path) -> None:
        """The file is gone (its folder deleted): copy the open connection's database."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists():
                copy = sqlite3.connect(path)
                try:
                    self._db.backup(copy)
                finally:
                    copy.close()
        except (sqlite3.Error, OSError) as exc:
            raise unavailable("history", path.parent, classify(exc, path), exc) from exc
        finally:
            self._db.close()
        self._db = self._open()

    def add_task(self, entry: dict[str, Any]) -> None:
        """Record a task (task_id, session_id, skill, intent, state, tokens, cost, times, ...)."""
        task_id, session_id = entry.get("task_id"), entry.get("session_id")
        if not isinstance(task_id, str) or not isinstance(session_id, str):
            raise UserError("a task history entry needs task_id and session_id strings")
        data = _text(entry, _TASK, task_id)

        def write() -> None:
            floors: dict[str, int] = {}
            self._db.execute("BEGIN IMMEDIATE")
            try:
                top = self._db.execute(_PUT_TASK, (task_id, session_id, data)).lastrowid
                self._trim("tasks", top, floors)
            except BaseException:
                self._rollback()
                raise
            self._db.execute("COMMIT")
            self._floors.update(floors)

        self._guarded(write)

    def _rollback(self) -> None:
        with contextlib.suppress(sqlite3.Error):  # the error may have ended the transaction
            self._db.execute("ROLLBACK")

    def add_message(self, session_id: str, message: dict[str, Any]) -> None:
        """Record a chat message of ``session_id`` (role, content, ... as a JSON object)."""
        data = _text(message, _MESSAGE, session_id)

        def write() -> None:
            floors: dict[str, int] = {}
            self._db.execute("BEGIN IMMEDIATE")
            try:
                top = self._db.execute(_PUT_MESSAGE, (session_id, data)).lastrowid
                self._trim("messages", top, floors)
            except BaseException:
                self._rollback()
                raise
            self._db.execute("COMMIT")
            self._floors.update(floors)

        self._guarded(write)

    def add_batch(
        self, tasks: list[dict[str, Any]], messages: list[tuple[str, dict[str, Any]]]
    ) -> None:
        """Record task entries and chat messages (``(session_id, message)``) in one transaction:
        what a chat turn writes, or what many tasks ending at once write, costs one commit."""
        rows = []
        for entry in tasks:
            task_id, session_id = entry.get("task_id"), entry.get("session_id")
            if not isinstance(task_id, str) or not isinstance(session_id, str):
                raise UserError("a task history entry needs task_id and session_id strings")
            rows.append((task_id, session_id, _text(entry, _TASK, task_id)))
        said = [(sid, _text(m, _MESSAGE, sid)) for sid, m in messages]

        def write() -> None:
            db, floors = self._db, dict[str, int]()
            db.execute("BEGIN IMMEDIATE")
            try:
                if rows:
                    self._trim("tasks", _put(db, _PUT_TASK, rows), floors)
                if said:
                    self._trim("messages", _put(db, _PUT_MESSAGE, said), floors)
            except BaseException:
                self._rollback()
                raise
            db.execute("COMMIT")
            self._floors.update(floors)

        if rows or said:
            self._guarded(write)

    def _trim(self, table: str, top: int | None, floors: dict[str, int]) -> None:
        """Keep the newest ``limit`` rows of ``table``, whose highest seq is now ``top`` (None:
        not known). seq only grows, and rows leave only from the bottom, so this deletes the
        rows at or below ``MAX(seq) - limit``; when no row is that low (every row is above
        the table's floor), there is nothing to delete and no statement is made. Otherwise the
        rows are deleted every ``_TRIM_EVERY`` writes (the reads leave them out meanwhile).
        ``floors`` gets the new floor, kept once the transaction commits."""
        if top is not None:
            if top - self.limit <= self._floors.get(table, -1):
                return
            untrimmed = self._untrimmed.get(table, _TRIM_EVERY)
            if untrimmed + 1 < _TRIM_EVERY:
                self._untrimmed[table] = untrimmed + 1
                return
        self._db.execute(
            # S608: the table name is one of two constants, never input.
            f"DELETE FROM {table} WHERE seq <= (SELECT MAX(seq) FROM {table}) - ?",  # noqa: S608
            (self.limit,),
        )
        self._untrimmed[table] = 0
        if top is not None:
            floors[table] = top - self.limit

    def tasks(self, session_id: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """Task entries, newest first; of one session when ``session_id`` is given."""
        query = _READ_TASKS
        params: tuple[Any, ...] = (self.limit, limit)
        if session_id is not None:
            query = _READ_SESSION_TASKS
            params = (session_id, self.limit, limit)
        rows = self._guarded(lambda: self._db.execute(query, params).fetchall())
        return [json.loads(data) for (data,) in rows]

    def messages(self, session_id: str, limit: int = 50) -> list[dict[str, Any]]:
        """Chat messages of ``session_id``, newest first."""
        params = (session_id, self.limit, limit)
        rows = self._guarded(lambda: self._db.execute(_READ_MESSAGES, params).fetchall())
        return [json.loads(data) for (data,) in rows]

    def close(self) -> None:
        """Close the database."""
        with self._mutex:
            self._db.close()


# An entry as ``MemoryHistory`` keeps it: a plain one as a copy of its dict (what its JSON text
# reads back as, without the text), any other as its JSON text.
_Kept = dict[str, Any] | str


def _keep(entry: dict[str, Any], noun: str, name: str) -> _Kept:
    """``entry`` as ``MemoryHistory`` keeps it; ``UserError`` when ``History`` refuses it."""
    return dict(entry) if _plain(entry) else _to_json(f"{noun} {name!r}", entry)


def _read(kept: _Kept) -> dict[str, Any]:
    """A kept entry as ``History`` reads it back: a fresh object each time."""
    return dict(kept) if type(kept) is dict else json.loads(kept)  # type: ignore[arg-type]


def _task_row(entry: dict[str, Any]) -> tuple[str, str, _Kept]:
    """A task entry as ``(task_id, session_id, kept)``; ``UserError`` for one that is not."""
    task_id, session_id = entry.get("task_id"), entry.get("session_id")
    if not isinstance(task_id, str) or not isinstance(session_id, str):
        raise UserError("a task history entry needs task_id and session_id strings")
    return task_id, session_id, _keep(entry, _TASK, task_id)


def _first(rows: list[_Kept], limit: int) -> list[_Kept]:
    """The first ``limit`` of ``rows``, as SQLite's ``LIMIT`` gives them (a negative limit:
    every row)."""
    return rows if limit < 0 else rows[:limit]


class MemoryHistory:
    """The history in memory (see the module docstring): what ``History(None)`` keeps, the
    same way, without SQLite. An entry is refused as ``History`` refuses it and read back as a
    fresh object, as from its JSON text: a plain one (strings, finite numbers, bools, None:
    every one the runtime writes) is kept as a copy of its dict, which reads back the same as
    its text, any other as its text. Each table gives its rows a seq that only grows (a task
    entry written again takes the next one, at the front) and keeps the rows whose seq is
    within ``limit`` of its newest, as ``History``'s trim does."""

    path: Path | None = None
    in_memory = True
    # A write is a few dict and deque operations, cheaper than queueing it: the chat log writes
    # each entry as it is made (``ChatLog.open``).
    written_at_once = True

    def __init__(self, *, limit: int = 1000) -> None:
        if limit < 1:
            raise UserError(f"History limit must be at least 1, got {limit}")
        self.limit = limit
        self.quarantined: list[str] = []  # (nothing is ever moved aside)
        self._mutex = threading.Lock()  # a session is read back in a thread
        # task id -> (seq, session id, entry), oldest first; messages oldest first, whose seqs
        # follow one another (never replaced), so the bound is their number.
        self._tasks: dict[str, tuple[int, str, _Kept]] = {}
        self._task_seq = 0
        self._messages: deque[tuple[str, _Kept]] = deque(maxlen=limit)

    def add_task(self, entry: dict[str, Any]) -> None:
        """Record a task (as ``History.add_task``)."""
        self._put([_task_row(entry)], [])

    def add_message(self, session_id: str, message: dict[str, Any]) -> None:
        """Record a chat message of ``session_id`` (as ``History.add_message``)."""
        self._put([], [(session_id, _keep(message, _MESSAGE, session_id))])

    def add_batch(
        self, tasks: list[dict[str, Any]], messages: list[tuple[str, dict[str, Any]]]
    ) -> None:
        """Record task entries and chat messages together: every one is checked before any is
        kept (as ``History.add_batch``)."""
        rows = [_task_row(entry) for entry in tasks] if tasks else []
        said = [(sid, _keep(m, _MESSAGE, sid)) for sid, m in messages] if messages else []
        self._put(rows, said)

    def _put(self, rows: list[tuple[str, str, _Kept]], said: list[tuple[str, _Kept]]) -> None:
        with self._mutex:
            if rows:
                kept, seq = self._tasks, self._task_seq
                for task_id, session_id, data in rows:
                    seq += 1
                    kept.pop(task_id, None)  # written again: the old entry goes (REPLACE)
                    kept[task_id] = (seq, session_id, data)
                self._task_seq = seq
                bottom = seq - self.limit  # rows at or below it go, oldest first
                while kept:
                    oldest = next(iter(kept))
                    if kept[oldest][0] > bottom:
                        break
                    del kept[oldest]
            if said:
                self._messages.extend(said)

    def tasks(self, session_id: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """Task entries, newest first; of one session when ``session_id`` is given."""
        with self._mutex:
            rows = [
                data
                for _, sid, data in reversed(self._tasks.values())
                if session_id is None or sid == session_id
            ]
        return [_read(data) for data in _first(rows, limit)]

    def messages(self, session_id: str, limit: int = 50) -> list[dict[str, Any]]:
        """Chat messages of ``session_id``, newest first."""
        with self._mutex:
            rows = [data for sid, data in reversed(self._messages) if sid == session_id]
        return [_read(data) for data in _first(rows, limit)]

    def close(self) -> None:
        """Nothing to close (the entries stay readable)."""
