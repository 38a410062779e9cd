"""Task records, durably: ``CheckpointStore`` on diskcache, ``MemoryCheckpointStore`` in memory.

Durability: the store is a diskcache ``Cache`` (SQLite in WAL mode with ``synchronous=FULL``),
so ``save`` has fsynced the write-ahead log before it returns; a process crash or a power cut
after that keeps the record (given a disk that honours fsync).

JSON only, never pickle: keys are task ids stored as SQLite TEXT, values are the record's JSON
text stored in the row itself. ``_JSONTextDisk`` refuses anything else, so diskcache's pickling
paths are never reached, and a row it did not write is treated as corrupt instead of unpickled.

Nothing corrupt is fatal. A record that does not parse, has the wrong schema version or fails
validation is moved aside into ``<directory>/quarantine/`` with its raw bytes; a database file
SQLite cannot read is moved aside as a whole (``quarantine/cache-<time>/``) and a fresh one is
created. Both are logged (``agent.error``) and reported by the next ``load_recent``.

Layout under ``directory``::

    cache/          the diskcache (cache.db and its WAL)
    quarantine/     records and whole databases moved aside
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import logging
import os
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol, runtime_checkable

import diskcache
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from skillrt.exceptions import CheckpointCorrupt, UserError
from skillrt.storage.files import fsync_dir
from skillrt.storage.records import SCHEMA_VERSION, RecordText, TaskRecord

__all__ = ["CheckpointStore", "LoadResult", "MemoryCheckpointStore", "TaskStore"]


class _StdlibLog:
    """The stdlib logger ``skillrt.storage``: silent until the host configures logging (this
    layer imports nothing of the runtime, so it does not use the runtime's logger)."""

    def __init__(self) -> None:
        self._logger = logging.getLogger("skillrt.storage")

    def error(self, event: str, **fields: Any) -> None:
        if self._logger.isEnabledFor(logging.ERROR):
            self._logger.error("%s %s", event, " ".join(f"{k}={v!r}" for k, v in fields.items()))


_log = _StdlibLog()

_CACHE_SETTINGS: dict[str, Any] = {
    "sqlite_synchronous": 2,  # FULL: the WAL is fsynced at every commit
    "sqlite_journal_mode": "wal",
    "eviction_policy": "none",  # a checkpoint store never evicts
    "statistics": 0,
}


@dataclass(slots=True)
class LoadResult:
    """What ``load_recent`` found: the records in the window and what was moved aside."""

    records: list[TaskRecord] = field(default_factory=list)
    quarantined: list[str] = field(default_factory=list)


@runtime_checkable
class TaskStore(Protocol):
    """Where the runtime keeps task records. ``CheckpointStore`` and ``MemoryCheckpointStore``."""

    def save(self, record: TaskRecord) -> None: ...
    def apply(self, saves: Sequence[TaskRecord | RecordText], deletes: list[str]) -> None: ...
    def get(self, task_id: str) -> TaskRecord | None: ...
    def delete(self, task_id: str) -> bool: ...
    def load_recent(self, *, max_age_s: float, now: float) -> LoadResult: ...
    def all_ids(self) -> list[str]: ...
    def close(self) -> None: ...


class _Row(NamedTuple):
    rowid: int
    key: object
    raw_key: int
    tag: object
    mode: int
    filename: str | None
    value: bytes | None


class _JSONTextDisk(diskcache.Disk):  # type: ignore[misc]  # diskcache ships no type hints
    """Keys and values as SQLite TEXT in the row. Anything else is refused, so nothing pickles."""

    def put(self, key: object) -> tuple[str, bool]:
        if type(key) is not str:
            raise TypeError(f"checkpoint keys are str task ids, not {type(key).__name__}")
        return key, True

    def get(self, key: object, raw: bool) -> object:
        # A row written by something else (raw=False means a pickled key): hand back the bytes,
        # never unpickle them. ``all_ids`` skips keys that are not str.
        return key

    def store(
        self, value: object, read: bool, key: object = diskcache.UNKNOWN
    ) -> tuple[int, int, None, str]:
        if read or type(value) is not str:
            raise TypeError("checkpoint values are JSON text (str)")
        # Always in the row, whatever its size: diskcache's side files are not fsynced.
        return 0, diskcache.core.MODE_RAW, None, value

    def fetch(self, mode: int, filename: str | None, value: object, read: bool) -> object:
        if read or mode != diskcache.core.MODE_RAW or filename is not None:
            raise CheckpointCorrupt("diskcache row", f"stored in mode {mode}, not as JSON text")
        return bytes(value) if isinstance(value, bytes | memoryview) else value


def _is_corruption(exc: BaseException) -> bool:
    """SQLite cannot read the file (not a database, malformed image); not a busy/locked error."""
    return isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError)


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while a bulk load builds thousands of records (it creates no
    cycles); the collector's repeated passes over the growing heap otherwise double the time."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _stamp() -> str:
    now = time.time()
    base = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now))
    return f"{base}-{secrets.token_hex(3)}"


