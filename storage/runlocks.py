"""Run locks: one OS lock per running task, so that no other process resumes it meanwhile.

A task's checkpoint looks unfinished while it runs; without this, a second process (a REPL
and a blog tool side by side, or ``skillrt resume`` next to a live chat) could offer it for
resume and run it twice. The kernel drops the lock when its process dies, so a crashed task
is free to resume at once.
"""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path

from filelock import FileLock, Timeout

__all__ = ["RunLocks"]


class RunLocks:
    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._held: dict[str, FileLock] = {}

    def _path(self, task_id: str) -> Path:
        name = hashlib.sha256(task_id.encode("utf-8")).hexdigest()[:32]
        return self.directory / f"{name}.run"

    def hold(self, task_id: str) -> bool:
        """Take the task's lock without waiting; False if another holder has it."""
        if task_id in self._held:
            return True
        lock = FileLock(self._path(task_id), timeout=0)
        try:
            lock.acquire()
        except Timeout:
            return False
        self._held[task_id] = lock
        return True

    def release(self, task_id: str) -> None:
        lock = self._held.pop(task_id, None)
        if lock is None:
            return
        lock.release()
        with contextlib.suppress(OSError):  # another process may be probing it: harmless
            Path(lock.lock_file).unlink()

    def running_elsewhere(self, task_id: str) -> bool:
        """True when another holder (another process) has the task's lock right now."""
        if task_id in self._held or not self._path(task_id).exists():
            return False
        if not self.hold(task_id):
            return True
        self.release(task_id)
        return False

    def close(self) -> None:
        for task_id in list(self._held):
            self.release(task_id)
