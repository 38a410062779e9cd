"""``PgRound``: one commit round, written as one statement (issue 29).

A round of the group commit writes the tasks' checkpoints (``PgTaskStore.apply``), then its side
writes: the history's entries and the leases given back by tasks that ended. Sent one by one,
those were a round trip each, and a reply waited for two of them (its ending's checkpoint, then
its history entry). Here every part of a round is gathered first (``PgDatabase.grouped``, the
committer's ``grouped`` hook) and the round is sent as one statement when it closes: one round
trip, one transaction, one WAL flush, however many parts it has.

Each part is a data-modifying ``WITH`` query of the statement; the statement's text depends
only on which parts it has, so psycopg prepares each shape once per connection. A round with
checkpoints goes through the durable pool (it waits for the WAL flush, and the history entries
in it are as durable as the checkpoints); a round of side writes alone goes through the
bookkeeping pool, which does not wait. A side write never fails a round: if the statement fails
(not the connection), the checkpoints are sent again alone and the history alone, and a history
that still fails is logged.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from skillrt._io.logs import library_logger
from skillrt._state.postgres.wire import Statement, float8_array, text, text_array
from skillrt.exceptions import UserError

if TYPE_CHECKING:
    from skillrt._state.postgres.database import PgDatabase
    from skillrt._state.postgres.leases import PgRunLocks

__all__ = ["PgRound"]

Row = tuple[str, str, float, str]  # task_id, state, updated_at, record JSON

# The checkpoints of one task (and its lease given back, when it ended), in plain parameters:
# the commonest round one task makes at a time. Its lease row is locked, whoever holds it, and
# judged once locked: a takeover in flight either commits first (and this write is fenced) or
# waits until this one is committed (and then reads it).
# ``mine``: this worker runs the task (``PgRunLocks`` holds it, or gives it back in this round).
# Then a lease row naming another worker (live or not) or no row at all fences the write too:
# the lease was taken over, and the new owner ended, paused or cancelled the task (its lease
# row deleted). A worker frozen past its lease that journalled on once the row was gone wrote
# the task's checkpoint again after another worker completed it, and failover then ran its
# steps a second time; or replaced a PAUSED record with a running one. A task this worker does
# not run (a record saved with no lease: a control request, a store-level write) is fenced only
# by another live worker's lease.
_ONE_FENCED = """held AS MATERIALIZED (
    SELECT task_id, worker_id <> %(me)s::text
        AND (%(mine)s::boolean OR expires_at > now()) AS elsewhere
    FROM skillrt_leases WHERE task_id = %(id)s::text FOR SHARE
), fenced AS MATERIALIZED (
    SELECT task_id FROM held WHERE elsewhere
    UNION ALL SELECT %(id)s::text WHERE %(mine)s::boolean AND NOT EXISTS (SELECT 1 FROM held)
)"""
_ONE = ", ".join(
    (
        _ONE_FENCED,
        """saved AS (
    INSERT INTO skillrt_tasks (task_id, state, updated_at, record)
    SELECT %(id)s::text, %(state)s::text, %(updated)s::float8, %(record)s::text
    WHERE NOT EXISTS (SELECT 1 FROM fenced)
    ON CONFLICT (task_id) DO UPDATE SET state = EXCLUDED.state,
        updated_at = EXCLUDED.updated_at, record = EXCLUDED.record
)""",
    )
)
# The deletion of one task's checkpoint (and its lease given back): a task's ending, most often
# (an ended task keeps no checkpoint). Fenced as ``_ONE``; plain parameters, no arrays
# (237 -> 188 µs with a history entry, one process, alternated).
_ONE_GONE = ", ".join(
    (
        _ONE_FENCED,
        """gone AS (
    DELETE FROM skillrt_tasks
    WHERE task_id = %(id)s::text AND NOT EXISTS (SELECT 1 FROM fenced)
)""",
    )
)
_ONE_FREED = """freed AS (
    DELETE FROM skillrt_leases WHERE task_id = %(id)s::text AND worker_id = %(me)s::text
)"""

# Any number of checkpoints and deletions. The lease rows of every task the round names (its
# releases too) are locked in one order (no deadlock with another worker's round). The arrays
# go in binary (``%b``): psycopg escapes each element of a text-format array with a regular
# expression, 0.3 ms of CPU for one record's JSON and 65 ms for 300.
# ``mine``: the tasks of the round this worker runs, fenced as in ``_ONE_FENCED``.
_MANY = """held AS MATERIALIZED (
    SELECT task_id, worker_id <> %(me)s::text
        AND (task_id = ANY(%(mine)b::text[]) OR expires_at > now()) AS elsewhere
    FROM skillrt_leases WHERE task_id = ANY(%(ids)b::text[]) ORDER BY task_id FOR SHARE
), fenced AS MATERIALIZED (
    SELECT task_id FROM held WHERE elsewhere
    UNION ALL SELECT m FROM unnest(%(mine)b::text[]) AS m
        WHERE m NOT IN (SELECT task_id FROM held)
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
)"""
# This worker's leases of the tasks that ended (``PgRunLocks.release_later``).
_FREED = """freed AS (
    DELETE FROM skillrt_leases
    WHERE task_id = ANY(%(released)b::text[]) AND worker_id = %(me)s::text
)"""
# History entries: the task entries and chat messages inserted in their order, then (every few
# writes, ``PgHistory``) each table trimmed to its newest ``limit``. The statement's snapshot
# does not show its own inserts, so the newest seq is the greater of the table's and the
# inserts'; a replaced task entry is kept out of the trim (one statement changes a row once).
# The trims name both ends of what they delete: with its lower end open the planner takes a
# whole-table scan for it (a third of the table, it guesses). In a round with checkpoints, the
# entry of a task whose checkpoint is fenced is not written either (``_FENCED_ENTRIES``): a
# frozen worker's ending, refused, wrote ERROR or COMPLETED over the entry of the worker that
# really ended the task.
_HISTORY = """t AS (
    INSERT INTO skillrt_history_tasks (task_id, session_id, data)
    SELECT u.task_id, u.session_id, u.data
    FROM unnest(%(task_ids)b::text[], %(task_sessions)b::text[], %(task_data)b::text[])
        WITH ORDINALITY AS u(task_id, session_id, data, n)
    ORDER BY u.n
    ON CONFLICT (task_id) DO UPDATE SET seq = EXCLUDED.seq,
        session_id = EXCLUDED.session_id, data = EXCLUDED.data
    RETURNING seq, task_id
), m AS (
    INSERT INTO skillrt_history_messages (session_id, data)
    SELECT u.session_id, u.data
    FROM unnest(%(sessions)b::text[], %(data)b::text[]) WITH ORDINALITY AS u(session_id, data, n)
    ORDER BY u.n
    RETURNING seq
)"""
_FENCED_ENTRIES = (
    "WITH ORDINALITY AS u(task_id, session_id, data, n)\n"
    "    WHERE u.task_id NOT IN (SELECT task_id FROM fenced)"
)
_HISTORY_FENCED = _HISTORY.replace(
    "WITH ORDINALITY AS u(task_id, session_id, data, n)", _FENCED_ENTRIES, 1
)
_TRIM = """trim_tasks AS (
    DELETE FROM skillrt_history_tasks
    WHERE seq BETWEEN (SELECT min(seq) FROM skillrt_history_tasks)
        AND GREATEST((SELECT max(seq) FROM skillrt_history_tasks),
                     (SELECT max(seq) FROM t)) - %(limit)s::bigint
      AND task_id NOT IN (SELECT task_id FROM t)
), trim_messages AS (
    DELETE FROM skillrt_history_messages
    WHERE seq BETWEEN (SELECT min(seq) FROM skillrt_history_messages)
        AND GREATEST((SELECT max(seq) FROM skillrt_history_messages),
                     (SELECT max(seq) FROM m)) - %(limit)s::bigint
)"""


@functools.cache
def _statement(checkpoints: str, released: str, history: str) -> Statement:
    """The statement of a round with these parts (``checkpoints``: "", "one", "gone" (one
    deletion) or "many"; ``released``: "", "one" (the one checkpointed task's) or "many";
    ``history``: "", "add" or "trim"). It returns the fenced tasks. Sent prepared through
    libpq (``wire``)."""
    parts = {"": [], "one": [_ONE], "gone": [_ONE_GONE], "many": [_MANY]}[checkpoints]
    parts += {"": [], "one": [_ONE_FREED], "many": [_FREED]}[released]
    entries = _HISTORY_FENCED if checkpoints else _HISTORY
    parts += {"": [], "add": [entries], "trim": [entries, _TRIM]}[history]
    last = "SELECT task_id FROM fenced" if checkpoints else "SELECT NULL::text WHERE false"
    return Statement("WITH " + ",\n".join(parts) + "\n" + last)


class PgRound:
    """What one round writes, gathered by its parts, then sent as one statement (``send``)."""

    __slots__ = ("deletes", "history_limit", "messages", "mine", "saves", "tasks", "trim")

    def __init__(self) -> None:
        self.saves: dict[str, Row] = {}
        self.deletes: dict[str, None] = {}  # an ordered set
        self.tasks: dict[str, tuple[str, str]] = {}  # history: task id -> (session, JSON)
        self.messages: list[tuple[str, str]] = []  # history: (session, JSON)
        self.trim = False
        self.history_limit = 0
        self.mine: frozenset[str] = frozenset()  # tasks this worker runs (``own``)

    def checkpoint(self, rows: list[Row], deletes: list[str]) -> None:
        for row in rows:
            self.deletes.pop(row[0], None)
            self.saves[row[0]] = row
        for task_id in deletes:
            self.saves.pop(task_id, None)
            self.deletes[task_id] = None

    def history(
        self,
        tasks: list[tuple[str, tuple[str, str]]],
        messages: list[tuple[str, str]],
        *,
        limit: int,
        trim: bool,
    ) -> None:
        for task_id, entry in tasks:
            # One row per task, the last entry in its last place: a statement changes a row
            # once (a replaced entry moves to the newest place, as it would one by one).
            self.tasks.pop(task_id, None)
            self.tasks[task_id] = entry
        self.messages += messages
        self.history_limit = limit
        self.trim = self.trim or trim

    @property
    def checkpointed(self) -> bool:
        return bool(self.saves or self.deletes)

    def own(self, runlocks: PgRunLocks | None, released: Sequence[str]) -> None:
        """Note which of the round's tasks this worker runs (holds their lease, or gives it
        back in this round): their writes are fenced unless their lease row still names this
        worker (``_ONE_FENCED``)."""
        if runlocks is None or not (self.saves or self.deletes):
            self.mine = frozenset()
            return
        written = [*self.saves, *self.deletes]
        self.mine = frozenset(runlocks.holding(written)) | frozenset(released).intersection(written)

    def send(self, db: PgDatabase, runlocks: PgRunLocks | None) -> list[str]:
        """Write the round (and the lease releases queued in ``runlocks``) in one statement;
        returns the tasks whose checkpoints were fenced (held by another worker)."""
        released = runlocks.take_releases() if runlocks is not None else []
        self.own(runlocks, released)
        try:
            return self._send(db, released)
        finally:
            if runlocks is not None:
                runlocks.releases_done(released)

    def _send(self, db: PgDatabase, released: list[str]) -> list[str]:
        if not (self.checkpointed or self.tasks or self.messages or released):
            return []
        try:
            return self._execute(db, released)
        except (UserError, db.refused):
            # The statement failed, not the connection (a connection that fails is a
            # ``StoreUnavailable``): no part of it is written. A side write must not fail the
            # checkpoints, nor be lost with them: each is sent again alone.
            if not (self.tasks or self.messages) or not (self.checkpointed or released):
                raise
            history = PgRound()
            history.history(list(self.tasks.items()), self.messages, limit=self.history_limit,
                            trim=self.trim)  # fmt: skip
            self.tasks, self.messages = {}, []
            try:
                history._execute(db, [])
            except Exception as again:
                library_logger("skillrt._state.postgres").error(
                    "agent.error", where="history", error=str(again)
                )
            return self._execute(db, released)

    def _execute(self, db: PgDatabase, released: list[str]) -> list[str]:
        statement, params, durable = self.compose(db, released)
        with db.connection(durable=durable) as conn:
            found = statement.run(conn, params)
        return self.fenced(found)

    def fenced(self, found: Sequence[tuple[str | None, ...]]) -> list[str]:
        """Of the task ids the round's statement returned, those it had checkpoints of."""
        if not found:  # (most rounds: nothing fenced)
            return []
        written = set(self.saves) | set(self.deletes)
        return [str(task_id) for (task_id,) in found if task_id in written]

    def compose(
        self, db: PgDatabase, released: list[str]
    ) -> tuple[Statement, dict[str, bytes], bool]:
        """The round's statement, its parameters, and whether it waits for the WAL flush (it
        has checkpoints)."""
        params: dict[str, bytes] = {"me": text(db.worker_id)}
        checkpoints = ""
        saves, deletes = self.saves, self.deletes
        if saves or deletes:
            if len(saves) == 1 and not deletes and all(r in saves for r in released):
                checkpoints = "one"
            elif not saves and len(deletes) == 1 and all(r in deletes for r in released):
                checkpoints = "gone"
            else:
                checkpoints = "many"
        if checkpoints == "one":
            ((task_id, state, updated, record),) = self.saves.values()
            params |= {"id": text(task_id), "state": text(state),
                       "updated": repr(float(updated)).encode("ascii"),
                       "record": text(record),
                       "mine": b"true" if task_id in self.mine else b"false"}  # fmt: skip
        elif checkpoints == "gone":
            (task_id,) = self.deletes
            params["id"] = text(task_id)
            params["mine"] = b"true" if task_id in self.mine else b"false"
        elif checkpoints == "many":
            rows = list(self.saves.values())
            params |= {
                # Released leases are locked too, all in one order (no deadlock).
                "ids": text_array(sorted(set(saves) | set(deletes) | set(released))),
                "save_ids": text_array([row[0] for row in rows]),
                "states": text_array([row[1] for row in rows]),
                "updated": float8_array([row[2] for row in rows]),
                "records": text_array([row[3] for row in rows]),
                "deletes": text_array(list(self.deletes)),
                "mine": text_array(sorted(self.mine)),
            }
        freed = "one" if released and checkpoints in ("one", "gone") else "many" if released else ""
        if freed == "many":
            params["released"] = text_array(released)
        history = ""
        if self.tasks or self.messages:
            history = "trim" if self.trim else "add"
            # Only the newest ``limit`` of a batch could stay: the older ones are not written.
            limit = self.history_limit
            tasks = list(self.tasks.items())[-limit:]
            said = self.messages[-limit:]
            params |= {
                "task_ids": text_array([task_id for task_id, _ in tasks]),
                "task_sessions": text_array([session for _, (session, _) in tasks]),
                "task_data": text_array([data for _, (_, data) in tasks]),
                "sessions": text_array([session for session, _ in said]),
                "data": text_array([data for _, data in said]),
                "limit": str(limit).encode("ascii"),
            }
        return _statement(checkpoints, freed, history), params, bool(checkpoints)