def _safe_name(task_id: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "_", task_id)[:64].strip(".") or "record"
    if cleaned != task_id:
        cleaned += "-" + hashlib.sha256(task_id.encode("utf-8", "replace")).hexdigest()[:8]
    return cleaned


def _dump(record: TaskRecord | RecordText) -> str:
    if isinstance(record, RecordText):  # serialised by the runtime a moment ago
        return record.text
    try:
        return record.model_dump_json()
    except PydanticSerializationError as exc:
        raise UserError(f"task record {record.id!r} is not JSON-serialisable: {exc}") from exc


def _parse(task_id: str, raw: bytes | None) -> TaskRecord:
    """Parse a stored value; raises ValueError saying why it is unusable."""
    if not raw:
        raise ValueError("empty value")
    try:
        record = TaskRecord.model_validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0] if exc.errors() else {"msg": str(exc)}
        loc = ".".join(str(p) for p in first.get("loc", ()))
        raise ValueError(
            f"invalid record ({exc.error_count()} errors; {loc}: {first['msg']})"
        ) from exc
    if "schema_version" not in record.model_fields_set:
        raise ValueError("record has no schema_version")
    if record.schema_version != SCHEMA_VERSION:
        raise ValueError(f"schema_version {record.schema_version}, expected {SCHEMA_VERSION}")
    if record.id != task_id:
        raise ValueError(f"record id {record.id!r} stored under key {task_id!r}")
    return record


