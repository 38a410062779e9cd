"""``PgQueue``: the work queue of a shared store, in ``skillrt_queue``.

A worker *puts* a task (its request as JSON, a priority, its own name as the sender) and
``NOTIFY skillrt_queue`` wakes every worker. A worker with room *takes* up to ``n`` waiting
tasks, highest priority first, oldest first, with ``FOR UPDATE SKIP LOCKED``: workers taking at
the same time never take one task twice, nor wait for each other's rows. A task taken records
the limit keys of the worker that took it (its model, its model server); where a key has a
limit, the takers of that key are serialised by an advisory lock while they count the tasks
running under it, so the limit holds across workers. When the task's turn ends the worker
records its reply (*done*), which wakes the sender (``NOTIFY skillrt_reply``, the request id
negated); the sender also polls while it waits.

A worker that dies leaves its taken rows: ``requeue_dead`` puts back those whose task has no
checkpoint yet and no history entry (nothing of it ran), and ends the others with no reply
(failover resumes them from their journal, or has ended them; their reply goes to the history).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from skillrt._state.postgres.database import clean_text
from skillrt._state.postgres.wire import Statement, text, text_array
from skillrt._state.protocol import QueuedTask

if TYPE_CHECKING:
    from skillrt._state.postgres.control import PgControl
    from skillrt._state.postgres.database import PgDatabase

__all__ = ["PgQueue"]

# The statements a queued task's caller and taker send from the event loop itself
# (``PgDatabase.on_loop``: no thread and back for each; they do not wait for the WAL flush).
_PUT = Statement(
    "WITH q AS (INSERT INTO skillrt_queue (task_id, priority, request, sender) "
    " VALUES (%(task)s::text, %(priority)s::integer, %(request)s::text, %(me)s::text) "
    " RETURNING id) "
    "SELECT id, pg_notify('skillrt_queue', '*') FROM q"
)
_DONE = Statement(
    "WITH d AS (UPDATE skillrt_queue SET done_at = now(), result = %(result)s::text "
    " WHERE id = %(id)s::bigint RETURNING sender) "
    "SELECT pg_notify('skillrt_reply', sender || E'\\t' || %(reply)s::text) FROM d"
)
# The take: one function of the schema (its locks, counts and update in one transaction).
_TAKE = Statement(
    "SELECT id, task_id, request, sender, priority FROM skillrt_take(%(me)s::text, "
    "%(keys)b::text[], %(limited)b::text[], %(limits)s::integer[], %(n)s::integer)"
)
_STATE = Statement(
    "SELECT done_at IS NOT NULL, result FROM skillrt_queue WHERE id = %(id)s::bigint"
)


class PgQueue:
    """The work queue (see the module docstring)."""

    def __init__(self, db: PgDatabase, control: PgControl, *, stale_s: float) -> None:
        self.db = db
        self.control = control
        self.stale_s = stale_s
        # A caller waiting for its reply is woken by a notification; it also looks every
        # ``poll_s`` (a notification missed), less often than the control channel: a busy
        # queue has many callers waiting at once.
        self.poll_s = max(5.0, control.poll_s)

    def listen(self, on_work: Callable[[], None]) -> None:
        """``on_work`` runs on the control channel's loop when work is queued anywhere."""
        self.control.on_work = on_work

    async def put(self, task_id: str, request: str, priority: int) -> int:
        params = {"task": text(clean_text(task_id)), "priority": str(int(priority)).encode(),
                  "request": text(clean_text(request)), "me": text(self.db.worker_id)}  # fmt: skip
        [(found, _)] = await self.db.on_loop(_PUT, params)
        request_id = int(str(found))
        self.control.waiter(-request_id)
        return request_id

    def _take_params(self, n: int, keys: list[str], limits: dict[str, int]) -> dict[str, bytes]:
        limited = sorted(key for key in keys if key in limits)
        return {
            "me": text(self.db.worker_id),
            "keys": text_array(clean_text(list(keys))),
            "limited": text_array(clean_text(limited)),
            "limits": ("{" + ",".join(str(int(limits[key])) for key in limited) + "}").encode(),
            "n": str(int(n)).encode(),
        }

    @staticmethod
    def _taken(rows: list[tuple[str | None, ...]]) -> list[QueuedTask]:
        found = [(int(str(i)), str(t), str(r), str(s), int(str(p))) for i, t, r, s, p in rows]
        found.sort(key=lambda row: (-row[4], row[0]))
        return [QueuedTask(*row[:4]) for row in found]

    def take_sync(self, n: int, keys: list[str], limits: dict[str, int]) -> list[QueuedTask]:
        """Take up to ``n`` waiting tasks for this worker, within the limits of its ``keys``:
        one round trip (``skillrt_take``, schema 5: the limited keys' advisory locks, their
        counts and the taking in one transaction)."""
        if n <= 0:
            return []
        with self.db.connection(durable=False) as conn:
            rows = _TAKE.run(conn, self._take_params(n, keys, limits))
        return self._taken(rows)

    async def take(self, n: int, keys: list[str], limits: dict[str, int]) -> list[QueuedTask]:
        """``take_sync`` sent by the event loop itself (``PgDatabase.on_loop``: no thread)."""
        if n <= 0:
            return []
        return self._taken(await self.db.on_loop(_TAKE, self._take_params(n, keys, limits)))

    async def done(self, request_id: int, result: str | None) -> None:
        """Record a taken task's reply and wake the worker that queued it."""
        params = {
            "result": None if result is None else text(clean_text(result)),
            "id": str(int(request_id)).encode(),
            "reply": str(-int(request_id)).encode(),
        }
        await self.db.on_loop(_DONE, params)

    async def result(self, request_id: int) -> str | None:
        """Wait until the task is done; its reply (None: it ended without one here)."""
        event = self.control.waiter(-request_id)
        try:
            while True:
                done, result = await self._state(request_id)
                if done:
                    return result
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.poll_s):
                        await event.wait()
                event.clear()
        finally:
            self.control.forget(-request_id)

    async def _state(self, request_id: int) -> tuple[bool, str | None]:
        rows = await self.db.on_loop(_STATE, {"id": str(int(request_id)).encode()})
        return (True, None) if not rows else (rows[0][0] == "t", rows[0][1])

    async def withdraw(self, request_id: int) -> bool:
        """Take a task back out of the queue if nobody took it yet."""

        def withdraw() -> bool:
            with self.db.connection(durable=False) as conn:
                row = conn.execute(
                    "UPDATE skillrt_queue SET done_at = now() WHERE id = %s "
                    "AND taken_at IS NULL RETURNING id",
                    (request_id,),
                ).fetchone()
            return row is not None

        return await self.db.off_loop(withdraw)

    async def cancel_waiting(self, task_id: str, result: str) -> bool:
        """End a task still waiting in the queue with ``result`` as its reply (its caller hears
        it at once); False if it is not waiting (taken, done, or never queued)."""

        def cancel() -> bool:
            with self.db.connection(durable=False) as conn:
                row = conn.execute(
                    "WITH d AS (UPDATE skillrt_queue SET done_at = now(), result = %s "
                    " WHERE task_id = %s AND taken_at IS NULL AND done_at IS NULL "
                    " RETURNING id, sender) "
                    "SELECT pg_notify('skillrt_reply', sender || E'\t' || -id) FROM d",
                    clean_text((result, task_id)),
                ).fetchone()
            return row is not None

        return await self.db.off_loop(cancel)

    def requeue_dead(self) -> int:
        """Put back the tasks taken by workers that died before any of it was checkpointed;
        end with no reply those that were (failover resumes them); forget the rows finished
        an hour ago. Blocking.

        A task with no checkpoint but a history entry ended (on another worker, after
        failover took it from one that froze): it is not put back. It was: its checkpoint
        deleted at its end, the queue read it as never started, and a third worker ran the
        whole task again from its first step."""
        dead = (
            "q.done_at IS NULL AND q.taken_at IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "
            "skillrt_workers w WHERE w.worker_id = q.taken_by AND "
            "w.heartbeat_at > now() - make_interval(secs => %s))"
        )
        with self.db.connection(durable=False) as conn, conn.transaction():
            cur = conn.execute(
                # S608: ``dead`` is a constant of this function, never input.
                "UPDATE skillrt_queue q SET taken_by = NULL, taken_at = NULL, "  # noqa: S608
                f"limit_keys = '{{}}' WHERE {dead} AND NOT EXISTS (SELECT 1 FROM skillrt_tasks t "
                "WHERE t.task_id = q.task_id) AND NOT EXISTS (SELECT 1 FROM "
                "skillrt_history_tasks h WHERE h.task_id = q.task_id)",
                (self.stale_s,),
            )
            requeued = cur.rowcount
            conn.execute(
                f"UPDATE skillrt_queue q SET done_at = now() WHERE {dead}",  # noqa: S608
                (self.stale_s,),
            )
            if requeued:
                conn.execute("SELECT pg_notify('skillrt_queue', '*')")
            # Replies are read within seconds; an hour-old finished row is kept for nobody.
            conn.execute("DELETE FROM skillrt_queue WHERE done_at < now() - interval '1 hour'")
        return int(requeued or 0)

    def close(self) -> None:
        """Nothing of its own to close."""
