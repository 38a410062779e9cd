"""What a runtime opens at ``initialize()``, as one frozen object.

``open_services`` (blocking: run it off the event loop) makes the state folder and opens the
checkpoint store with its group committer, the history, the post locks, the blog's files and
memory, and the run locks: the embedded ones in the state folder, or the shared PostgreSQL ones
when ``state_url`` is set. If anything fails half way, what was opened is closed again and the
fault is raised as ``StoreUnavailable`` with a paragraph saying what to do.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, cast

import structlog

from skillrt._io.faults import classify, unavailable
from skillrt._state.embedded.checkpoints import (
    CheckpointStore,
    LazyLoad,
    LoadResult,
    MemoryCheckpointStore,
    TaskStore,
)
from skillrt._state.embedded.committer import Committer
from skillrt._state.embedded.history import History
from skillrt._state.embedded.runlocks import RunLocks
from skillrt.blog.files import FileStore
from skillrt.blog.locks import FileLockManager, blog_lock_dir
from skillrt.blog.memory import BlogMemory
from skillrt.blog.tempfiles import remove_stale_temps
from skillrt.settings import RuntimeConfig, ensure_state

if TYPE_CHECKING:
    from skillrt._state.postgres.store import PgHistory, PgRunLocks
    from skillrt._tasks.failover import SharedStore

__all__ = ["ServicePart", "Services", "open_services"]

T = TypeVar("T")


class _Closable(Protocol):
    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Services:
    """The runtime's open parts. ``remote``: they talk to a database server (calls leave the
    event loop); otherwise they are local files and quick. ``journaled``: tasks are
    checkpointed (with ``checkpoints = false`` the store stays empty, and paused tasks resume
    only in this process, from memory)."""

    store: TaskStore
    committer: Committer
    history: History | PgHistory
    locks: FileLockManager
    files: FileStore
    memory: BlogMemory
    runlocks: RunLocks | PgRunLocks | None
    shared: SharedStore | None = None
    owned: tuple[_Closable, ...] = field(default=())
    journaled: bool = True  # False: checkpoints are off, and nothing is written to the store

    @property
    def remote(self) -> bool:
        return self.shared is not None

    def load_resumable(self, cfg: RuntimeConfig, *, now: float) -> LoadResult | LazyLoad:
        """The checkpoints of the resume window: summaries only where the store can (their
        records are parsed when first asked for), with what was moved aside as unreadable."""
        store, window_s = self.store, cfg.checkpoint_max_age_h * 3600
        loaded: LoadResult | LazyLoad = (
            store.load_lazy(max_age_s=window_s, now=now)
            if isinstance(store, CheckpointStore)
            else store.load_recent(max_age_s=window_s, now=now)
        )
        if isinstance(self.history, History):  # a history file moved aside is reported too
            loaded.quarantined.extend(self.history.quarantined)
            self.history.quarantined.clear()
        return loaded

    def close(self) -> None:
        """Write what is still queued, then close every part this runtime opened."""
        try:
            self.committer.flush_sync()
        finally:
            for part in self.owned:
                part.close()


class ServicePart(Generic[T]):
    """A descriptor for one open part of its owner's ``_services`` (None before they open)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type) -> T | None:
        services = None if instance is None else instance._services
        return None if services is None else cast(T, getattr(services, self.name))


def open_services(
    cfg: RuntimeConfig,
    *,
    store: TaskStore | None,
    logger: structlog.stdlib.BoundLogger,
    on_reset: Callable[[], None],
) -> Services:
    """Open everything (see the module docstring). ``store``: one the host made (not closed
    here); ``on_reset``: called when the checkpoint store had to start a fresh database."""
    opened: list[_Closable] = []
    try:
        return _open(cfg, store, logger, on_reset, opened)
    except BaseException as exc:
        for part in reversed(opened):
            part.close()
        if isinstance(exc, sqlite3.Error | OSError):
            path = cfg.state_path
            raise unavailable("state", path, classify(exc, path / ".gitignore"), exc) from exc
        raise


def _open(
    cfg: RuntimeConfig,
    given: TaskStore | None,
    logger: structlog.stdlib.BoundLogger,
    on_reset: Callable[[], None],
    opened: list[_Closable],
) -> Services:
    state = ensure_state(cfg.state_path)
    shared: SharedStore | None = None
    if cfg.state_url is not None and cfg.checkpoints and given is None:
        from skillrt._tasks.failover import open_shared

        shared = open_shared(cfg)
        opened.append(shared)  # closed last: its parts use its connections
    store = given or (shared.store if shared is not None else None)
    if store is None:
        store = (
            CheckpointStore(state / "checkpoints") if cfg.checkpoints else MemoryCheckpointStore()
        )
    opened.append(store)  # a store the host lent is closed with the rest too
    history = (
        shared.history
        if shared is not None
        else History(state / "history" if cfg.checkpoints else None, limit=cfg.history_limit)
    )
    opened.append(history)
    # A post's OS lock lives with the blog, not with this runtime's state: two runtimes whose
    # state folders differ must still exclude each other on one post.
    locks = (
        shared.locks
        if shared is not None
        else FileLockManager(blog_lock_dir(cfg.root), expiry_s=cfg.lock_expiry_s)
    )
    opened.append(locks)
    files = FileStore(
        cfg.root, locks=locks, trash_dir=state / "trash", max_read_bytes=cfg.max_post_bytes
    )
    stale = remove_stale_temps(files.root)  # temp files of writers killed mid-write
    if stale:
        logger.info("agent.temp_files.removed", count=len(stale), paths=stale[:20])
    memory = BlogMemory(cfg.root, state, cfg.posts_dir, max_post_bytes=cfg.max_post_bytes)
    opened.append(memory)
    # Only durable tasks can be resumed by another process, so only they need run locks.
    runlocks: RunLocks | PgRunLocks | None = (
        shared.runlocks
        if shared is not None
        else (RunLocks(state / "locks" / "running") if cfg.checkpoints else None)
    )
    if runlocks is not None:
        opened.append(runlocks)
    committer = Committer(
        store,
        threaded=not isinstance(store, MemoryCheckpointStore),
        logger=logger,
        on_reset=on_reset,
    )
    return Services(
        store=store,
        committer=committer,
        history=history,
        locks=locks,
        files=files,
        memory=memory,
        runlocks=runlocks,
        shared=shared,
        journaled=cfg.checkpoints or given is not None,
        owned=(*opened[1:], opened[0]) if shared is not None else tuple(opened),
    )
