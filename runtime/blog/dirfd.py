"""Folders held open by descriptor, so a write cannot be steered out of the blog.

A path string is looked up again at every call that takes it: between ``FileStore``'s check of
``posts/a/b.md`` and its rename, someone could swap ``posts/a`` for a symlink to ``/etc`` and
the rename would follow it. Here the folder is opened once, from the root's descriptor, one
name at a time with ``O_NOFOLLOW | O_DIRECTORY`` (a symlink on the way fails the open), and the
temp file, the rename, the hard link and the hash all name their file relative to that
descriptor. A folder that is swapped afterwards no longer matters: the descriptor is the folder
that was checked, still inside the root (``same_folder`` re-checks it before the rename).

Where the platform lacks ``dir_fd`` or ``O_NOFOLLOW`` (Windows), ``DIR_FD`` is False and
``FileStore`` falls back to checked path strings.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from skillrt.exceptions import PathNotAllowed

__all__ = ["DIR_FD", "open_folder", "same_folder"]

DIR_FD: bool = (
    hasattr(os, "O_NOFOLLOW")
    and hasattr(os, "O_DIRECTORY")
    and {os.open, os.rename, os.link, os.mkdir, os.stat, os.unlink} <= os.supports_dir_fd
)
_DIR_FLAGS: int = (
    os.O_RDONLY
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def open_folder(root: Path, parts: Sequence[str], *, create: bool, shown: str) -> int:
    """A descriptor of ``root/parts...`` reached without following any symlink (the caller
    closes it). Missing folders are made when ``create``. ``PathNotAllowed`` (naming
    ``shown``) when a name on the way is a symlink or not a folder."""
    if create:
        root.mkdir(parents=True, exist_ok=True)  # the root itself is trusted: made by path
    fd = os.open(root, _DIR_FLAGS)
    try:
        for part in parts:
            if part in ("", ".", "..") or "/" in part:
                raise PathNotAllowed(shown, f"{part!r} is not a folder name")
            try:
                step = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                # Made by someone else meanwhile: then opened (and checked) below all the same.
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                step = _open_step(part, fd, shown)
            except OSError as exc:
                raise _refused(exc, fd, part, shown) from exc
            os.close(fd)
            fd = step
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_step(part: str, fd: int, shown: str) -> int:
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except OSError as exc:
        raise _refused(exc, fd, part, shown) from exc


def _refused(exc: OSError, fd: int, part: str, shown: str) -> Exception:
    """A symlink met on the way as ``PathNotAllowed`` (Linux says ENOTDIR for it, others
    ELOOP); a plain file where a folder should be stays the ``OSError`` it is."""
    if exc.errno in (errno.ELOOP, errno.EMLINK):
        return PathNotAllowed(shown, f"{part!r} on the way is a symlink")
    if exc.errno == errno.ENOTDIR:
        try:
            link = stat.S_ISLNK(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode)
        except OSError:
            link = False
        if link:
            return PathNotAllowed(shown, f"{part!r} on the way is a symlink")
    return exc


def same_folder(fd: int, root: Path, parts: Sequence[str]) -> bool:
    """Whether ``root/parts...`` (walked again, no symlinks) is still the folder ``fd`` holds:
    the re-check after open. False when it was moved, replaced or removed meanwhile."""
    try:
        again = open_folder(root, parts, create=False, shown="")
    except (OSError, PathNotAllowed):
        return False
    try:
        now, held = os.fstat(again), os.fstat(fd)
    finally:
        os.close(again)
    return stat.S_ISDIR(held.st_mode) and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)
