"""``PostgresBackend``: the state backend several workers share, on one PostgreSQL database.

Every call reaches a database server, so the coroutines of the protocol run their calls in a
thread or on a session the event loop drives itself; the group commit's rounds are sent by the
event loop (``looprounds``), by the committer's thread while the loop's session connects.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from typing import Protocol

import structlog

from skillrt._state.committer import Committer
from skillrt._state.postgres.control import PgControl
from skillrt._state.postgres.database import PgDatabase, default_worker_id
from skillrt._state.postgres.history import PgHistory
from skillrt._state.postgres.leases import PgRunLocks
from skillrt._state.postgres.locks import PgFileLocks
from skillrt._state.postgres.queue import PgQueue
from skillrt._state.postgres.tasks import PgTaskStore
from skillrt._state.protocol import LazyLoad, LazyRecord, LoadResult
from skillrt._state.records import TaskRecord, parse_record
from skillrt.settings import RuntimeConfig

__all__ = ["PostgresBackend"]


class _Closable(Protocol):
    def close(self) -> None: ...


class PostgresBackend:
    """The ``StateBackend`` of ``state_url`` (see the module docstring)."""

    shared = True
    journaled = True

    def __init__(
        self,
        database: PgDatabase,
        cfg: RuntimeConfig,
        *,
        logger: structlog.stdlib.BoundLogger,
        on_reset: Callable[[], None],
    ) -> None:
        self.database = database
        self.runlocks = PgRunLocks(database, lease_s=cfg.lease_s)
        self.store = PgTaskStore(database, self.runlocks)
        self.history = PgHistory(database, limit=cfg.history_limit)
        self.locks = PgFileLocks(
            database, cfg.root, expiry_s=cfg.lock_expiry_s, runlocks=self.runlocks
        )
        self.control = PgControl(database, poll_s=min(1.0, cfg.lease_s / 3))
        self.queue = PgQueue(database, self.control, stale_s=cfg.lease_s)
        self.committer = Committer(self.store, logger=logger, on_reset=on_reset)
        # A round with no checkpoint to carry the queued lease releases deletes them itself.
        self.committer.add_side(self._releases)
        self._holds: dict[str, list[asyncio.Future[bool]]] = {}  # asked this turn of the loop
        self._holding: set[asyncio.Task[None]] = set()

    @property
    def available(self) -> bool:
        return self.database.available

    @property
    def worker_id(self) -> str:
        return self.database.worker_id

    @classmethod
    def open(
        cls,
        cfg: RuntimeConfig,
        *,
        logger: structlog.stdlib.BoundLogger,
        on_reset: Callable[[], None],
        opened: list[_Closable],
    ) -> PostgresBackend:
        """Connect to ``cfg.state_url`` and migrate its schema (blocking)."""
        if cfg.state_url is None:  # pragma: no cover - open_state checks
            raise ValueError("no state_url")
        database = PgDatabase(
            cfg.state_url,
            worker_id=cfg.worker_id,
            identity=default_worker_id(str(cfg.state_path)),
            timeout_s=cfg.store_timeout_s,
            stale_s=cfg.lease_s,
        )
        opened.append(database)
        try:
            return cls(database, cfg, logger=logger, on_reset=on_reset)
        except BaseException:
            database.close()
            opened.remove(database)
            raise

    # --- locks ----------------------------------------------------------------------------------
    # The holds asked in one turn of the loop go in one statement (a thousand tasks started at
    # once are one round trip, not a thousand thread hand-offs queueing for four connections).
    # A release rides on the next commit round: the one its task's ending is written in.
    # (A new task's lease is not put off to its first commit round: until that round is
    # written, a worker would show the task running while no other worker could find its
    # holder to send it a pause or an abort.)

    async def hold(self, task_id: str) -> bool:
        while self.runlocks.releasing(task_id):  # its release must land before the new hold
            self.committer.nudge()
            await self.committer.settled()
        return await self._ask_hold(task_id)

    def hold_soon(self, task_id: str) -> asyncio.Future[bool] | None:
        """The lease asked now (with this turn's others, sent at its end); None while the
        task's release is still to land (``hold`` waits for it)."""
        return None if self.runlocks.releasing(task_id) else self._ask_hold(task_id)

    def _ask_hold(self, task_id: str) -> asyncio.Future[bool]:
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[bool] = loop.create_future()
        if not self._holds:
            loop.call_soon(self._send_holds)
        self._holds.setdefault(task_id, []).append(waiter)
        return waiter

    def _send_holds(self) -> None:
        asked, self._holds = self._holds, {}
        # Sent at once on the loop's session where it is free (no task, no coroutines: the
        # waiters are told in the turn the answer comes); else in a task that waits its turn
        # there (or connects it first).
        if self.runlocks.hold_many_now(list(asked), functools.partial(self._held, asked)):
            return
        sending = asyncio.get_running_loop().create_task(self._hold_many(asked))
        self._holding.add(sending)  # a reference until it ends
        sending.add_done_callback(self._holding.discard)

    @staticmethod
    def _held(
        asked: dict[str, list[asyncio.Future[bool]]],
        held: set[str] | None,
        exc: BaseException | None,
    ) -> None:
        """Tell the waiters of ``asked`` whether they hold their task's lease (or ``exc``)."""
        for task_id, waiters in asked.items():
            for waiter in waiters:
                if waiter.done():  # its task stopped waiting (cancelled)
                    continue
                if exc is not None:
                    waiter.set_exception(exc)
                else:
                    waiter.set_result(held is not None and task_id in held)

    async def _hold_many(self, asked: dict[str, list[asyncio.Future[bool]]]) -> None:
        try:
            held = await self.runlocks.hold_many_async(list(asked))
        except BaseException as exc:
            for waiters in asked.values():
                for waiter in waiters:
                    if not waiter.done():
                        waiter.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
            return
        self._held(asked, held, None)

    async def release(self, task_id: str) -> None:
        """Release the task's post locks (a round trip only when it holds some) and queue the
        deletion of its lease for the next commit round (see ``PgRunLocks.release_later``)."""
        try:
            if self.locks.held_by(task_id):
                await self.database.off_loop(self.locks.release_task_locks, task_id)
        finally:
            self.runlocks.release_later(task_id)
            self.committer.nudge()

    def _releases(self) -> Callable[[], None] | None:
        """The side writer: a round for the queued lease releases (written with the round's
        statement; alone when the round has nothing else)."""
        return self.runlocks.release_queued if self.runlocks.pending() else None

    def release_soon(self, task_id: str) -> None:
        """Nothing here: a database's locks are released by the runner's end (``release``)."""

    @property
    def releases_with_ending(self) -> bool:
        return True  # the lease is deleted in the ending's round (``release``)

    async def running_elsewhere(self, task_id: str) -> bool:
        return await self.database.off_loop(self.runlocks.running_elsewhere, task_id)

    def held_elsewhere(self, task_ids: Sequence[str]) -> set[str]:
        return self.runlocks.held_elsewhere(task_ids) if task_ids else set()

    # --- records ------------------------------------------------------------------------------

    def load_resumable(self, *, max_age_s: float, now: float) -> LoadResult | LazyLoad:
        return self.store.load_recent(max_age_s=max_age_s, now=now)

    def parse(self, record: LazyRecord) -> TaskRecord | None:
        return parse_record(record.id, record.text)

    def newer(
        self, held: Sequence[str], task_id: str | None = None, *, max_age_s: float, now: float
    ) -> dict[str, TaskRecord | None]:
        """Blocking: it reads the database, so call it off the event loop where you can."""
        if task_id is not None:
            return {task_id: self.store.get(task_id)}
        found: dict[str, TaskRecord | None] = {
            r.id: r for r in self.store.load_recent(max_age_s=max_age_s, now=now).records
        }
        for task in held:
            found.setdefault(task, None)
        return found

    async def read(self, task_id: str) -> TaskRecord | None:
        return await self.database.off_loop(self.store.get, task_id)

    def orphans(self, states: tuple[str, ...]) -> list[str]:
        return self.runlocks.orphans(states)

    def lost(self) -> list[str]:
        return self.runlocks.lost()

    def close(self) -> None:
        """Write what is queued, then close the parts; the database (its pools) last."""
        try:
            self.committer.close()
        finally:
            parts = (self.queue, self.control, self.store, self.history, self.locks,
                     self.runlocks)  # fmt: skip
            for part in (*parts, self.database):
                part.close()
