"""Run locks: one OS lock per running task, so that no other process resumes it meanwhile.

A task's checkpoint looks unfinished while it runs; without this, a second process (a REPL and
a blog tool side by side, or ``skillrt resume`` next to a live chat) could offer it for resume
and run it twice. The kernel drops a process's locks when it dies, so a crashed task is free to
resume at once.

On Linux every lock is one byte of a single file, ``running.lock``, locked with an
*open file description* lock (``F_OFD_SETLK``): the byte is the task id's hash. Taking one is a
system call, with no file to create (creating and deleting a file per task costs up to a
millisecond on some disks, on the event loop). OFD locks belong to the open file, not to the
process, so two runtimes in one process exclude each other as two processes do. Elsewhere (no
OFD locks) each lock is ``flock`` on a small file per task, deleted when it is let go; a holder
checks that the file it locked is still the one at its path (one deleted between its open and
its lock excludes no one).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import struct
import sys
from collections.abc import Sequence
from pathlib import Path

from skillrt._io.faults import classify, unavailable

__all__ = ["RunLocks"]

_OPEN_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)  # no O_CLOEXEC on Windows

try:
    import fcntl

    _FCNTL = True
except ImportError:  # Windows: msvcrt's byte-range lock, also dropped when the process ends
    _FCNTL = False

_OFD = _FCNTL and hasattr(fcntl, "F_OFD_SETLK")


def _try_lock(fd: int) -> bool:
    """An exclusive lock on the open file ``fd`` without waiting; False if another has it."""
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _range(fd: int, kind: int, offset: int) -> bool:
    """One byte at ``offset`` locked (F_WRLCK) or unlocked (F_UNLCK); False if another open
    file holds it. ``struct flock`` laid out natively, ``l_pid`` 0 as OFD locks need."""
    try:
        fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("@hhqqi4x", kind, 0, offset, 1, 0))
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            return False
        raise
    return True


_ATTEMPTS = 3  # opens of a task's lock file that another holder deletes meanwhile


def _still_at(fd: int, path: str) -> bool:
    """Whether the open file ``fd`` is still the one at ``path`` (not deleted or replaced)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (st.st_dev, st.st_ino)


def _byte(task_id: str) -> int:
    """The byte of ``running.lock`` that stands for the task (its id's hash)."""
    return int.from_bytes(hashlib.sha256(task_id.encode("utf-8")).digest()[:8], "big") >> 2


def _conflict(fd: int, start: int, length: int) -> tuple[int, int] | None:
    """A lock another open file holds in ``[start, start + length)`` (length 0: to the end)
    as ``(start, length)``, or None (``F_OFD_GETLK``: it tests, it takes nothing)."""
    asked = struct.pack("@hhqqi4x", fcntl.F_WRLCK, 0, start, length, 0)
    kind, _, at, size, _ = struct.unpack("@hhqqi4x", fcntl.fcntl(fd, fcntl.F_OFD_GETLK, asked))
    return None if kind == fcntl.F_UNLCK else (at, size)


