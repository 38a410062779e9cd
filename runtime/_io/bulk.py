"""Building thousands of objects at once (a start-up's load, a listing) without the cyclic GC."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["gc_paused"]


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while a bulk load builds thousands of objects (it creates no
    cycles); the collector's repeated passes over the growing heap otherwise double the time,
    more so the larger the heap the host already holds."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
