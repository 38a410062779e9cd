"""Whether a process id names a live process on this machine (for a dead writer's leftovers)."""

from __future__ import annotations

import os

__all__ = ["pid_alive"]


def pid_alive(pid: int) -> bool:
    """Whether a process has id ``pid`` (one of another user counts as alive; a pid the system
    reused does too, so callers keep a second test, such as an age)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True
