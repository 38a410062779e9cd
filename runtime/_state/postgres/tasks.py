"""``PgTaskStore``: checkpoints and the step journal in ``skillrt_tasks``.

``apply`` is one transaction, committed (WAL flushed, ``synchronous_commit`` as the server sets
it: on by default) before it returns, so a step is durable before ``ctx.step`` returns, as with
SQLite. A write for a task whose lease another live worker holds is refused
(``StoreUnavailable(reason="lease_lost")``): a worker that lost its lease (paused by the OS, cut
off) cannot journal a step the new owner is also running, so a completed step never runs twice
on two workers.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from skillrt._state.postgres.database import clean_text
from skillrt._state.postgres.looprounds import LoopRounds, Settle, Write
from skillrt._state.protocol import LoadResult
from skillrt._state.records import RecordText, TaskRecord, dump_record, parse_record

if TYPE_CHECKING:
    from skillrt._state.postgres.database import PgDatabase
    from skillrt._state.postgres.leases import PgRunLocks

__all__ = ["PgTaskStore"]


class PgTaskStore:
    """Task records in ``skillrt_tasks`` (the ``TaskStore`` protocol; see the module docstring)."""

    def __init__(self, db: PgDatabase, runlocks: PgRunLocks | None = None) -> None:
        self.db = db
        self.runlocks = runlocks  # its queued lease releases go with each round
        self._reports: list[str] = []

    def save(self, record: TaskRecord) -> None:
        self.apply([record], [])

    def grouped(self) -> AbstractContextManager[object]:
        """The committer's hook: a round's checkpoints and side writes (the history's entries,
        the lease releases) gathered meanwhile are sent as one statement, one round
        trip and one transaction, when it ends (see ``rounds``)."""
        return self.db.grouped(self.runlocks)

    def loop_rounds(self, write: Write, settle: Settle) -> LoopRounds:
        """The committer's hook: its rounds sent by the event loop itself (``looprounds``)."""
        return LoopRounds(self.db, self.runlocks, write, settle)

    def apply(self, saves: Sequence[TaskRecord | RecordText], deletes: list[str]) -> None:
        """Save and delete in one transaction, committed when this returns (inside a
        ``grouped`` round: when the round ends, with the rest of it).

        Records of tasks another live worker holds a lease on are not written; after the rest
        is committed this raises ``StoreUnavailable(reason="lease_lost")`` naming them. A
        deletion is fenced too: no worker ends the checkpoint of a task that another live
        worker runs (a control request sent to the wrong worker, a stale copy).
        """
        # NUL cannot be stored in PostgreSQL's text: the record's JSON escapes it (\u0000),
        # the indexed columns lose it.
        rows = [(clean_text(r.id), r.state, float(r.updated_at), dump_record(r)) for r in saves]
        with self.db.grouped(self.runlocks) as round_:
            round_.checkpoint(rows, [clean_text(task_id) for task_id in deletes])

    def get(self, task_id: str) -> TaskRecord | None:
        with self.db.connection() as conn:
            row = conn.execute(
                "SELECT record FROM skillrt_tasks WHERE task_id = %s", (clean_text(task_id),)
            ).fetchone()
        if row is None:
            return None
        try:
            return parse_record(task_id, row[0].encode("utf-8"))
        except ValueError as exc:
            self._reports.append(self._quarantine(task_id, row[0], str(exc)))
            return None

    def delete(self, task_id: str) -> bool:
        with self.db.connection() as conn:
            cur = conn.execute(
                "DELETE FROM skillrt_tasks WHERE task_id = %s", (clean_text(task_id),)
            )
            return bool(cur.rowcount)

    def load_recent(self, *, max_age_s: float, now: float) -> LoadResult:
        cutoff = now - max_age_s
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT task_id, record FROM skillrt_tasks WHERE updated_at >= %s "
                "ORDER BY updated_at DESC",
                (cutoff,),
            ).fetchall()
        records: list[TaskRecord] = []
        for task_id, text in rows:
            try:
                records.append(parse_record(task_id, text.encode("utf-8")))
            except ValueError as exc:
                self._reports.append(self._quarantine(task_id, text, str(exc)))
        quarantined, self._reports = self._reports, []
        return LoadResult(records=records, quarantined=quarantined)

    def all_ids(self) -> list[str]:
        with self.db.connection() as conn:
            rows = conn.execute("SELECT task_id FROM skillrt_tasks ORDER BY task_id").fetchall()
        return [task_id for (task_id,) in rows]

    def close(self) -> None:
        """Nothing of its own to close: the database owns the pool."""

    def _quarantine(self, task_id: str, text: str, reason: str) -> str:
        with self.db.connection() as conn, conn.transaction():
            conn.execute(
                "INSERT INTO skillrt_quarantine (task_id, reason, record) VALUES (%s, %s, %s)",
                (task_id, reason, text),
            )
            conn.execute("DELETE FROM skillrt_tasks WHERE task_id = %s", (task_id,))
        return f"task record {task_id!r}: {reason}; moved to the skillrt_quarantine table"
