"""``EmbeddedBackend``: the state backend of one machine, in SQLite files in the state folder.

Checkpoints in a diskcache (``checkpoints/``, or in memory with ``checkpoints = false``), the
history in ``history/history.db``, run locks as byte-range OS locks in ``locks/running``, and
post locks as OS locks beside the blog. Every call is a local file operation, quick enough to
make on the event loop; the group commit's fsyncs run in the committer's thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import structlog

from skillrt._io.faults import moved_aside
from skillrt._state.committer import Committer
from skillrt._state.embedded.checkpoints import CheckpointStore, MemoryCheckpointStore
from skillrt._state.embedded.history import History, MemoryHistory
from skillrt._state.embedded.runlocks import RunLocks
from skillrt._state.protocol import LazyLoad, LazyRecord, LoadResult, TaskStore
from skillrt._state.records import TaskRecord, parse_record
from skillrt.blog.locks import FileLockManager, blog_lock_dir
from skillrt.settings import RuntimeConfig

__all__ = ["EmbeddedBackend"]


class _Closable(Protocol):
    def close(self) -> None: ...


class EmbeddedBackend:
    """The ``StateBackend`` of the state folder (see the module docstring)."""

    shared = False
    control = None  # one process: requests about a task are handled where it runs
    queue = None  # one process: a task runs where it was started
    available = True  # local files: a fault is reported by the call that meets it

    def __init__(
        self,
        *,
        store: TaskStore,
        history: History | MemoryHistory,
        locks: FileLockManager,
        runlocks: RunLocks | None,
        committer: Committer,
        journaled: bool,
        owned: Sequence[_Closable],
    ) -> None:
        self.store = store
        self.history = history
        self.locks = locks
        self.runlocks = runlocks
        self.committer = committer
        self.journaled = journaled
        self._owned = tuple(owned)

    @classmethod
    def open(
        cls,
        cfg: RuntimeConfig,
        state: Path,
        *,
        given: TaskStore | None,
        logger: structlog.stdlib.BoundLogger,
        on_reset: Callable[[], None],
        opened: list[_Closable],
    ) -> EmbeddedBackend:
        """Open the parts in ``state`` (blocking). What opened is appended to ``opened``, so a
        caller that fails later can close it; ``given``: a store the host made."""
        store = given
        if store is None:
            journal = state / "checkpoints"
            store = CheckpointStore(journal) if cfg.checkpoints else MemoryCheckpointStore()
        opened.append(store)  # a store the host lent is closed with the rest too
        limit = cfg.history_limit
        history = (
            History(state / "history", limit=limit)
            if cfg.checkpoints
            else MemoryHistory(limit=limit)
        )
        opened.append(history)
        # A post's OS lock lives with the blog, not with this runtime's state: two runtimes whose
        # state folders differ must still exclude each other on one post.
        locks = FileLockManager(blog_lock_dir(cfg.root), expiry_s=cfg.lock_expiry_s)
        opened.append(locks)
        # Only durable tasks can be resumed by another process, so only they need run locks.
        runlocks = RunLocks(state / "locks" / "running") if cfg.checkpoints else None
        if runlocks is not None:
            opened.append(runlocks)
        committer = Committer(
            store,
            threaded=not isinstance(store, MemoryCheckpointStore),
            logger=logger,
            on_reset=on_reset,
        )
        return cls(
            store=store,
            history=history,
            locks=locks,
            runlocks=runlocks,
            committer=committer,
            journaled=cfg.checkpoints or given is not None,
            owned=list(opened),
        )

    # --- locks --------------------------------------------------------------------------------

    async def hold(self, task_id: str) -> bool:
        return self.runlocks is None or self.runlocks.hold(task_id)

    def hold_soon(self, task_id: str) -> None:
        return None  # a local lock: ``hold`` takes it at once

    async def release(self, task_id: str) -> None:
        self.locks.release_task_locks(task_id)
        if self.runlocks is not None:
            self.runlocks.release(task_id)

    def release_soon(self, task_id: str) -> None:
        self.locks.release_task_locks(task_id)

    @property
    def releases_with_ending(self) -> bool:
        return False  # an OS lock, let go at once: released once the ending is on disk

    async def running_elsewhere(self, task_id: str) -> bool:
        return self.runlocks is not None and self.runlocks.running_elsewhere(task_id)

    def held_elsewhere(self, task_ids: Sequence[str]) -> set[str]:
        if self.runlocks is None or not task_ids:
            return set()
        return self.runlocks.held_elsewhere(task_ids)

    # --- records ------------------------------------------------------------------------------

    def load_resumable(self, *, max_age_s: float, now: float) -> LoadResult | LazyLoad:
        store = self.store
        loaded: LoadResult | LazyLoad = (
            store.load_lazy(max_age_s=max_age_s, now=now)
            if isinstance(store, CheckpointStore)
            else store.load_recent(max_age_s=max_age_s, now=now)
        )
        # What was moved aside at opening (a history file) is reported with the checkpoints.
        loaded.quarantined.extend(self.history.quarantined)
        self.history.quarantined.clear()
        return loaded

    def parse(self, record: LazyRecord) -> TaskRecord | None:
        if isinstance(self.store, CheckpointStore):
            return self._said(self.store.parse_lazy(record))
        return parse_record(record.id, record.text)

    def _said(self, record: TaskRecord | None) -> TaskRecord | None:
        """``record``, once what the store moved aside reading it (a record it could not
        read) is reported (``faults.moved_aside``: a ``skillrt: warning:`` line on the CLI).
        Before, such a record vanished silently: listed, then "no resumable task"."""
        if record is None and isinstance(self.store, CheckpointStore):
            for note in self.store.take_reports():
                moved_aside(note)
        return record

    def newer(
        self, held: Sequence[str], task_id: str | None = None, *, max_age_s: float, now: float
    ) -> dict[str, TaskRecord | None]:
        # Nobody else writes a task this runtime runs (run locks see to that). One it holds
        # resting may be resumed and ended by another process meanwhile: a resume reads it
        # again under its run lock (``Inventory.resume``), and a synchronous abort asks for it
        # here (``Inventory.abort_copy``).
        return {} if task_id is None else {task_id: self._said(self.store.get(task_id))}

    async def read(self, task_id: str) -> TaskRecord | None:
        found = await asyncio.to_thread(self.store.get, task_id)  # a read: off the loop
        return self._said(found)

    def orphans(self, states: tuple[str, ...]) -> list[str]:
        return []  # a task cut off by a crash is restored at the next start

    def lost(self) -> list[str]:
        return []  # an OS lock is never taken from a live process

    def close(self) -> None:
        try:
            self.committer.close()
        finally:
            for part in self._owned:
                part.close()
