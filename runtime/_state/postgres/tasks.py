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
from typing import TYPE_CHECKING

from skillrt._state.postgres.database import clean_text
from skillrt._state.protocol import LoadResult
from skillrt._state.records import RecordText, TaskRecord, dump_record, parse_record
from skillrt.exceptions import StoreUnavailable

if TYPE_CHECKING:
    from skillrt._state.postgres.database import PgDatabase
    from skillrt._state.postgres.leases import PgRunLocks

__all__ = ["PgTaskStore"]

# A commit round: lock the tasks' lease rows, then save and delete what no other live worker
# holds, delete this worker's leases of the tasks that ended (``PgRunLocks.release_later``), and
# name what was fenced. Data-modifying WITH queries run once, to completion. The arrays go in
# binary (``%b``): psycopg escapes each element of a text-format array with a regular
# expression, 0.3 ms of CPU for one record's JSON and 65 ms for 300 (issue 29).
_APPLY = """
WITH held AS MATERIALIZED (
    SELECT task_id, worker_id <> %(me)s AND expires_at > now() AS elsewhere
    FROM skillrt_leases WHERE task_id = ANY(%(ids)b::text[]) ORDER BY task_id FOR SHARE
), fenced AS MATERIALIZED (
    SELECT task_id FROM held WHERE elsewhere
), saved AS (
    INSERT INTO skillrt_tasks (task_id, state, updated_at, record)
    SELECT s.task_id, s.state, s.updated_at, s.record
    FROM unnest(%(save_ids)b::text[], %(states)b::text[], %(updated)b::float8[],
                %(records)b::text[]) AS s(task_id, state, updated_at, record)
    WHERE s.task_id NOT IN (SELECT task_id FROM fenced)
    ON CONFLICT (task_id) DO UPDATE SET state = EXCLUDED.state,
        updated_at = EXCLUDED.updated_at, record = EXCLUDED.record
), gone AS (
    DELETE FROM skillrt_tasks
    WHERE task_id = ANY(%(deletes)b::text[]) AND task_id NOT IN (SELECT task_id FROM fenced)
), freed AS (
    DELETE FROM skillrt_leases WHERE task_id = ANY(%(released)b::text[]) AND worker_id = %(me)s
)
SELECT task_id FROM fenced
"""

# The same for the commonest round, one task's record (and its lease given back when the task
# ended), in plain parameters: psycopg dumps an array in Python, ~0.1 ms of CPU for the seven
# above, on the path of every step one task makes at a time.
_APPLY_ONE = """
WITH held AS MATERIALIZED (
    SELECT worker_id <> %(me)s AND expires_at > now() AS elsewhere
    FROM skillrt_leases WHERE task_id = %(id)s::text FOR SHARE
), saved AS (
    INSERT INTO skillrt_tasks (task_id, state, updated_at, record)
    SELECT %(id)s::text, %(state)s::text, %(updated)s::float8, %(record)s::text
    WHERE NOT EXISTS (SELECT 1 FROM held WHERE elsewhere)
    ON CONFLICT (task_id) DO UPDATE SET state = EXCLUDED.state,
        updated_at = EXCLUDED.updated_at, record = EXCLUDED.record
), freed AS (
    DELETE FROM skillrt_leases
    WHERE %(release)s::boolean AND task_id = %(id)s::text AND worker_id = %(me)s
)
SELECT %(id)s::text FROM held WHERE elsewhere
"""


class PgTaskStore:
    """Task records in ``skillrt_tasks`` (the ``TaskStore`` protocol; see the module docstring)."""

    def __init__(self, db: PgDatabase, runlocks: PgRunLocks | None = None) -> None:
        self.db = db
        self.runlocks = runlocks  # its queued lease releases go with each round
        self._reports: list[str] = []

    def save(self, record: TaskRecord) -> None:
        self.apply([record], [])

    def apply(self, saves: Sequence[TaskRecord | RecordText], deletes: list[str]) -> None:
        """Save and delete in one transaction, committed when this returns.

        Records of tasks another live worker holds a lease on are not written; after the rest
        is committed this raises ``StoreUnavailable(reason="lease_lost")`` naming them.
        """
        # NUL cannot be stored in PostgreSQL's text: the record's JSON escapes it (\u0000),
        # the indexed columns lose it.
        rows = [(clean_text(r.id), r.state, float(r.updated_at), dump_record(r)) for r in saves]
        deletes = [clean_text(task_id) for task_id in deletes]
        if not rows and not deletes:
            return
        # One statement, so one round trip and its own transaction (the connection is in
        # autocommit). Every lease row of these tasks is locked, whoever holds it, and judged
        # as it is once locked: a takeover in flight either commits first (and this write is
        # fenced) or waits until this write is committed (and then reads it). A deletion is
        # fenced too: no worker ends the checkpoint of a task that another live worker runs (a
        # control request sent to the wrong worker, a stale copy).
        released = self.runlocks.take_releases() if self.runlocks is not None else []
        try:
            fenced = self._write(rows, deletes, clean_text(released))
        finally:
            if self.runlocks is not None:
                self.runlocks.releases_done(released)
        if fenced:
            raise StoreUnavailable(
                f"task(s) {', '.join(fenced)} run on another worker (this worker does not "
                "hold their lease); not writing or deleting their checkpoints",
                reason="lease_lost",
            )

    def _write(
        self, rows: list[tuple[str, str, float, str]], deletes: list[str], released: list[str]
    ) -> list[str]:
        if len(rows) == 1 and not deletes and set(released) <= {rows[0][0]}:
            task_id, state, updated, record = rows[0]
            one = {"me": self.db.worker_id, "id": task_id, "state": state, "updated": updated,
                   "record": record, "release": bool(released)}  # fmt: skip
            with self.db.connection() as conn:
                return [task for (task,) in conn.execute(_APPLY_ONE, one).fetchall()]
        columns = list(zip(*rows, strict=True)) if rows else [(), (), (), ()]
        written = {row[0] for row in rows} | set(deletes)
        with self.db.connection() as conn:
            found = [
                task_id
                for (task_id,) in conn.execute(
                    _APPLY,
                    {
                        "me": self.db.worker_id,
                        # Released leases are locked too, all in one order (no deadlock).
                        "ids": sorted({row[0] for row in rows} | set(deletes) | set(released)),
                        "save_ids": list(columns[0]),
                        "states": list(columns[1]),
                        "updated": list(columns[2]),
                        "records": list(columns[3]),
                        "deletes": deletes,
                        "released": released,
                    },
                ).fetchall()
            ]
        return [task_id for task_id in found if task_id in written]

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
