"""``PgHistory``: the history's task entries and chat messages on PostgreSQL.

The same entries as the SQLite history, as durable: an entry survives a crash of the worker
once written. Written alone, it does not wait for the WAL flush; written by the group commit,
it goes in the statement of the round's checkpoints (``rounds``) and is as durable as they are.
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

# The trims cost more than the inserts (0.2-0.3 ms a write, passing the index entries of rows
# deleted but not yet vacuumed), so a worker trims every ``_TRIM_EVERY`` writes; the reads
# show only the newest ``limit`` by seq, exactly what trimming every write would leave. The
# statement itself is a part of a round's (``rounds``).
_TRIM_EVERY = 32
# The newest ``limit`` entries: those a trim would keep.
_NEWEST = "seq > (SELECT coalesce(max(seq), 0) FROM {table}) - %(limit)s"


class PgHistory:
    """The ``History`` API on PostgreSQL: task entries and chat messages, newest first."""

    def __init__(self, db: PgDatabase, *, limit: int = 1000) -> None:
        if limit < 1:
            raise UserError(f"History limit must be at least 1, got {limit}")
        self.db = db
        self.limit = limit
        self.path: Path | None = None
        self._untrimmed = _TRIM_EVERY  # the first write trims (what an earlier life left)

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
        """Record task entries and chat messages (``(session_id, message)``) in one statement
        (one round trip, one transaction), trimming each table to its newest ``limit`` entries.
        Inside a ``grouped`` round (the commit thread's), they go in the round's statement.

        Alone, through the bookkeeping pool: like the SQLite history (``synchronous=NORMAL``),
        an entry survives a crash of this worker once this returns, and does not make the task
        wait for the database's WAL flush (it is a record for people, not a checkpoint). In a
        round with checkpoints, it is as durable as they are, at no cost of its own.
        """
        rows: list[tuple[str, tuple[str, str]]] = []
        for entry in tasks:
            task_id, session_id = entry.get("task_id"), entry.get("session_id")
            if not isinstance(task_id, str) or not isinstance(session_id, str):
                raise UserError("a task history entry needs task_id and session_id strings")
            task_id = clean_text(task_id)
            data = self._json(f"history of {task_id!r}", entry)
            rows.append((task_id, clean_text((session_id, data))))
        said = [
            clean_text((sid, self._json(f"chat message of session {sid!r}", m)))
            for sid, m in messages
        ]
        if not rows and not said:
            return
        trim = self._untrimmed + 1 >= _TRIM_EVERY
        with self.db.grouped() as round_:
            round_.history(rows, said, limit=self.limit, trim=trim)
        self._untrimmed = 0 if trim else self._untrimmed + 1

    def tasks(self, session_id: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        newest = _NEWEST.format(table="skillrt_history_tasks")
        where = f"WHERE {newest}"
        if session_id is not None:
            where += " AND session_id = %(session)s"
        params = {"limit": self.limit, "n": limit, "session": clean_text(session_id)}
        with self.db.connection() as conn:
            rows = conn.execute(
                # S608: the query is made of constants, never input.
                f"SELECT data FROM skillrt_history_tasks {where} "  # noqa: S608
                "ORDER BY seq DESC LIMIT %(n)s",
                params,
            ).fetchall()
        return [json.loads(data) for (data,) in rows]

    def messages(self, session_id: str, limit: int = 50) -> list[dict[str, Any]]:
        newest = _NEWEST.format(table="skillrt_history_messages")
        with self.db.connection() as conn:
            rows = conn.execute(
                # S608: the query is made of constants, never input.
                f"SELECT data FROM skillrt_history_messages WHERE {newest} "  # noqa: S608
                "AND session_id = %(session)s ORDER BY seq DESC LIMIT %(n)s",
                {"limit": self.limit, "n": limit, "session": clean_text(session_id)},
            ).fetchall()
        return [json.loads(data) for (data,) in rows]

    def close(self) -> None:
        """Nothing of its own to close: the database owns the pool."""
