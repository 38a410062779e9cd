"""``PgRunLocks``: run locks as leases.

A worker holds a lease per task it runs and a thread renews them every ``lease_s / 3``; when a
worker dies its leases expire after ``lease_s`` and another worker may take the tasks over
(``orphans``). A task's end gives its lease back with the next commit round
(``release_later``), not in a round trip of its own.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from skillrt._state.postgres.database import clean_text
from skillrt._state.postgres.wire import Rows, Statement, text, text_array
from skillrt.exceptions import UserError

if TYPE_CHECKING:
    from skillrt._state.postgres.database import PgDatabase

__all__ = ["PgRunLocks"]

# The holds of one turn of the loop: every lease free, expired or already ours is taken (a
# task's start waits for it; sent prepared through libpq, ``wire``).
_HOLD = Statement(
    "INSERT INTO skillrt_leases (task_id, worker_id, expires_at) "
    "SELECT unnest(%(ids)b::text[]), %(me)s::text, "
    "now() + make_interval(secs => %(lease)s::float8) "
    "ON CONFLICT (task_id) DO UPDATE SET worker_id = EXCLUDED.worker_id, "
    "expires_at = EXCLUDED.expires_at "
    "WHERE skillrt_leases.worker_id = EXCLUDED.worker_id "
    "OR skillrt_leases.expires_at <= now() RETURNING task_id"
)


class PgRunLocks:
    """Run locks as leases (the ``RunLocks`` API plus ``orphans``); a thread renews them."""

    def __init__(self, db: PgDatabase, *, lease_s: float = 30.0) -> None:
        if lease_s <= 0:
            raise UserError(f"lease_s must be positive, got {lease_s}")
        self.db = db
        self.lease_s = lease_s
        self._held: set[str] = set()
        self._releasing: set[str] = set()  # lease deletions for the next commit round
        self._in_flight: set[str] = set()  # ... taken by a round, not yet written
        self._lost: set[str] = set()  # held here, their lease another worker's (``renew``)
        self._fresh: set[str] = set()  # held (again) since the renewal began: not lost
        self._mutex = threading.Lock()
        self._stop = threading.Event()
        self.renewed_at = time.monotonic()
        self._thread = threading.Thread(
            target=self._renew_loop, name="skillrt-lease-renewal", daemon=True
        )
        self._thread.start()

    def hold(self, task_id: str) -> bool:
        """Take (or keep) the task's lease; False while another live worker holds it."""
        return task_id in self.hold_many([task_id])

    def hold_many(self, task_ids: Sequence[str]) -> set[str]:
        """``hold`` for many tasks in one statement (one round trip): the ones now held."""
        wanted = sorted({clean_text(task_id) for task_id in task_ids})
        if not wanted:
            return set()
        params = {"ids": text_array(wanted), "me": text(self.db.worker_id),
                  "lease": repr(float(self.lease_s)).encode("ascii")}  # fmt: skip
        with self.db.connection(durable=False) as conn:
            rows = _HOLD.run(conn, params)
        taken = {task_id for (task_id,) in rows}
        held = {task_id for task_id in task_ids if clean_text(task_id) in taken}
        with self._mutex:
            self._held |= held
            self._fresh |= held
        return held

    async def hold_many_async(self, task_ids: Sequence[str]) -> set[str]:
        """``hold_many`` sent by the event loop itself (``PgDatabase.on_loop``: no thread
        hop)."""
        wanted = sorted({clean_text(task_id) for task_id in task_ids})
        if not wanted:
            return set()
        params = {"ids": text_array(wanted), "me": text(self.db.worker_id),
                  "lease": repr(float(self.lease_s)).encode("ascii")}  # fmt: skip
        taken = {task_id for (task_id,) in await self.db.on_loop(_HOLD, params)}
        held = {task_id for task_id in task_ids if clean_text(task_id) in taken}
        with self._mutex:
            self._held |= held
            self._fresh |= held
        return held

    def hold_many_now(
        self,
        task_ids: Sequence[str],
        done: Callable[[set[str] | None, BaseException | None], None],
    ) -> bool:
        """``hold_many_async`` sent now on the running loop's session, without a coroutine
        (``PgDatabase.on_loop_now``): ``done(held, None)`` or ``done(None, error)`` on the loop.
        False, with nothing sent: ask ``hold_many_async``."""
        try:
            wanted = sorted({clean_text(task_id) for task_id in task_ids})
            params = {"ids": text_array(wanted), "me": text(self.db.worker_id),
                      "lease": repr(float(self.lease_s)).encode("ascii")}  # fmt: skip
        except Exception as exc:  # an id no statement can carry (a lone surrogate)
            done(None, exc)
            return True

        def answered(rows: Rows | None, exc: BaseException | None) -> None:
            if rows is None:
                done(None, exc)
                return
            taken = {task_id for (task_id,) in rows}
            held = {task_id for task_id in task_ids if clean_text(task_id) in taken}
            with self._mutex:
                self._held |= held
                self._fresh |= held
            done(held, None)

        if not wanted:
            done(set(), None)
            return True
        return self.db.on_loop_now(_HOLD, params, answered)

    def holding(self, task_ids: Sequence[str]) -> list[str]:
        """Of ``task_ids``, those this worker runs (holds the lease of, as far as it knows):
        their writes are fenced once the lease is gone (``rounds``)."""
        with self._mutex:
            return [task_id for task_id in task_ids if task_id in self._held]

    def release(self, task_id: str) -> None:
        with self._mutex:
            self._held.discard(task_id)
        with self.db.connection(durable=False) as conn:
            conn.execute(
                "DELETE FROM skillrt_leases WHERE task_id = %s AND worker_id = %s",
                (clean_text(task_id), self.db.worker_id),
            )

    # --- releases that ride on the next commit round ------------------------------------------
    # A task's end releases its lease: rather than a round trip of its own, the deletion goes
    # in the next commit round's statement (the one its ending's reply waits for). The lease
    # stops being renewed at once, so a deletion lost with the database still ends it in
    # lease_s.

    def release_later(self, task_id: str) -> None:
        """Stop renewing the lease and have the next commit round delete it."""
        with self._mutex:
            self._held.discard(task_id)
            self._releasing.add(task_id)

    def releasing(self, task_id: str) -> bool:
        """Is a deletion of this task's lease queued or being written? (Hold it again after.)"""
        with self._mutex:
            return task_id in self._releasing or task_id in self._in_flight

    def pending(self) -> bool:
        """Are releases waiting for a round?"""
        with self._mutex:
            return bool(self._releasing)

    def take_releases(self) -> list[str]:
        """The queued deletions, now in flight (``releases_done`` once their round ends)."""
        with self._mutex:
            if not self._releasing:  # most rounds: a step's
                return []
            released, self._releasing = self._releasing, set()
            self._in_flight |= released
        return sorted(clean_text(list(released)))

    def releases_done(self, released: Sequence[str]) -> None:
        if released:
            with self._mutex:
                self._in_flight.difference_update(released)

    def release_queued(self) -> None:
        """Write the queued deletions now, in one statement (a round without checkpoints;
        inside a ``grouped`` round, with that round)."""
        with self.db.grouped(self):
            pass

    def running_elsewhere(self, task_id: str) -> bool:
        with self.db.connection(durable=False) as conn:
            row = conn.execute(
                "SELECT 1 FROM skillrt_leases WHERE task_id = %s AND worker_id <> %s "
                "AND expires_at > now()",
                (clean_text(task_id), self.db.worker_id),
            ).fetchone()
        return row is not None

    def held_elsewhere(self, task_ids: Sequence[str]) -> set[str]:
        """Of ``task_ids``, those another live worker holds: ``running_elsewhere`` for many
        tasks in one round trip (listing resumable tasks asks it of each)."""
        if not task_ids:
            return set()
        with self.db.connection(durable=False) as conn:
            rows = conn.execute(
                "SELECT task_id FROM skillrt_leases WHERE task_id = ANY(%b::text[]) "
                "AND worker_id <> %s "
                "AND expires_at > now()",
                (clean_text(list(task_ids)), self.db.worker_id),
            ).fetchall()
        return {task_id for (task_id,) in rows}

    def orphans(self, states: tuple[str, ...]) -> list[str]:
        """Tasks in one of ``states`` that no live worker holds (their worker died), and those
        whose lease names this worker while it does not run them (this worker restarted: its
        own tasks are taken back at once, not ``lease_s`` later; or an outage cut them off).
        The caller skips the ones it runs."""
        with self.db.connection(durable=False) as conn:
            rows = conn.execute(
                "SELECT t.task_id FROM skillrt_tasks t WHERE t.state = ANY(%b::text[]) "
                "AND NOT EXISTS "
                "(SELECT 1 FROM skillrt_leases l WHERE l.task_id = t.task_id "
                " AND l.expires_at > now() AND l.worker_id <> %s) ORDER BY t.updated_at",
                (list(states), self.db.worker_id),
            ).fetchall()
        return [task_id for (task_id,) in rows]

    def renew(self) -> None:
        """Push back the leases of the tasks this worker runs, and its heartbeat. (Leases under
        its name that it no longer runs, left by an outage or an earlier life, are not
        renewed: failover takes those tasks back.)

        A task whose lease row no longer names this worker (taken over while this worker was
        frozen or cut off, then maybe ended) is noted for ``lost``: the runtime stops it at
        once. Before, nothing noticed until the task's next save was refused, so its step ran
        its body to the end (a model call, a fetch, a write) for a task another worker owned."""
        with self._mutex:
            held = list(self._held)
            self._fresh = set()
        # One statement (autocommit): no row lock is held between round trips. As a
        # transaction of two, a worker frozen (SIGSTOP) between them kept its lease rows
        # locked, and the worker taking its tasks over waited on them until it thawed.
        with self.db.connection(durable=False) as conn:
            rows = conn.execute(
                "WITH beat AS (UPDATE skillrt_workers SET heartbeat_at = now() "
                "WHERE worker_id = %s) "
                "UPDATE skillrt_leases SET expires_at = now() + make_interval(secs => %s) "
                "WHERE worker_id = %s AND task_id = ANY(%b::text[]) RETURNING task_id",
                (self.db.worker_id, self.lease_s, self.db.worker_id, clean_text(held)),
            ).fetchall()
        self.renewed_at = time.monotonic()
        renewed = {task_id for (task_id,) in rows}
        # A task that ended meanwhile gave its lease back (no longer held), and one held again
        # since (ended, then resumed here) has a new lease: neither is lost.
        with self._mutex:
            gone = {t for t in held if clean_text(t) not in renewed}
            self._lost |= (gone & self._held) - self._fresh

    def lost(self) -> list[str]:
        """The tasks held here whose lease another worker took, found by the renewals since the
        last call (each task once a call: it is found again while it still runs here)."""
        with self._mutex:
            lost, self._lost = self._lost, set()
        return sorted(lost)

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.lease_s / 3):
            if not self.db.available:
                continue  # the probe finds when the server is back; renew then
            with contextlib.suppress(Exception):  # a missed renewal is retried next round
                self.renew()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        with contextlib.suppress(Exception):
            self.release_queued()
        with self._mutex:
            held, self._held = list(self._held), set()
        for task_id in held:
            with contextlib.suppress(Exception):
                self.release(task_id)
