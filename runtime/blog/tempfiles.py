"""Temp files a killed writer left behind: ``.skillrt-*.tmp`` beside the files it wrote.

``FileStore.write`` writes to ``.skillrt-<pid>-<random>.tmp`` in the target's folder and
renames it over the target; a process killed between the two leaves the temp file. The runtime
removes, at start-up, those whose writer is dead (no process has that id any more), and any
older than an hour (a pid the system reused, or an older name without a pid: a live writer's
temp file is seconds old). The walk skips dot-folders (``.git``, the state folder) and
``node_modules``, as the post index does, and stops after ``max_entries`` names so a huge tree
cannot stall the start.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from pathlib import Path

from skillrt._io.processes import pid_alive

__all__ = ["STALE_TEMP_S", "remove_stale_temps"]

STALE_TEMP_S = 3600.0
_TEMP = re.compile(r"\.skillrt-(?:(\d+)-)?[0-9a-f]+\.tmp")


def remove_stale_temps(
    root: Path,
    *,
    older_than_s: float = STALE_TEMP_S,
    now: float | None = None,
    max_entries: int = 200_000,
) -> list[str]:
    """Delete ``.skillrt-*.tmp`` files under ``root`` whose writer is dead or that were last
    modified more than ``older_than_s`` ago; returns their paths relative to ``root``."""
    cutoff = (time.time() if now is None else now) - older_than_s
    removed: list[str] = []
    seen = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "node_modules"]
        seen += len(dirs) + len(files)
        for name in files:
            match = _TEMP.fullmatch(name)
            if match is None:
                continue
            path = Path(folder) / name
            with contextlib.suppress(OSError):  # gone meanwhile, or not ours to remove
                info = path.lstat()
                dead = match[1] is not None and not pid_alive(int(match[1]))
                if (dead or info.st_mtime < cutoff) and path.is_file() and not path.is_symlink():
                    path.unlink()
                    removed.append(path.relative_to(root).as_posix())
        if seen >= max_entries:
            break
    return removed
