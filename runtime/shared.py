"""The shared store (``state_url = "postgresql://…"``): its parts, and failover between workers.

``open_shared`` connects, migrates the schema and returns the four parts the runtime uses in
place of the embedded ones. ``Failover`` is a loop the runtime runs while it is open: every
``lease_s / 3`` it looks for tasks that were running on a worker whose lease expired (killed,
machine lost) and resumes them here from their last completed step. Several workers may look
at once; the lease is taken atomically, so exactly one of them resumes a task.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from skillrt.settings import RuntimeConfig
from skillrt.storage.pg import PgBackend, PgFileLocks, PgHistory, PgRunLocks, PgTaskStore

__all__ = ["RUNNING_STATES", "Failover", "SharedStore", "open_shared"]

# States a task is in while a worker runs it; a record left in one of them without a live
# lease belongs to a worker that died.
RUNNING_STATES = ("UNDERSTANDING", "PLANNING", "EXECUTING")


@dataclass(frozen=True, slots=True)
class SharedStore:
    backend: PgBackend
    store: PgTaskStore
    history: PgHistory
    locks: PgFileLocks
    runlocks: PgRunLocks

    def close(self) -> None:
        self.backend.close()


def open_shared(cfg: RuntimeConfig) -> SharedStore:
    """Connect to ``cfg.state_url`` (blocking; run it off the event loop)."""
    if cfg.state_url is None:  # pragma: no cover - callers check
        raise ValueError("no state_url")
    backend = PgBackend(cfg.state_url)
    return SharedStore(
        backend=backend,
        store=PgTaskStore(backend),
        history=PgHistory(backend, limit=cfg.history_limit),
        locks=PgFileLocks(backend, cfg.root, expiry_s=cfg.lock_expiry_s),
        runlocks=PgRunLocks(backend, lease_s=cfg.lease_s),
    )


class Failover:
    """Resume the running tasks of dead workers (see the module docstring)."""

    def __init__(
        self,
        runlocks: PgRunLocks,
        adopt: Callable[[str], Awaitable[None]],
        *,
        interval_s: float,
    ) -> None:
        self.runlocks = runlocks
        self.adopt = adopt
        self.interval_s = interval_s
        self._loop_task: asyncio.Task[None] | None = None
        self.adopted: list[str] = []

    def start(self) -> None:
        if self._loop_task is None or self._loop_task.done():
            self._loop_task = asyncio.create_task(self._run(), name="skillrt-failover")

    async def sweep(self) -> list[str]:
        """One look: adopt every orphaned running task; returns their ids."""
        found = await asyncio.to_thread(self.runlocks.orphans, RUNNING_STATES)
        taken: list[str] = []
        for task_id in found:
            await self.adopt(task_id)
            taken.append(task_id)
        self.adopted.extend(taken)
        return taken

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            with contextlib.suppress(Exception):  # a failed look is retried next round
                await self.sweep()

    async def stop(self) -> None:
        if self._loop_task is not None:
            self._loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop_task
            self._loop_task = None