class CheckpointStore:
    """Task records in a diskcache under ``directory`` (see the module docstring)."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory).expanduser().resolve()
        self.cache_dir = self.directory / "cache"
        self.quarantine_dir = self.directory / "quarantine"
        self._lock = threading.RLock()
        self._reports: list[str] = []
        self.directory.mkdir(parents=True, exist_ok=True)
        try:
            self._cache = self._new_cache()
        except sqlite3.DatabaseError as exc:
            if not _is_corruption(exc):
                raise
            self._move_database_aside(str(exc))
            self._cache = self._new_cache()

    def _new_cache(self) -> diskcache.Cache:
        return diskcache.Cache(str(self.cache_dir), disk=_JSONTextDisk, **_CACHE_SETTINGS)

    # --- reading rows -------------------------------------------------------------------------

    def _rows(self, where: str = "", params: tuple[object, ...] = ()) -> list[_Row]:
        # Reads go to diskcache's Cache table directly, through its own connection: one query
        # for a bulk load instead of a lookup per key, the updated_at tag to skip old records
        # unparsed, and values as bytes so that not even a bad text encoding can break a read.
        query = "SELECT rowid, key, raw, tag, mode, filename, CAST(value AS BLOB) FROM Cache"
        return [_Row(*row) for row in self._cache._sql(query + where, params).fetchall()]

    def _check(self, row: _Row) -> TaskRecord:
        """The row's record; ValueError saying why it is unusable."""
        if not row.raw_key or not isinstance(row.key, str):
            raise ValueError("key is not a task id")
        if row.mode != diskcache.core.MODE_RAW or row.filename is not None:
            raise ValueError(f"stored in diskcache mode {row.mode}, not as JSON text")
        return _parse(row.key, row.value)

    # --- moving aside -------------------------------------------------------------------------

    def _quarantine_row(self, row: _Row, reason: str) -> str:
        """Write the raw value to ``quarantine/`` (fsynced), then drop the row."""
        name = row.key if isinstance(row.key, str) else f"row{row.rowid}"
        self.quarantine_dir.mkdir(parents=True, exist_ok=True)
        target = self.quarantine_dir / f"record-{_safe_name(name)}-{_stamp()}.json"
        with target.open("xb") as fh:
            fh.write(row.value or b"")
            fh.flush()
            os.fsync(fh.fileno())
        fsync_dir(self.quarantine_dir)
        self._cache._sql("DELETE FROM Cache WHERE rowid = ?", (row.rowid,))
        _log.error(
            "agent.error",
            where="checkpoints",
            error="CheckpointCorrupt",
            task_id=name,
            detail=reason,
            moved_to=str(target),
        )
        return f"task record {name!r}: {reason}; moved to {target}"

    def _move_database_aside(self, detail: str) -> None:
        self.quarantine_dir.mkdir(parents=True, exist_ok=True)
        target = self.quarantine_dir / f"cache-{_stamp()}"
        os.replace(self.cache_dir, target)
        fsync_dir(self.quarantine_dir)
        fsync_dir(self.directory)
        self._reports.append(
            f"checkpoint database {self.cache_dir} unreadable ({detail}); moved to {target}"
        )
        _log.error(
            "agent.error",
            where="checkpoints",
            error="CheckpointCorrupt",
            detail=detail,
            database=str(self.cache_dir),
            moved_to=str(target),
        )

    def _recover(self, exc: sqlite3.DatabaseError) -> None:
        """Re-raise unless SQLite found the file corrupt; then move it aside and start afresh."""
        if not _is_corruption(exc):
            raise exc
        self._cache.close()
        self._move_database_aside(str(exc))
        self._cache = self._new_cache()

    # --- the API ------------------------------------------------------------------------------

    def save(self, record: TaskRecord) -> None:
        """Write the record; it is on disk (WAL fsynced) when this returns."""
        text = _dump(record)
        with self._lock:
            try:
                self._cache.set(record.id, text, tag=record.updated_at)
            except sqlite3.DatabaseError as exc:
                self._recover(exc)
                self._cache.set(record.id, text, tag=record.updated_at)

    def get(self, task_id: str) -> TaskRecord | None:
        """The record, or None when absent or corrupt (a corrupt one is quarantined)."""
        with self._lock:
            try:
                rows = self._rows(" WHERE key = ? AND raw = 1", (task_id,))
                if not rows:
                    return None
                try:
                    return self._check(rows[0])
                except ValueError as exc:
                    self._reports.append(self._quarantine_row(rows[0], str(exc)))
                    return None
            except sqlite3.DatabaseError as exc:
                self._recover(exc)
                return None

    def delete(self, task_id: str) -> bool:
        """Remove a record; True when there was one."""
        with self._lock:
            try:
                return bool(self._cache.delete(task_id))
            except sqlite3.DatabaseError as exc:
                self._recover(exc)
                return False

    def apply(self, saves: Sequence[TaskRecord | RecordText], deletes: list[str]) -> None:
        """Save and delete many records in one transaction: one fsync for all of them (the
        runtime's group commit). All of it is on disk when this returns, or none of it."""
        texts = [(record.id, _dump(record), record.updated_at) for record in saves]

        def write() -> None:
            with self._cache.transact():
                for task_id, text, updated_at in texts:
                    self._cache.set(task_id, text, tag=updated_at)
                for task_id in deletes:
                    self._cache.delete(task_id)

        with self._lock:
            try:
                write()
            except sqlite3.DatabaseError as exc:
                self._recover(exc)
                write()

    def load_recent(self, *, max_age_s: float, now: float) -> LoadResult:
        """Records with ``updated_at >= now - max_age_s`` (any state), newest first.

        ``quarantined`` describes everything moved aside since the store was opened or since
        the last ``load_recent``: corrupt records found now or by ``get``, and a database moved
        aside at open or later.
        """
        cutoff = now - max_age_s
        records: list[TaskRecord] = []
        with self._lock:
            try:
                rows = self._rows()
            except sqlite3.DatabaseError as exc:
                self._recover(exc)
                rows = []
            with _gc_paused():
                for row in rows:
                    if isinstance(row.tag, int | float) and row.tag < cutoff:
                        continue  # outside the window: not even parsed
                    try:
                        record = self._check(row)
                    except ValueError as exc:
                        self._reports.append(self._quarantine_row(row, str(exc)))
                        continue
                    if record.updated_at >= cutoff:
                        records.append(record)
            quarantined, self._reports = self._reports, []
        records.sort(key=lambda r: r.updated_at, reverse=True)
        return LoadResult(records=records, quarantined=quarantined)

    def all_ids(self) -> list[str]:
        """Every task id in the store, sorted."""
        with self._lock:
            try:
                rows = self._cache._sql("SELECT key FROM Cache WHERE raw = 1").fetchall()
            except sqlite3.DatabaseError as exc:
                self._recover(exc)
                return []
        return sorted(key for (key,) in rows if isinstance(key, str))

    def close(self) -> None:
        """Close the database connection (reopened on next use)."""
        with self._lock:
            self._cache.close()

    def __enter__(self) -> CheckpointStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class MemoryCheckpointStore:
    """The same API in memory, for tests and ``checkpoints = false``. Records round-trip JSON."""

    __test__ = False

    def __init__(self) -> None:
        self._data: dict[str, str] = {}
        self._lock = threading.Lock()

    def save(self, record: TaskRecord) -> None:
        text = _dump(record)
        with self._lock:
            self._data[record.id] = text

    def get(self, task_id: str) -> TaskRecord | None:
        with self._lock:
            text = self._data.get(task_id)
        return None if text is None else TaskRecord.model_validate_json(text)

    def delete(self, task_id: str) -> bool:
        with self._lock:
            return self._data.pop(task_id, None) is not None

    def apply(self, saves: Sequence[TaskRecord | RecordText], deletes: list[str]) -> None:
        texts = [(record.id, _dump(record)) for record in saves]
        with self._lock:
            self._data.update(texts)
            for task_id in deletes:
                self._data.pop(task_id, None)

    def load_recent(self, *, max_age_s: float, now: float) -> LoadResult:
        cutoff = now - max_age_s
        with self._lock:
            texts = list(self._data.values())
        records = [TaskRecord.model_validate_json(t) for t in texts]
        records = [r for r in records if r.updated_at >= cutoff]
        records.sort(key=lambda r: r.updated_at, reverse=True)
        return LoadResult(records=records)

    def all_ids(self) -> list[str]:
        with self._lock:
            return sorted(self._data)

    def close(self) -> None:
        """Nothing to close; the records stay (the store is the process's memory)."""
