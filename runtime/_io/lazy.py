"""Modules imported in a thread the first time a task needs them.

A module imported on the event loop holds it for as long as the import takes: the browsing
agent and its backends take ~90 ms, Playwright ~65 ms more, and every other task and request
(``skillrt serve``) waited that long behind the first browsing task. ``import_off_loop``
imports them in a thread instead, while the loop goes on; the task that needs them waits.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from collections.abc import Iterable

__all__ = ["import_off_loop"]


async def import_off_loop(names: Iterable[str]) -> None:
    """Import the modules ``names`` in a thread, when one of them is not imported yet (then
    return at once). An ``ImportError`` is raised here, as the import would have raised it."""
    missing = [name for name in names if name not in sys.modules]
    if missing:
        await asyncio.to_thread(_import_all, missing)


def _import_all(names: list[str]) -> None:
    for name in names:
        importlib.import_module(name)
