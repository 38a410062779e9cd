"""Building thousands of objects at once (a start-up's load, a listing) without the cyclic GC."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["gc_paused"]

_BULK = 5000
"""Young objects from which a pause counts as a bulk build (a listing of a few tasks is not)."""


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while a bulk load builds thousands of objects (it creates no
    cycles); the collector's repeated passes over the growing heap otherwise double the time,
    more so the larger the heap the host already holds.

    What a bulk build made is then moved to the oldest generation at once (``gc.freeze`` then
    ``gc.unfreeze``, which puts the frozen objects back there): otherwise the first allocation
    after the pause starts a young collection that walks every one of them (5-10 ms for a
    start-up's 10,000 tasks, twice: after the load and after the listing), to find them alive
    and promote them, as it would then do again one generation up. They are still collected
    by the full collections, as every old object is. Not done if the host froze objects of
    its own (``gc.get_freeze_count()``): unfreezing would give those back to the collector."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_count()[0] >= _BULK and gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()
