"""``FileLockManager``: per-path write locks owned by task ids, backed by OS locks.

A lock is held by one task at a time; the same task may take it again (re-entrant, and each
acquire refreshes its age). A lock older than ``expiry_s`` is free again: the next task that
asks takes it over. Another task asking for a held lock fails fast with ``LockConflict``
naming the holder, or waits up to ``wait`` seconds when it asks to.

Each held lock is also an OS lock (``filelock``, one lock file per path, named by a hash of the
path, in ``lock_dir``), so two processes never write one file at once. The runtime puts
``lock_dir`` in the *blog* (``blog_lock_dir``: ``<content root>/.skillrt/locks``), whatever its
state folder: two runtimes over one blog with different state folders share the locks of its
posts, so a hash check and the rename after it are atomic between them too. Next to each
lock file a small JSON sidecar names the holding task and process, so the other process's
``LockConflict`` can name the holder. The kernel drops an OS
lock when its process dies, so a crashed process never leaves a path locked.

Expiry is measured by this manager's clock, so it frees locks between the tasks of one
process; a lock another process holds is freed when that process releases it or exits.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import filelock

from skillrt.exceptions import LockConflict

__all__ = ["FileLockManager", "blog_lock_dir"]

_POLL_S = 0.05


_GITIGNORE = "# Created by skillrt: lock files stay out of git.\n*\n"


def blog_lock_dir(content_root: Path) -> Path:
    """Where the OS locks of a blog's posts live: ``<content root>/.skillrt/locks``, keyed to
    the blog's real path (symlinks resolved), not to any runtime's state folder."""
    return Path(content_root).expanduser().resolve() / ".skillrt" / "locks"


@dataclass(slots=True)
class _Held:
    task_id: str
    acquired_at: float
    os_lock: Any  # a filelock lock here; a subclass's own handle (see _os_acquire)


class FileLockManager:
    """Per-path locks owned by task ids, with expiry, each also an OS lock in ``lock_dir``.

    ``clock`` defaults to ``time.time`` looked up at each call, so freezegun can move it.
    """

    def __init__(
        self,
        lock_dir: Path,
        *,
        expiry_s: float = 300.0,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.lock_dir = Path(lock_dir).expanduser().resolve()
        self.expiry_s = expiry_s
        self._clock: Callable[[], float] = clock if clock is not None else lambda: time.time()
        self._held: dict[str, _Held] = {}
        self._mutex = threading.RLock()

    # --- the API ------------------------------------------------------------------------------

    def acquire(self, path: str, task_id: str, *, wait: float | None = None) -> None:
        """Take the lock on ``path`` for ``task_id`` (again, if it holds it already).

        Raises ``LockConflict`` naming the holder at once, or after ``wait`` seconds of trying.
        ``path`` is the key as given (``FileStore`` passes the path relative to its root).
        Waiting blocks the calling thread: it is meant for a holder in another process or
        thread; a task of the same event loop cannot release its lock meanwhile.
        """
        deadline = None if wait is None else time.monotonic() + max(wait, 0.0)
        tries_left = None if wait is None else int(max(wait, 0.0) / _POLL_S) + 1
        while True:
            holder = self._try_acquire(path, task_id)
            if holder is None:
                return
            if deadline is None or tries_left is None:
                raise LockConflict(path, holder)
            tries_left -= 1
            # Bounded by count too: a frozen monotonic clock (freezegun) must not wait forever.
            if tries_left <= 0 or time.monotonic() >= deadline:
                raise LockConflict(path, holder)
            time.sleep(_POLL_S)

    def release(self, path: str, task_id: str) -> bool:
        """Release ``path`` if ``task_id`` holds it; True when it did."""
        with self._mutex:
            held = self._held.get(path)
            if held is None or held.task_id != task_id:
                return False
            del self._held[path]
            self._release_os_lock(path, held)
            return True

    def release_task_locks(self, task_id: str) -> int:
        """Release every lock ``task_id`` holds; returns how many (expired ones not counted)."""
        with self._mutex:
            self._expire()
            paths = [p for p, h in self._held.items() if h.task_id == task_id]
            for path in paths:
                self._release_os_lock(path, self._held.pop(path))
            return len(paths)

    def holder(self, path: str) -> str | None:
        """The task id holding ``path`` in this process (None when free or expired)."""
        with self._mutex:
            self._expire()
            held = self._held.get(path)
            return None if held is None else held.task_id

    def held_by(self, task_id: str) -> list[str]:
        """The paths ``task_id`` holds, sorted."""
        with self._mutex:
            self._expire()
            return sorted(p for p, h in self._held.items() if h.task_id == task_id)

    def close(self) -> None:
        """Release every lock this manager holds (at shutdown)."""
        with self._mutex:
            for path, held in list(self._held.items()):
                self._release_os_lock(path, held)
            self._held.clear()

    # --- internals ----------------------------------------------------------------------------

    def _try_acquire(self, path: str, task_id: str) -> str | None:
        """None when ``task_id`` now holds the lock, else a description of the holder."""
        with self._mutex:
            self._expire()
            now = self._clock()
            held = self._held.get(path)
            if held is not None:
                if held.task_id != task_id:
                    return held.task_id
                if not self._os_lock_lost(held):
                    held.acquired_at = now  # re-entrant: refresh the age
                    return None
                del self._held[path]  # gone under us: taken again below, if it is free
            handle = self._os_acquire(path, task_id)
            if isinstance(handle, str):
                return handle
            self._held[path] = _Held(task_id, now, handle)
            return None

    def _os_acquire(self, path: str, task_id: str) -> Any:
        """Take the cross-process lock of ``path`` without waiting: a handle that
        ``_release_os_lock`` gives back, or a ``str`` naming the holder when it is taken."""
        os_lock = filelock.FileLock(self._lock_file(path), mode=0o600, thread_local=False)
        try:
            os_lock.acquire(blocking=False)
        except filelock.Timeout:
            return self._read_holder(path)
        try:
            self._write_holder(path, task_id)
        except BaseException:
            os_lock.release()
            raise
        return os_lock

    def _os_lock_lost(self, held: _Held) -> bool:
        """Has the cross-process lock of ``held`` gone away while this manager held it? (An
        OS file lock lives as long as this process: never. A subclass whose lock lives on a
        server session asks whether that session still does.)"""
        return False

    def _expire(self) -> None:
        """Free every lock older than ``expiry_s``. Called with the mutex held."""
        cutoff = self._clock() - self.expiry_s
        for path in [p for p, h in self._held.items() if h.acquired_at < cutoff]:
            self._release_os_lock(path, self._held.pop(path))

    def _lock_file(self, path: str) -> Path:
        if not self.lock_dir.is_dir():
            self.lock_dir.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(OSError):  # only keeps lock files out of git
                (self.lock_dir / ".gitignore").write_text(_GITIGNORE, encoding="utf-8")
        digest = hashlib.sha256(path.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return self.lock_dir / f"{digest}.lock"

    def _sidecar(self, path: str) -> Path:
        return self._lock_file(path).with_suffix(".holder")

    def _write_holder(self, path: str, task_id: str) -> None:
        sidecar = self._sidecar(path)
        tmp = sidecar.with_name(f"{sidecar.name}.{os.getpid()}.tmp")
        info = {"task_id": task_id, "pid": os.getpid(), "path": path, "since": self._clock()}
        tmp.write_text(json.dumps(info, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, sidecar)

    def _read_holder(self, path: str) -> str:
        try:
            info = json.loads(self._sidecar(path).read_text(encoding="utf-8"))
            return f"{info['task_id']} (process {info['pid']})"
        except (OSError, ValueError, KeyError, TypeError):
            return "unknown (another process)"

    def _release_os_lock(self, path: str, held: _Held) -> None:
        # The sidecar goes first, while the OS lock still guards it: once released, another
        # process may write its own.
        with contextlib.suppress(FileNotFoundError):
            self._sidecar(path).unlink()
        held.os_lock.release(force=True)
