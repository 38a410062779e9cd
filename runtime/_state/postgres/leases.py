"""``PgRunLocks``: run locks as leases.

A worker holds a lease per task it runs and a thread renews them every ``lease_s / 3``; when a
worker dies its leases expire after ``lease_s`` and another worker may take the tasks over
(``orphans``).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from skillrt._state.postgres.database import clean_text
from skillrt.exceptions import UserError

if TYPE_CHECKING:
    from skillrt._state.postgres.database import PgDatabase

__all__ = ["PgRunLocks"]


class PgRunLocks:
    """Run locks as leases (the ``RunLocks`` API plus ``orphans``); a thread renews them."""

    def __init__(self, db: PgDatabase, *, lease_s: float = 30.0) -> None:
        if lease_s <= 0:
            raise UserError(f"lease_s must be positive, got {lease_s}")
        self.db = db
        self.lease_s = lease_s
        self._held: set[str] = set()
        self._mutex = threading.Lock()
        self._stop = threading.Event()
        self.renewed_at = time.monotonic()
        self._thread = threading.Thread(
            target=self._renew_loop, name="skillrt-lease-renewal", daemon=True
        )
        self._thread.start()

    def hold(self, task_id: str) -> bool:
        """Take (or keep) the task's lease; False while another live worker holds it."""
        with self.db.connection(durable=False) as conn:
            row = conn.execute(
                "INSERT INTO skillrt_leases (task_id, worker_id, expires_at) "
                "VALUES (%s, %s, now() + make_interval(secs => %s)) "
                "ON CONFLICT (task_id) DO UPDATE SET worker_id = EXCLUDED.worker_id, "
                "expires_at = EXCLUDED.expires_at "
                "WHERE skillrt_leases.worker_id = EXCLUDED.worker_id "
                "OR skillrt_leases.expires_at <= now() RETURNING task_id",
                (clean_text(task_id), self.db.worker_id, self.lease_s),
            ).fetchone()
        if row is None:
            return False
        with self._mutex:
            self._held.add(task_id)
        return True

    def release(self, task_id: str) -> None:
        with self._mutex:
            self._held.discard(task_id)
        with self.db.connection(durable=False) as conn:
            conn.execute(
                "DELETE FROM skillrt_leases WHERE task_id = %s AND worker_id = %s",
                (clean_text(task_id), self.db.worker_id),
            )

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
                "SELECT task_id FROM skillrt_leases WHERE task_id = ANY(%s) AND worker_id <> %s "
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
                "SELECT t.task_id FROM skillrt_tasks t WHERE t.state = ANY(%s) AND NOT EXISTS "
                "(SELECT 1 FROM skillrt_leases l WHERE l.task_id = t.task_id "
                " AND l.expires_at > now() AND l.worker_id <> %s) ORDER BY t.updated_at",
                (list(states), self.db.worker_id),
            ).fetchall()
        return [task_id for (task_id,) in rows]

    def renew(self) -> None:
        """Push back the leases of the tasks this worker runs, and its heartbeat. (Leases under
        its name that it no longer runs, left by an outage or an earlier life, are not
        renewed: failover takes those tasks back.)"""
        with self._mutex:
            held = list(self._held)
        with self.db.connection(durable=False) as conn, conn.transaction():
            conn.execute(
                "UPDATE skillrt_leases SET expires_at = now() + make_interval(secs => %s) "
                "WHERE worker_id = %s AND task_id = ANY(%s)",
                (self.lease_s, self.db.worker_id, held),
            )
            conn.execute(
                "UPDATE skillrt_workers SET heartbeat_at = now() WHERE worker_id = %s",
                (self.db.worker_id,),
            )
        self.renewed_at = time.monotonic()

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.lease_s / 3):
            if not self.db.available:
                continue  # the probe finds when the server is back; renew then
            with contextlib.suppress(Exception):  # a missed renewal is retried next round
                self.renew()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        with self._mutex:
            held, self._held = list(self._held), set()
        for task_id in held:
            with contextlib.suppress(Exception):
                self.release(task_id)