class RunLocks:
    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock_path = os.path.join(self.directory, "running.lock")  # joined once
        self._held: dict[str, tuple[int, str]] = {}  # task id -> (fd or byte, path)
        self._fd: int | None = None  # running.lock, with OFD locks
        self._ino: tuple[int, int] | None = None

    def hold(self, task_id: str) -> bool:
        """Take the task's lock without waiting; False if another holder has it."""
        if task_id in self._held:
            return True
        if _OFD:
            return self._hold_byte(task_id)
        path = self._path(task_id)
        for _ in range(_ATTEMPTS):
            fd = self._open(path)
            try:
                locked = _try_lock(fd)
                current = locked and _still_at(fd, path)
            except BaseException:
                os.close(fd)
                raise
            if current:
                self._held[task_id] = (fd, path)
                return True
            os.close(fd)
            if not locked:
                return False
            # The file was another holder's, deleted as it let go between our open and our
            # lock: a lock on it excludes no one (the next holder opens a new file at the
            # path). Open the path again.
        return False

    def release(self, task_id: str) -> None:
        held = self._held.pop(task_id, None)
        if held is None:
            return
        handle, path = held
        if _OFD:
            if self._fd is not None:
                _range(self._fd, fcntl.F_UNLCK, handle)
            return
        with contextlib.suppress(OSError):  # another process may be probing it: harmless
            os.unlink(path)
        os.close(handle)  # closing drops the lock

    def running_elsewhere(self, task_id: str) -> bool:
        """True when another holder (another process) has the task's lock right now."""
        if task_id in self._held:
            return False
        if not _OFD and not os.path.exists(self._path(task_id)):
            return False
        if not self.hold(task_id):
            return True
        self.release(task_id)
        return False

    def held_elsewhere(self, task_ids: Sequence[str]) -> set[str]:
        """Of ``task_ids``, those another holder has now (the shared store's leases answer
        this in one round trip). On Linux the kernel is asked which bytes of ``running.lock``
        others lock (one call when none does, whatever the number of tasks); elsewhere it is
        one probe per task."""
        if not _OFD:
            return {task_id for task_id in task_ids if self.running_elsewhere(task_id)}
        if not task_ids:
            return set()
        fd = self._lock_file()
        if _conflict(fd, 0, 0) is None:  # nobody else locks anything: no id need be hashed
            return set()
        wanted: dict[int, list[str]] = {}
        for task_id in task_ids:
            if task_id not in self._held:
                wanted.setdefault(_byte(task_id), []).append(task_id)
        busy: set[str] = set()
        spans = [(0, 0)]  # (start, length) still to ask about; length 0: to the end
        while spans:
            start, length = spans.pop()
            found = _conflict(fd, start, length)
            if found is None:
                continue
            at, size = found  # another open file locks [at, at + size) (size 0: to the end)
            busy.update(
                task_id
                for byte, ids in wanted.items()
                if byte >= at and (size == 0 or byte < at + size)
                for task_id in ids
            )
            if at > start:
                spans.append((start, at - start))
            if size and (length == 0 or at + size < start + length):
                end = at + size
                spans.append((end, 0 if length == 0 else start + length - end))
        return busy

    def close(self) -> None:
        for task_id in list(self._held):
            self.release(task_id)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    # --- one byte per task of running.lock (Linux) ------------------------------------------

    def _hold_byte(self, task_id: str) -> bool:
        fd = self._lock_file()
        byte = _byte(task_id)
        if not _range(fd, fcntl.F_WRLCK, byte):
            return False
        self._held[task_id] = (byte, "")
        return True

    def _lock_file(self) -> int:
        """The open ``running.lock``; opened again (its held bytes locked again) when the file
        was deleted or replaced, so that other processes, which open the new one, see them."""
        path = self._lock_path
        fd = self._fd
        try:
            st = os.stat(path)
            current = fd is not None and (st.st_dev, st.st_ino) == self._ino
        except FileNotFoundError:
            current = False
        if current and fd is not None:
            return fd
        fresh = self._open(path)
        st = os.fstat(fresh)
        self._fd, self._ino = fresh, (st.st_dev, st.st_ino)
        for byte, _ in self._held.values():
            _range(fresh, fcntl.F_WRLCK, byte)
        if fd is not None:
            os.close(fd)
        return fresh

    # --- a file per task (elsewhere) ----------------------------------------------------------

    def _path(self, task_id: str) -> str:
        name = hashlib.sha256(task_id.encode("utf-8")).hexdigest()[:32]
        return os.path.join(self.directory, f"{name}.run")

    def _open(self, path: str) -> int:
        try:
            return os.open(path, _OPEN_FLAGS, 0o600)
        except FileNotFoundError:  # the state folder was deleted: make the folder again
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
                return os.open(path, _OPEN_FLAGS, 0o600)
            except OSError as again:
                fault = classify(again, Path(path))
                raise unavailable("run locks", self.directory, fault, again) from again
        except OSError as exc:
            raise unavailable("run locks", self.directory, classify(exc, Path(path)), exc) from exc
