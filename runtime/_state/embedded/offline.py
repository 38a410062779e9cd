"""The resumable tasks of a blog, read straight from its checkpoints, without a runtime.

``resumable_on_disk`` is what ``skillrt tasks`` prints without opening a runtime (no model, no
blog memory, no history): the embedded store's unfinished checkpoints in the resume window that
no other process is running right now. It opens the state folder as a runtime's start does (and
fails as that would).
"""

from __future__ import annotations

import sqlite3
import time

from skillrt._io.faults import classify, unavailable
from skillrt._io.redaction import Redactor
from skillrt._state.embedded.checkpoints import CheckpointStore
from skillrt._state.embedded.runlocks import RunLocks
from skillrt._state.summary import summarize
from skillrt.messages import TaskSummary
from skillrt.outcomes import as_restored, is_resumable
from skillrt.settings import RuntimeConfig, ensure_state

__all__ = ["resumable_on_disk"]


def resumable_on_disk(config: RuntimeConfig) -> tuple[list[TaskSummary], list[str]]:
    """The embedded store's resumable tasks, as a runtime started now would offer them (PAUSED,
    newest first), without starting one, and what was moved aside as unreadable. Only for the
    embedded store (``state_url`` unset)."""
    folder = ensure_state(config.state_path)
    try:
        store = CheckpointStore(folder / "checkpoints")
        runlocks = RunLocks(folder / "locks" / "running")
    except (sqlite3.Error, OSError) as exc:  # as a runtime's start would report it
        raise unavailable("state", folder, classify(exc, folder / ".gitignore"), exc) from exc
    try:
        window = config.checkpoint_max_age_h * 3600
        loaded = store.load_lazy(max_age_s=window, now=time.time())
        parsed = (store.parse_lazy(entry) for entry in loaded.records if is_resumable(entry))
        records = [as_restored(r) for r in parsed if r is not None]
        quarantined = list(loaded.quarantined)
        busy = runlocks.held_elsewhere([r.id for r in records])
    finally:
        runlocks.close()
        store.close()
    redactor = Redactor(config.secret_values())
    return [summarize(r, redactor) for r in records if r.id not in busy], quarantined
