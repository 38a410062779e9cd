"""What went wrong with a database file in the state folder, and what to do about it.

SQLite and the OS report storage faults in many shapes (``unable to open database file``,
``disk I/O error``, ``EROFS``, ``ENOSPC``...). ``classify`` sorts them into what the stores
act on:

=============  =======================================================================
``corrupt``    not a database, a malformed image, another schema, a folder in its place,
               a text that is not UTF-8 (``undecodable``):
               move it aside (quarantine) and start a fresh one
``missing``    its folder was deleted: create it again (the stores copy what they still
               hold in memory or through an open connection into the new file)
``read_only``  the folder or file cannot be written: a clear error, nothing is moved
``full``       the disk (or the process's file-size limit) is full: a clear error
``other``      anything else (locked for too long, an I/O error): a clear error
=============  =======================================================================

``unavailable`` turns a fault into ``StoreUnavailable`` with one paragraph saying what to do.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from skillrt.exceptions import StoreUnavailable

__all__ = [
    "Fault",
    "classify",
    "moved_aside",
    "on_moved_aside",
    "quarantine_file",
    "scan_task_ids",
    "stamp",
    "unavailable",
    "undecodable",
]

Fault = Literal["corrupt", "missing", "read_only", "full", "other"]

_SCHEMA_WORDS = ("no such table", "no such column", "has no column", "malformed")
_FULL_ERRNOS = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}
_READ_ONLY_ERRNOS = {errno.EROFS, errno.EACCES, errno.EPERM}
_TASK_ID = re.compile(rb'"id":"([0-9a-f]{8,64})"')


_listeners: list[Callable[[str], None]] = []


def on_moved_aside(callback: Callable[[str], None]) -> Callable[[], None]:
    """Call ``callback(note)`` for each damaged file moved aside while the process runs (a post
    index, a run-lock file, a task record read after start-up: what no start-up event reports);
    the CLI prints each as a ``skillrt: warning:`` line. Returns the unsubscriber."""
    _listeners.append(callback)
    return lambda: _listeners.remove(callback) if callback in _listeners else None


def moved_aside(note: str) -> None:
    """Report ``note`` (what was moved aside, and where to) to the listeners, and log it."""
    logging.getLogger("skillrt.storage").warning("%s", note)
    for callback in list(_listeners):
        callback(note)


def undecodable(exc: BaseException) -> bool:
    """Whether ``exc`` is Python's ``sqlite3`` failing to read a text that is not UTF-8 (a
    damaged byte in a row, or in the schema's names): the file is damaged, not unusable."""
    if isinstance(exc, UnicodeDecodeError):
        return True
    return isinstance(exc, sqlite3.OperationalError) and "could not decode to utf-8" in (
        str(exc).lower()
    )


def classify(exc: BaseException, db_path: Path) -> Fault:
    """What ``exc``, raised while using the database at ``db_path``, means."""
    folder = db_path.parent
    if undecodable(exc):  # a damaged byte: once "other", every command exited 74
        return "corrupt"
    if isinstance(exc, OSError) and not isinstance(exc, sqlite3.Error):
        if exc.errno in _FULL_ERRNOS:
            return "full"
        if exc.errno in _READ_ONLY_ERRNOS:
            return "read_only"
        if isinstance(exc, FileNotFoundError) or not folder.exists():
            return "missing"
        if isinstance(exc, IsADirectoryError | NotADirectoryError):
            return "corrupt" if db_path.is_dir() else "other"
        return "other"
    if not isinstance(exc, sqlite3.DatabaseError):
        return "other"
    message = str(exc).lower()
    if not isinstance(exc, sqlite3.OperationalError):  # not a database, malformed image
        return "corrupt"
    if any(word in message for word in _SCHEMA_WORDS):
        return "corrupt"
    if "full" in message:
        return "full"
    if "readonly" in message or "read-only" in message:
        return "read_only"
    if not folder.exists():
        return "missing"
    if db_path.is_dir():
        return "corrupt"
    if not os.access(folder, os.W_OK) or (db_path.exists() and not os.access(db_path, os.W_OK)):
        return "read_only"
    if "i/o" in message and (_disk_nearly_full(folder) or _file_size_limited()):
        return "full"
    return "other"


def _file_size_limited() -> bool:
    """A file-size limit (``ulimit -f``) is set: SQLite reports reaching it as an I/O error."""
    try:
        import resource  # Unix only: elsewhere there is no file-size limit to run into
    except ImportError:
        return False
    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return soft != resource.RLIM_INFINITY


def _disk_nearly_full(folder: Path) -> bool:
    try:
        st = os.statvfs(folder)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < 1_000_000


def unavailable(what: str, folder: Path, fault: Fault, exc: BaseException) -> StoreUnavailable:
    """``StoreUnavailable`` saying, in one paragraph, what failed and what to do."""
    detail = str(exc) or type(exc).__name__
    fix = {
        "read_only": (
            f"{folder} cannot be written ({detail}). Make it writable, or point state_dir"
            " (SKILLRT_STATE_DIR) at a writable folder."
        ),
        "full": (
            f"the disk holding {folder} is full ({detail}). Free some space and try again;"
            " tasks saved so far are kept."
        ),
        "missing": f"{folder} is gone and could not be created again ({detail}).",
        "corrupt": f"{folder} holds an unreadable database ({detail}).",
        "other": f"{folder} cannot be used ({detail}). Run skillrt doctor for details.",
    }[fault]
    reason = {"read_only": "read_only", "full": "disk_full"}.get(fault, "unusable")
    return StoreUnavailable(f"skillrt cannot save its {what}: {fix}", reason=reason)


def stamp() -> str:
    """A UTC timestamp for names of things moved aside: ``20261122T215301-1a2b3c``."""
    now = time.time()
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f"-{os.urandom(3).hex()}"


def scan_task_ids(*paths: Path, limit: int = 50_000_000) -> list[str]:
    """Task ids found in the raw bytes of unreadable checkpoint files (their JSON records):
    the tasks a database moved aside may have held."""
    found: dict[str, None] = {}
    for path in paths:
        try:
            if not path.is_file():
                continue
            with path.open("rb") as fh:
                data = fh.read(limit)
        except OSError:
            continue
        for match in _TASK_ID.finditer(data):
            found.setdefault(match.group(1).decode("ascii"), None)
    return list(found)


def quarantine_file(db_path: Path, target_dir: Path) -> Path:
    """Move ``db_path`` (a file, or a folder in its place) and its ``-wal``/``-shm`` into
    ``target_dir`` as ``<name>-<time>``; returns where the main file went."""
    target_dir.mkdir(parents=True, exist_ok=True)
    when = stamp()
    moved = target_dir / f"{db_path.name}-{when}"
    for suffix in ("", "-wal", "-shm", "-journal"):
        part = db_path.with_name(db_path.name + suffix)
        if part.exists() or part.is_symlink():
            os.replace(part, target_dir / f"{db_path.name}-{when}{suffix}")
    return moved
