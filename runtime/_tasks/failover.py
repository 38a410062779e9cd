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
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skillrt._state.embedded.checkpoints import TaskStore
from skillrt._state.postgres.store import PgBackend, PgFileLocks, PgHistory, PgRunLocks, PgTaskStore
from skillrt._state.records import TaskRecord
from skillrt._tasks.tasktable import TaskTable
from skillrt.outcomes import is_resumable
from skillrt.settings import RuntimeConfig

if TYPE_CHECKING:
    from skillrt.services import Services

__all__ = ["RUNNING_STATES", "Failover", "SharedStore", "open_shared", "read_shared"]

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


def read_shared(
    store: TaskStore,
    tasks: TaskTable,
    cfg: RuntimeConfig,
    clock: Callable[[], float],
    task_id: str | None = None,
) -> dict[str, TaskRecord | None]:
    """What the shared store holds now, for ``TaskTable.sync``: one task, or every task in the
    resume window and every task held here (None: the store no longer has it). Blocking: it
    reads the database, so call it off the event loop where you can; it changes nothing."""
    if task_id is not None:
        return {task_id: store.get(task_id)}
    window = cfg.checkpoint_max_age_h * 3600
    found: dict[str, TaskRecord | None] = {
        r.id: r for r in store.load_recent(max_age_s=window, now=clock()).records
    }
    for held in list(tasks):
        found.setdefault(held, None)
    return found


class Failover:
    """Resume the running tasks of dead workers (see the module docstring)."""

    def __init__(
        self,
        services: Services,
        tasks: TaskTable,
        resume: Callable[[str], Coroutine[Any, Any, None]],
        *,
        interval_s: float,
    ) -> None:
        if services.shared is None:  # pragma: no cover - only a shared store has leases
            raise ValueError("failover needs the shared store's leases")
        self.runlocks = services.shared.runlocks
        self.store = services.store
        self.tasks = tasks
        self.resume = resume
        self.interval_s = interval_s
        self._loop_task: asyncio.Task[None] | None = None
        self._resumed: set[asyncio.Task[None]] = set()
        self.adopted: list[str] = []

    def start(self) -> None:
        if self._loop_task is None or self._loop_task.done():
            self._loop_task = asyncio.create_task(self._run(), name="skillrt-failover")

    async def sweep(self) -> list[str]:
        """One look: adopt every orphaned running task; returns their ids."""
        found = await asyncio.to_thread(self.runlocks.orphans, RUNNING_STATES)
        taken = [task_id for task_id in found if await self.adopt(task_id)]
        self.adopted.extend(taken)
        return taken

    async def adopt(self, task_id: str) -> bool:
        """Take over a task whose worker died and run it on here.

        The lease is taken first, atomically: of several workers looking, one wins. The record
        is read afresh, so the journal is the dead worker's last committed one.
        """
        local = self.tasks.live(task_id)
        if local is not None and local.running:
            return False
        if not await asyncio.to_thread(self.runlocks.hold, task_id):
            return False  # another worker was faster
        record = await asyncio.to_thread(self.store.get, task_id)
        # The resume takes the lease again (it is ours: holding it twice is fine) and keeps it.
        if record is None or not is_resumable(record):
            await asyncio.to_thread(self.runlocks.release, task_id)
            return False
        self.tasks.pop(task_id)  # any copy here is older than the store's
        self.tasks.restore([record])
        runner = asyncio.create_task(self.resume(task_id))
        self._resumed.add(runner)
        runner.add_done_callback(self._resumed.discard)
        return True

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
