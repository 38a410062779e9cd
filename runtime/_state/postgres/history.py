"""``PgHistory``: the history's task entries and chat messages on PostgreSQL.

The same entries as the SQLite history, as durable: an entry survives a crash of the worker
once written; it does not wait for the WAL flush.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillrt._state.postgres.database import clean_text
from skillrt.exceptions import UserError

if TYPE_CHECKING:
    from skillrt._state.postgres.database import PgDatabase

__all__ = ["PgHistory"]


class PgHistory:
    """The ``History`` API on PostgreSQL: task entries and chat messages, newest first."""

    def __init__(self, db: PgDatabase, *, limit: int = 1000) -> None:
        if limit < 1:
            raise UserError(f"History limit must be at least 1, got {limit}")
        self.db = db
        self.limit = limit
        self.path: Path | None = None

    @staticmethod
    def _json(what: str, entry: dict[str, Any]) -> str:
        try:
            return json.dumps(entry, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        except (TypeError, ValueError) as exc:
            raise UserError(f"{what} is not JSON-serialisable: {exc}") from exc

    def add_task(self, entry: dict[str, Any]) -> None:
        self.add_batch([entry], [])

    def add_message(self, session_id: str, message: dict[str, Any]) -> None:
        self.add_batch([], [(session_id, message)])

    def add_batch(
        self, tasks: list[dict[str, Any]], messages: list[tuple[str, dict[str, Any]]]
    ) -> None:
        """Record task entries and chat messages (``(session_id, message)``) in one transaction,
        then trim each table to its newest ``limit`` entries.

        Through the bookkeeping pool: like the SQLite history (``synchronous=NORMAL``), an
        entry survives a crash of this worker once this returns, and does not make the task
        wait for the database's WAL flush (it is a record for people, not a checkpoint).
        """
        rows = []
        for entry in tasks:
            task_id, session_id = entry.get("task_id"), entry.get("session_id")
            if not isinstance(task_id, str) or not isinstance(session_id, str):
                raise UserError("a task history entry needs task_id and session_id strings")
            rows.append(
                clean_text((task_id, session_id, self._json(f"history of {task_id!r}", entry)))
            )
        said = [
            clean_text((sid, self._json(f"chat message of session {sid!r}", m)))
            for sid, m in messages
        ]
        if not rows and not said:
            return
        with self.db.connection(durable=False) as conn, conn.transaction(), conn.cursor() as cur:
            if rows:
                # A replaced entry moves to the newest place: the seq its insert drew.
                cur.executemany(
                    "INSERT INTO skillrt_history_tasks (task_id, session_id, data) "
                    "VALUES (%s, %s, %s) ON CONFLICT (task_id) DO UPDATE SET seq = EXCLUDED.seq, "
                    "session_id = EXCLUDED.session_id, data = EXCLUDED.data",
                    rows,
                )
                self._trim(cur, "skillrt_history_tasks")
            if said:
                cur.executemany(
                    "INSERT INTO skillrt_history_messages (session_id, data) VALUES (%s, %s)", said
                )
                self._trim(cur, "skillrt_history_messages")

    def _trim(self, cur: Any, table: str) -> None:
        cur.execute(
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
            params = (clean_text(session_id), limit)
        with self.db.connection() as conn:
            rows = conn.execute(query, params).fetchall()
        return [json.loads(data) for (data,) in rows]

    def messages(self, session_id: str, limit: int = 50) -> list[dict[str, Any]]:
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT data FROM skillrt_history_messages WHERE session_id = %s "
                "ORDER BY seq DESC LIMIT %s",
                (clean_text(session_id), limit),
            ).fetchall()
        return [json.loads(data) for (data,) in rows]

    def close(self) -> None:
        """Nothing of its own to close: the database owns the pool."""
