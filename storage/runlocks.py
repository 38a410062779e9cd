"""Run locks: one OS lock per running task, so that no other process resumes it meanwhile.

Each lock is ``flock`` on a small file per running task (direct ``fcntl.flock``, a
fraction of what the ``filelock`` library costs per task). A task's
checkpoint looks unfinished while it runs; without this, a second process (a REPL
and a blog tool side by side, or ``skillrt resume`` next to a live chat) could offer it for
resume and run it twice. The kernel drops the lock when its process dies, so a crashed task
is free to resume at once.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from skillrt.storage.faults import classify, unavailable

if sys.platform == "win32":  # no fcntl there: msvcrt's byte-range lock, also dropped at exit
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True


__all__ = ["RunLocks"]

_OPEN_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)  # no O_CLOEXEC on Windows


class RunLocks:
    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._held: dict[str, tuple[int, str]] = {}  # task id -> (fd, path)

    def _path(self, task_id: str) -> str:
        name = hashlib.sha256(task_id.encode("utf-8")).hexdigest()[:32]
        return os.path.join(self.directory, f"{name}.run")

    def hold(self, task_id: str) -> bool:
        """Take the task's lock without waiting; False if another holder has it."""
        if task_id in self._held:
            return True
        path = self._path(task_id)
        try:
            fd = os.open(path, _OPEN_FLAGS, 0o644)
        except FileNotFoundError:  # the state folder was deleted: make the folder again
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
                fd = os.open(path, _OPEN_FLAGS, 0o644)
            except OSError as again:
                fault = classify(again, Path(path))
                raise unavailable("run locks", self.directory, fault, again) from again
        except OSError as exc:
            raise unavailable("run locks", self.directory, classify(exc, Path(path)), exc) from exc
        try:
            locked = _try_lock(fd)
        except BaseException:
            os.close(fd)
            raise
        if not locked:
            os.close(fd)
            return False
        self._held[task_id] = (fd, path)
        return True

    def release(self, task_id: str) -> None:
        held = self._held.pop(task_id, None)
        if held is None:
            return
        fd, path = held
        with contextlib.suppress(OSError):  # another process may be probing it: harmless
            os.unlink(path)
        os.close(fd)  # closing drops the lock

    def running_elsewhere(self, task_id: str) -> bool:
        """True when another holder (another process) has the task's lock right now."""
        if task_id in self._held or not os.path.exists(self._path(task_id)):
            return False
        if not self.hold(task_id):
            return True
        self.release(task_id)
        return False

    def held_elsewhere(self, task_ids: Sequence[str]) -> set[str]:
        """Of ``task_ids``, those another holder has now (the shared store's leases answer
        this in one round trip; here it is one probe per task, each a few µs)."""
        return {task_id for task_id in task_ids if self.running_elsewhere(task_id)}

    def close(self) -> None:
        for task_id in list(self._held):
            self.release(task_id)
