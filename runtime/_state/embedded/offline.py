"""The resumable tasks of a blog, read straight from its checkpoints, without a runtime.

``resumable_on_disk`` is what ``skillrt tasks`` prints without opening a runtime (no model, no
blog memory, no history): the embedded store's unfinished checkpoints in the resume window that
no other process is running right now. It opens the state folder as a runtime's start does (and
fails as that would).
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Protocol

from pydantic_core import from_json

from skillrt._io.bulk import gc_paused
from skillrt._io.config_files import ensure_state
from skillrt._io.faults import classify, unavailable
from skillrt._io.redaction import Redactor
from skillrt._state.embedded.checkpoints import CheckpointStore
from skillrt._state.embedded.runlocks import RunLocks
from skillrt._state.summary import summarize, summarize_restored
from skillrt.messages import TaskSummary
from skillrt.outcomes import as_restored, is_resumable

__all__ = ["resumable_on_disk"]


def _json(text: bytes | str) -> bool:
    """Whether a record's text is JSON (UTF-8): one that is not is moved aside when resumed,
    so it is not listed (it is parsed, and so moved aside and named, now). Before, ``skillrt
    tasks`` listed it from its listing and ``skillrt resume`` then called it unknown."""
    try:
        from_json(text, cache_strings=False)
    except ValueError:
        return False
    return True


class StoreSettings(Protocol):
    """What listing reads of a ``RuntimeConfig`` (or of ``skillrt tasks``'s lighter reading
    of the same settings, which loads no pydantic-settings)."""

    @property
    def state_path(self) -> Path: ...

    @property
    def checkpoint_max_age_h(self) -> float: ...

    def secret_values(self) -> list[str]: ...


def resumable_on_disk(config: StoreSettings) -> tuple[list[TaskSummary], list[str]]:
    """The embedded store's resumable tasks, as a runtime started now would offer them (PAUSED,
    newest first), without starting one, and what was moved aside as unreadable. Only for the
    embedded store (``state_url`` unset)."""
    folder = ensure_state(config.state_path)
    redactor = Redactor(config.secret_values())
    try:
        store = CheckpointStore(folder / "checkpoints")
        runlocks = RunLocks(folder / "locks" / "running")
    except (sqlite3.Error, OSError) as exc:  # as a runtime's start would report it
        raise unavailable("state", folder, classify(exc, folder / ".gitignore"), exc) from exc
    try:
        window = config.checkpoint_max_age_h * 3600
        with gc_paused():  # thousands of entries, no cycles among them
            loaded = store.load_lazy(max_age_s=window, now=time.time())
            entries = [entry for entry in loaded.records if is_resumable(entry)]
            busy = runlocks.held_elsewhere([entry.id for entry in entries])
            entries = [entry for entry in entries if entry.id not in busy]
            # Summarised from what the store read with each (no record built), as a runtime's
            # listing does; a record whose fields are off is parsed (and moved aside if unusable).
            read = summarize_restored(entries, redactor)
            found: list[TaskSummary] = []
            for entry, summary in zip(entries, read, strict=True):
                if summary is not None and not _json(entry.text):
                    summary = None  # its listing is sound, its record not: resume says unknown
                if summary is None:
                    record = store.parse_lazy(entry)
                    summary = None if record is None else summarize(as_restored(record), redactor)
                if summary is not None:
                    found.append(summary)
            quarantined = [*loaded.quarantined, *store.take_reports()]
    finally:
        runlocks.close()
        store.close()
    return found, quarantined
