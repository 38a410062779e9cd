"""``opening(path)``: one process at a time checks and makes a database file.

Two processes starting on a new state folder at once raced: one made the SQLite file (0 bytes
until its first write), and the other found it empty and moved it aside as damaged, so the
first went on writing into the quarantined file and its checkpoints were lost to the folder.
While one holds the lock on ``<file>.opening``, another waits, then finds the file made.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["opening"]


@contextlib.contextmanager
def opening(path: Path) -> Iterator[None]:
    """Hold an exclusive lock (``flock``) on ``<path>.opening`` for the block. Where the lock
    file cannot be made (a read-only or missing folder, which the opening itself reports) or
    ``fcntl`` is missing, the block runs unlocked."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        yield
        return
    try:
        fd = os.open(f"{path}.opening", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the last descriptor releases the lock
