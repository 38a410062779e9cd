"""The state folder kept private: folders 0700, files 0600, whatever the umask.

Checkpoints, history and logs hold the blog's drafts, the chat and task inputs; under umask 022
they were made 0644, readable by every user of the machine. ``make_private`` takes the group
and other bits off the state folder and everything in it (the owner's bits stay; nothing is
made readable that was not). It only walks a folder skillrt made (one holding its
``.gitignore`` marker, or named ``.skillrt``): a ``state_dir`` pointed at some other folder
keeps its modes. Symlinks are not followed; files of other users are left alone.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

__all__ = ["make_private"]

_MAX_ENTRIES = 50_000  # a trash of many deleted posts: bounded, so a start never stalls


def make_private(state: Path, marker: str | None = None) -> None:
    """Folders 0700 and files 0600 (at most) under ``state``, if skillrt made it: it is named
    ``.skillrt`` or holds ``.gitignore`` with ``marker``."""
    if not _ours(state, marker):
        return
    seen = 0
    _tighten(state, 0o700)
    for folder, dirs, files in os.walk(state):
        base = Path(folder)
        for name in dirs:
            _tighten(base / name, 0o700)
        for name in files:
            _tighten(base / name, 0o600)
        seen += len(dirs) + len(files)
        if seen >= _MAX_ENTRIES:
            return


def _ours(state: Path, marker: str | None) -> bool:
    if state.name == ".skillrt":
        return state.is_dir()
    if marker is None:
        return False
    try:
        return (state / ".gitignore").read_text(encoding="utf-8") == marker
    except (OSError, UnicodeDecodeError):
        return False


def _tighten(path: Path, most: int) -> None:
    with contextlib.suppress(OSError):  # gone meanwhile, or another user's
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode) or info.st_uid != os.getuid():
            return
        mode = stat.S_IMODE(info.st_mode)
        if mode & ~most & 0o777:
            os.chmod(path, mode & most)
