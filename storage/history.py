"""``History``: what tasks ran and what was said, per session, newest first, bounded.

One SQLite file (``history.db`` in ``directory``; in memory when ``directory`` is None) in WAL
mode with ``synchronous=NORMAL``: an entry survives a process crash once ``add_*`` returns, and
a power cut may lose the last few (never corrupting the file). History is a record for people;
resuming reads only the checkpoints, which are fsynced at every write, so the history does not
pay three fsyncs per task for a guarantee nothing relies on. Entries are JSON text, never
pickle. Each table keeps at most ``limit`` entries; the oldest go first.

A task has one entry: adding a task id again (a resumed task that finished) replaces the old
entry and moves it to the front.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

from skillrt.exceptions import UserError

__all__ = ["History"]

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


def _to_json(what: str, entry: dict[str, Any]) -> str:
    try:
        return json.dumps(entry, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise UserError(f"{what} is not JSON-serialisable: {exc}") from exc


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
            target = str(self.path)
        self._mutex = threading.Lock()
        self._db = sqlite3.connect(
            target, timeout=30, isolation_level=None, check_same_thread=False
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")  # see the module docstring
        self._db.executescript(_SCHEMA)

    def add_task(self, entry: dict[str, Any]) -> None:
        """Record a task (task_id, session_id, skill, intent, state, tokens, cost, times, ...)."""
        task_id, session_id = entry.get("task_id"), entry.get("session_id")
        if not isinstance(task_id, str) or not isinstance(session_id, str):
            raise UserError("a task history entry needs task_id and session_id strings")
        data = _to_json(f"history entry of task {task_id!r}", entry)
        with self._mutex:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute("DELETE FROM tasks WHERE task_id = ?", (task_id,))
                self._db.execute(
                    "INSERT INTO tasks (task_id, session_id, data) VALUES (?, ?, ?)",
                    (task_id, session_id, data),
                )
                self._trim("tasks")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def add_message(self, session_id: str, message: dict[str, Any]) -> None:
        """Record a chat message of ``session_id`` (role, content, ... as a JSON object)."""
        data = _to_json(f"chat message of session {session_id!r}", message)
        with self._mutex:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute(
                    "INSERT INTO messages (session_id, data) VALUES (?, ?)", (session_id, data)
                )
                self._trim("messages")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _trim(self, table: str) -> None:
        # seq only grows, and rows leave only from the bottom, so this keeps the newest `limit`.
        self._db.execute(
            # S608: the table name is one of two constants, never input.
            f"DELETE FROM {table} WHERE seq <= (SELECT MAX(seq) FROM {table}) - ?",  # noqa: S608
            (self.limit,),
        )

    def tasks(self, session_id: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """Task entries, newest first; of one session when ``session_id`` is given."""
        query = "SELECT data FROM tasks ORDER BY seq DESC LIMIT ?"
        params: tuple[Any, ...] = (limit,)
        if session_id is not None:
            query = "SELECT data FROM tasks WHERE session_id = ? ORDER BY seq DESC LIMIT ?"
            params = (session_id, limit)
        with self._mutex:
            rows = self._db.execute(query, params).fetchall()
        return [json.loads(data) for (data,) in rows]

    def messages(self, session_id: str, limit: int = 50) -> list[dict[str, Any]]:
        """Chat messages of ``session_id``, newest first."""
        with self._mutex:
            rows = self._db.execute(
                "SELECT data FROM messages WHERE session_id = ? ORDER BY seq DESC LIMIT ?",
                (session_id, limit),
            ).fetchall()
        return [json.loads(data) for (data,) in rows]

    def close(self) -> None:
        """Close the database."""
        with self._mutex:
            self._db.close()
