"""Run locks: one OS lock per running task, so that no other process resumes it meanwhile.

A task's checkpoint looks unfinished while it runs; without this, a second process (a REPL and
a blog tool side by side, or ``skillrt resume`` next to a live chat) could offer it for resume
and run it twice. The kernel drops a process's locks when it dies, so a crashed task is free to
resume at once.

On Linux every lock is one byte of one of 16 files, ``running-0.lock`` .. ``running-f.lock``,
locked with an *open file description* lock (``F_OFD_SETLK``): the byte is the task id's hash,
and its low bits pick the file. Taking one is a system call, with no file to create (creating
and deleting a file per task costs up to a millisecond on some disks, on the event loop). OFD
locks belong to the open file, not to the process, so two runtimes in one process exclude each
other as two processes do. The kernel walks every lock of a file at each lock and unlock: with
one file (an earlier skillrt's ``running.lock``), 1,000 tasks running at once made each lock
and unlock cost 12 µs of the event loop's time instead of 2.5 µs; spread over 16 files they
stay near 3 µs. An earlier skillrt locks ``running.lock`` and does not see these files: stop
its processes before starting this one on the same state folder. Elsewhere (no
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

from skillrt._io.faults import classify, moved_aside, stamp, unavailable
from skillrt.exceptions import StoreUnavailable

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
    held = os.fstat(fd)
    return _same_file(path, (held.st_dev, held.st_ino))


def _same_file(path: str, ino: tuple[int, int]) -> bool:
    """Whether ``path`` is still the file ``(device, inode)``."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    return (st.st_dev, st.st_ino) == ino


def _byte(task_id: str) -> int:
    """The byte that stands for the task (its id's hash); its low bits pick its file."""
    return int.from_bytes(hashlib.sha256(task_id.encode("utf-8")).digest()[:8], "big") >> 2


_SHARDS = 16  # lock files: the kernel's walk at each lock is over one file's locks


def _shard(byte: int) -> int:
    return byte & (_SHARDS - 1)


def _conflict(fd: int, start: int, length: int) -> tuple[int, int] | None:
    """A lock another open file holds in ``[start, start + length)`` (length 0: to the end)
    as ``(start, length)``, or None (``F_OFD_GETLK``: it tests, it takes nothing)."""
    asked = struct.pack("@hhqqi4x", fcntl.F_WRLCK, 0, start, length, 0)
    kind, _, at, size, _ = struct.unpack("@hhqqi4x", fcntl.fcntl(fd, fcntl.F_OFD_GETLK, asked))
    return None if kind == fcntl.F_UNLCK else (at, size)


def _locked_by_others(fd: int, wanted: dict[int, list[str]]) -> set[str]:
    """The task ids of ``wanted`` (byte -> ids) whose byte of the file ``fd`` another open
    file locks: the kernel is asked for the first conflicting lock of each span still
    unasked, the spans on either side of it asked next (one call when no one locks any)."""
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


class RunLocks:
    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock_paths = [  # joined once
            os.path.join(self.directory, f"running-{shard:x}.lock") for shard in range(_SHARDS)
        ]
        self._held: dict[str, tuple[int, str]] = {}  # task id -> (fd or byte, path)
        self._fds: dict[int, tuple[int, tuple[int, int]]] = {}  # shard -> (fd, (dev, inode))

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
            opened = self._fds.get(_shard(handle))
            if opened is not None:
                _range(opened[0], fcntl.F_UNLCK, handle)
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
        this in one round trip). On Linux the kernel is asked which bytes of each lock file
        others lock (one call a file when none does, whatever the number of tasks); elsewhere
        it is one probe per task."""
        if not _OFD:
            return {task_id for task_id in task_ids if self.running_elsewhere(task_id)}
        wanted: dict[int, dict[int, list[str]]] = {}  # shard -> byte -> task ids
        for task_id in task_ids:
            if task_id not in self._held:
                byte = _byte(task_id)
                wanted.setdefault(_shard(byte), {}).setdefault(byte, []).append(task_id)
        busy: set[str] = set()
        for shard, bytes_ in wanted.items():
            busy.update(_locked_by_others(self._lock_file(shard), bytes_))
        return busy

    def close(self) -> None:
        for task_id in list(self._held):
            self.release(task_id)
        for fd, _ in self._fds.values():
            os.close(fd)
        self._fds.clear()

    # --- one byte per task of a running-<shard>.lock (Linux) ---------------------------------

    def _hold_byte(self, task_id: str) -> bool:
        byte = _byte(task_id)
        if not _range(self._lock_file(_shard(byte)), fcntl.F_WRLCK, byte):
            return False
        self._held[task_id] = (byte, "")
        return True

    def _lock_file(self, shard: int) -> int:
        """The open lock file ``shard``. When it was deleted or replaced (the state folder
        emptied), every lock file is opened again and its held bytes locked again, so that
        other processes, which open the new files, see them."""
        opened = self._fds.get(shard)
        if opened is not None and _same_file(self._lock_paths[shard], opened[1]):
            return opened[0]
        for other in list(self._fds):
            if other != shard and not _same_file(self._lock_paths[other], self._fds[other][1]):
                self._reopen(other)
        return self._reopen(shard)

    def _reopen(self, shard: int) -> int:
        fresh = self._open(self._lock_paths[shard])
        st = os.fstat(fresh)
        opened = self._fds.get(shard)
        self._fds[shard] = (fresh, (st.st_dev, st.st_ino))
        for byte, _ in self._held.values():
            if _shard(byte) == shard:
                _range(fresh, fcntl.F_WRLCK, byte)
        if opened is not None:
            os.close(opened[0])
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
        except IsADirectoryError:
            # A folder where a lock file should be (made by hand, a tool): no one can lock a
            # folder, so it holds no lock; it is moved aside and said. Before, every command
            # exited 74 saying the folder "holds an unreadable database".
            self._move_aside(path)
            try:
                return os.open(path, _OPEN_FLAGS, 0o600)
            except OSError as again:
                fault = classify(again, Path(path))
                raise unavailable("run locks", self.directory, fault, again) from again
        except OSError as exc:
            raise unavailable("run locks", self.directory, classify(exc, Path(path)), exc) from exc

    def _move_aside(self, path: str) -> None:
        """Move what stands at ``path`` to ``locks/quarantine/<name>-<time>``, and say so."""
        quarantine = self.directory.parent / "quarantine"
        target = quarantine / f"{os.path.basename(path)}-{stamp()}"
        try:
            quarantine.mkdir(parents=True, exist_ok=True)
            os.replace(path, target)
        except OSError as exc:
            raise StoreUnavailable(
                f"skillrt cannot save its run locks: {path} is a folder, not a lock file, and"
                f" could not be moved aside ({exc}). Move or remove it, then try again.",
                reason="unusable",
            ) from exc
        moved_aside(f"run lock {path} was a folder, not a lock file; moved to {target}")
