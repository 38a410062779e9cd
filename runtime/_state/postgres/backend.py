"""``PostgresBackend``: the state backend several workers share, on one PostgreSQL database.

Every call reaches a database server, so the coroutines of the protocol run their calls in a
thread; the group commit applies its rounds in the committer's thread as on SQLite.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Protocol

import structlog

from skillrt._state.committer import Committer
from skillrt._state.postgres.database import PgDatabase
from skillrt._state.postgres.history import PgHistory
from skillrt._state.postgres.leases import PgRunLocks
from skillrt._state.postgres.locks import PgFileLocks
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
        self.store = PgTaskStore(database)
        self.history = PgHistory(database, limit=cfg.history_limit)
        self.locks = PgFileLocks(database, cfg.root, expiry_s=cfg.lock_expiry_s)
        self.runlocks = PgRunLocks(database, lease_s=cfg.lease_s)
        self.committer = Committer(self.store, logger=logger, on_reset=on_reset)

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
        database = PgDatabase(cfg.state_url)
        opened.append(database)
        try:
            return cls(database, cfg, logger=logger, on_reset=on_reset)
        except BaseException:
            database.close()
            opened.remove(database)
            raise

    # --- locks (each a round trip: in a thread) ----------------------------------------------

    async def hold(self, task_id: str) -> bool:
        return await asyncio.to_thread(self.runlocks.hold, task_id)

    async def release(self, task_id: str) -> None:
        await asyncio.to_thread(self.locks.release_task_locks, task_id)
        await asyncio.to_thread(self.runlocks.release, task_id)

    def release_soon(self, task_id: str) -> None:
        """Nothing here: a database's locks are released by the runner's end (``release``)."""

    async def running_elsewhere(self, task_id: str) -> bool:
        return await asyncio.to_thread(self.runlocks.running_elsewhere, task_id)

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
        return await asyncio.to_thread(self.store.get, task_id)

    def orphans(self, states: tuple[str, ...]) -> list[str]:
        return self.runlocks.orphans(states)

    def close(self) -> None:
        """Write what is queued, then close the parts; the database (its pools) last."""
        try:
            self.committer.close()
        finally:
            for part in (self.store, self.history, self.locks, self.runlocks, self.database):
                part.close()
