"""What a runtime opens at ``initialize()``, as one frozen object.

``open_services`` (blocking: run it off the event loop) opens the state backend (``open_state``:
the embedded one in the state folder, or the shared PostgreSQL one when ``state_url`` is set),
then the blog's files and memory. If anything fails half way, what was opened is closed again
and the fault is raised as ``StoreUnavailable`` with a paragraph saying what to do.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, cast

import structlog

from skillrt._io.faults import classify, unavailable
from skillrt._io.private import make_private
from skillrt._state.open import open_state
from skillrt._state.protocol import StateBackend, TaskStore
from skillrt.blog.files import FileStore
from skillrt.blog.memory import BlogMemory
from skillrt.blog.tempfiles import remove_stale_temps
from skillrt.blog.versions import VersionStore
from skillrt.settings import STATE_GITIGNORE, RuntimeConfig

__all__ = ["ServicePart", "Services", "open_services"]

T = TypeVar("T")


class _Closable(Protocol):
    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Services:
    """The runtime's open parts: where tasks are kept (``state``), and the blog."""

    state: StateBackend
    files: FileStore
    memory: BlogMemory
    versions: VersionStore

    # The state backend's parts by name, for the runtime's attributes (rt.store, rt.history...).
    @property
    def store(self) -> TaskStore:
        return self.state.store

    @property
    def history(self) -> Any:
        return self.state.history

    @property
    def locks(self) -> Any:
        return self.state.locks

    @property
    def runlocks(self) -> Any:
        return self.state.runlocks

    def close(self) -> None:
        """Write what is still queued, then close every part this runtime opened."""
        try:
            self.memory.close()
        finally:
            self.state.close()


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
    """Open everything (see the module docstring). ``store``: one the host made (closed with the
    rest); ``on_reset``: called when the checkpoint store had to start a fresh database."""
    opened: list[_Closable] = []
    try:
        state = open_state(cfg, given=store, logger=logger, on_reset=on_reset, opened=opened)
        opened[:] = [state]  # from here the backend closes its own parts
        files = FileStore(
            cfg.root,
            locks=state.locks,
            trash_dir=cfg.state_path / "trash",
            max_read_bytes=cfg.max_post_bytes,
            posts_dir=cfg.posts_dir,  # skills write posts only: Markdown under this folder
            drafts_dir=cfg.layout.drafts_dir,  # and in the blog's drafts folder (_drafts/)
            state_dir=cfg.state_path,
        )
        stale = remove_stale_temps(files.root)  # temp files of writers killed mid-write
        if stale:
            logger.info("agent.temp_files.removed", count=len(stale), paths=stale[:20])
        memory = BlogMemory(
            cfg.root,
            cfg.state_path,
            cfg.posts_dir,
            max_post_bytes=cfg.max_post_bytes,
            drafts_dir=cfg.layout.drafts_dir,
            inline_tags=cfg.layout.kind == "obsidian",
        )
        make_private(cfg.state_path, STATE_GITIGNORE)  # 0700 folders, 0600 files (see private)
        versions = VersionStore(cfg.state_path / "versions", keep=cfg.undo.keep)
        return Services(state=state, files=files, memory=memory, versions=versions)
    except BaseException as exc:
        for part in reversed(opened):
            part.close()
        if isinstance(exc, sqlite3.Error | OSError):
            path = cfg.state_path
            raise unavailable("state", path, classify(exc, path / ".gitignore"), exc) from exc
        raise
