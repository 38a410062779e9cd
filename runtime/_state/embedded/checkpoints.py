"""Task records, durably: ``CheckpointStore`` on diskcache, ``MemoryCheckpointStore`` in memory.

Durability: the store is a diskcache ``Cache`` (SQLite in WAL mode with ``synchronous=FULL``),
so ``save`` has fsynced the write-ahead log before it returns; a process crash or a power cut
after that keeps the record (given a disk that honours fsync).

JSON only, never pickle: keys are task ids stored as SQLite TEXT, values are the record's JSON
text stored in the row itself. ``_JSONTextDisk`` refuses anything else, so diskcache's pickling
paths are never reached, and a row it did not write is treated as corrupt instead of unpickled.

Nothing corrupt is fatal. A record that does not parse, has the wrong schema version or fails
validation is moved aside into ``<directory>/quarantine/`` with its raw bytes; a database SQLite
cannot read (not a database, another schema or foreign tables (see ``schema``), a folder in its
place, 0 bytes, truncated while open: "no such table") is moved aside as a whole
(``quarantine/cache-<time>/``) and a fresh one is created. Both are logged (``agent.error``)
and reported by the next ``load_recent``, the database with the ids of the tasks found in its
raw bytes (the tasks it may have held).

Other faults (see ``faults.py``): a deleted folder is created again and the records the open
connection still reads are copied into it, so nothing is lost; a read-only folder or a full
disk raise ``StoreUnavailable`` saying what to do, never a raw SQLite or OS error.

One SQLite connection serves every thread (behind the store's lock), so ``close()`` closes
all of it; diskcache would otherwise keep one per thread that ever touched the store.

The listing (``load_lazy``) parses no record: the fields a listing shows of each record are
kept beside it (see ``listing.py``). The group commit (``apply``, ``save``) writes them in the
record's own row, in the same statement (a round of one record: an insert into a TEMP view
whose trigger writes the row) or the same transaction; SQLite triggers on ``Cache`` write a row
of the table ``Listed`` from the JSON text stored by any other path (diskcache's own ``set``,
an older skillrt), and drop it with a deleted row (``delete``, a quarantine): the listing and
the records cannot disagree, not even after a crash between two commits. A store made before
the table existed (or whose table or triggers went missing) has it built from its JSON once,
at opening, in one transaction.

Layout under ``directory``::

    cache/          the diskcache (cache.db and its WAL)
    quarantine/     records and whole databases moved aside
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import operator
import os
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import diskcache
from pydantic_core import from_json, to_json

from skillrt._io.bulk import gc_paused
from skillrt._io.faults import (
    classify,
    quarantine_file,
    scan_task_ids,
    unavailable,
    undecodable,
)
from skillrt._io.opening import opening
from skillrt._state.embedded.listing import (
    FIELDS,
    LISTED_BY_WRITER,
    LISTED_QUERY,
    ensure_listing,
)
from skillrt._state.embedded.schema import CHECKPOINT_SCHEMA, foreign_schema
from skillrt._state.protocol import LazyLoad, LazyRecord, LoadResult, TaskStore
from skillrt._state.records import (
    SCHEMA_VERSION,
    RecordText,
    TaskRecord,
    dump_record,
    listing_of,
    parse_record,
)
from skillrt.exceptions import CheckpointCorrupt

__all__ = [
    "CheckpointStore",
    "LazyLoad",
    "LazyRecord",
    "LoadResult",
    "MemoryCheckpointStore",
    "TaskStore",
]


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
    # No memory-mapped reads: a database file cut short under a mapping kills the process
    # with SIGBUS; read() calls instead see the short file and report it.
    "sqlite_mmap_size": 0,
}


_DELETE = "DELETE FROM Cache WHERE key = ? AND raw = 1"

# A record's save as one statement: an insert into a view of the connection's own (TEMP: in
# no file, unseen by any other connection or process) whose trigger writes the record's row of
# ``Cache`` (the row diskcache's ``set`` writes for a JSON text kept in the row: raw str key,
# no expiry, mode raw, no side file). The columns: key, the time of the commit, the mark for
# the listing's triggers (``LISTED_BY_WRITER``: the row carries its listing, the triggers leave
# it alone; or 0: they list it from its JSON), diskcache's tag (the record's listing but its
# progress and steps, as a JSON array, see ``listing.py``; or, with no listing, its
# ``updated_at``), its JSON text, diskcache's size (the listing's progress, its JSON; or 0) and
# access time (the listing's number of steps; or the time of the commit). A row
# that carries its listing has no ``Listed`` row: one an earlier write left (an older skillrt's)
# is deleted in the same statement (a lookup that finds none writes no page). So a commit
# writes the record's page alone (and its key's index page when it is made or deleted), not
# a ``Listed`` page too. A round of one record is then one statement, its own transaction;
# and no parameter is NULL, as ``sqlite3`` binds None through its adapter lookup (an
# ``AttributeError`` made and dropped for each). ``expire_time`` is left out of the update:
# every row the store writes has it NULL (no record expires), and setting it again rewrote its
# index's page in every commit.
_PUT_VIEW = "skillrt_put"
# S608: SQL built from constants, never input.
_PUT = f"INSERT INTO temp.{_PUT_VIEW} VALUES (?, ?, ?, ?, ?, ?, ?)"  # noqa: S608
_MAKE_PUT = (
    f"CREATE TEMP VIEW IF NOT EXISTS {_PUT_VIEW} (key, at, mark, tag, value, size, seen) AS"
    " SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL",
    f"CREATE TEMP TRIGGER IF NOT EXISTS {_PUT_VIEW}_row INSTEAD OF INSERT ON {_PUT_VIEW} BEGIN"  # noqa: S608
    " INSERT INTO Cache (key, raw, store_time, expire_time, access_time, access_count, tag,"
    " size, mode, filename, value)"
    f" VALUES (NEW.key, 1, NEW.at, NULL, NEW.seen, NEW.mark, NEW.tag, NEW.size,"
    f" {diskcache.core.MODE_RAW}, NULL, NEW.value)"
    " ON CONFLICT (key, raw) DO UPDATE SET store_time = excluded.store_time,"
    " access_time = excluded.access_time, access_count = excluded.access_count,"
    " tag = excluded.tag, size = excluded.size, mode = excluded.mode, filename = NULL,"
    " value = excluded.value;"
    f" DELETE FROM Listed WHERE NEW.mark = {LISTED_BY_WRITER} AND rowid ="
    " (SELECT rowid FROM Cache WHERE key = NEW.key AND raw = 1);"
    " END",
)


def _make_put(db: sqlite3.Connection) -> None:
    """``_PUT``'s view and trigger, on a connection that has none yet (kept in memory)."""
    db.execute("PRAGMA temp_store = MEMORY")
    for statement in _MAKE_PUT:
        db.execute(statement)


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


# diskcache keeps the number and the total size of its rows in ``Settings`` with five triggers on
# ``Cache``, for ``len()`` and for evicting. A checkpoint store never evicts and never asks for
# its length, and the triggers were half of every commit: one more page in each write-ahead
# log commit, and about 70 µs of SQLite's CPU per upsert (262 -> 161 µs a commit, 135 -> 65 µs
# of user CPU, one record, synchronous=FULL). They are not made, and a store that has them
# loses them when it opens. An older skillrt, or diskcache itself, making them again is
# harmless: they only count (``Settings`` then holds a stale count, which nothing reads).
_COUNTING_TRIGGERS = (
    "Settings_count_insert",
    "Settings_count_delete",
    "Settings_size_insert",
    "Settings_size_update",
    "Settings_size_delete",
)
_MAKES_A_COUNTING_TRIGGER = "CREATE TRIGGER IF NOT EXISTS Settings_"
# diskcache's index of ``expire_time``, for expiring and culling: no record expires (the column
# is always NULL), and the store never culls; but a record made or deleted wrote its page, one
# more page of the write-ahead log in two of a task's four commits (a task cycle of insert, two
# updates and a delete: 426 k -> 407 k instructions). It is not made, and a store that has it
# loses it when it opens. An older skillrt (diskcache itself) makes it again at its opening,
# over the rows there: harmless, only slower.
_EXPIRY_INDEX = "Cache_expire_time"
_MAKES_THE_EXPIRY_INDEX = f"CREATE INDEX IF NOT EXISTS {_EXPIRY_INDEX} "


# Forks of this process so far (counted in the child): a connection made before a fork is not
# the child's to use. Compared at every use of the connection instead of ``os.getpid()``, a
# system call in CPython 3.11 (one per commit).
_forks = [0]


def _forked() -> None:
    _forks[0] += 1


os.register_at_fork(after_in_child=_forked)


class _OneConnectionCache(diskcache.Cache):  # type: ignore[misc]  # no type hints
    """diskcache with one connection for every thread instead of one per thread: the store
    serialises its calls with its own lock, and ``close()`` then really closes everything.
    Without diskcache's counting triggers (see ``_COUNTING_TRIGGERS``) and its index of
    expiry times (``_EXPIRY_INDEX``)."""

    def __init__(self, directory: str, **kwargs: Any) -> None:
        self._one: sqlite3.Connection | None = None
        self._one_fork = _forks[0]
        # diskcache's opening rewrites each of its settings in a transaction of its own, a
        # dozen commits each fsynced at ``synchronous=FULL``: tens of milliseconds of a
        # start-up spent waiting on the disk for values that are there already. They are
        # written at NORMAL instead (in WAL mode: never corrupt, maybe not yet durable), and
        # FULL is set again before the store writes anything of its own: its first commit's
        # fsync of the write-ahead log then makes these earlier frames durable too.
        # A database that is there already, in WAL mode, has the whole opening run in one
        # transaction on one connection (``_batch``): one commit instead of some twenty, and
        # no closing and opening again halfway (diskcache's own way of setting its timeout),
        # whose close checkpointed the log into the database, fsyncing both, and deleted it.
        # A write is still made, so a read-only folder or a full disk is found at opening.
        self._opening = True
        self._batch_wanted = os.path.isfile(os.path.join(directory, diskcache.core.DBNAME))
        self._batch = False
        self._busy_ms = int(kwargs.get("timeout", 60) * 1000)
        try:
            super().__init__(directory, **kwargs)
            for name in _COUNTING_TRIGGERS:  # a store made before they went: no write if none
                self._con.execute(f"DROP TRIGGER IF EXISTS {name}")
            self._con.execute(f"DROP INDEX IF EXISTS {_EXPIRY_INDEX}")
            if self._batch:
                self._con.execute("COMMIT")
                self._con.execute(f"PRAGMA busy_timeout = {self._busy_ms}")
        except BaseException:
            self._opening = self._batch = False
            self.close()  # and with it the transaction, rolled back
            raise
        finally:
            self._opening = self._batch = self._batch_wanted = False
        self.reset("sqlite_synchronous", self.sqlite_synchronous, update=False)

    def reset(self, key: str, value: Any = diskcache.core.ENOVAL, update: bool = True) -> Any:
        if key != "sqlite_synchronous" or not self._opening or value is diskcache.core.ENOVAL:
            return super().reset(key, value, update)
        # While opening: NORMAL (see __init__), set before the transaction (SQLite refuses to
        # change it inside one); the value stored in Settings is the one asked for.
        if update:
            self._sql("UPDATE Settings SET value = ? WHERE key = ?", (value, key))
        if not self._batch:
            self._con.execute("PRAGMA synchronous = NORMAL")
        setattr(self, key, value)
        return value

    @property
    def _sql(self) -> Callable[..., Any]:
        execute = self._con.execute
        if not self._opening:
            return execute

        def sql(statement: str, *args: Any) -> Any:
            if statement.startswith((_MAKES_A_COUNTING_TRIGGER, _MAKES_THE_EXPIRY_INDEX)):
                return None  # diskcache's opening
            return execute(statement, *args)

        return sql

    @property
    def _con(self) -> sqlite3.Connection:
        if self._one is not None and self._one_fork != _forks[0]:  # a forked child
            self._one = None
        if self._one is None:
            con = sqlite3.connect(
                os.path.join(self._directory, diskcache.core.DBNAME),
                timeout=self._timeout,
                isolation_level=None,
                check_same_thread=False,
            )
            try:  # per-connection pragmas (WAL, synchronous) as stored in Settings
                stored = con.execute("SELECT key, value FROM Settings").fetchall()
            except sqlite3.OperationalError:
                stored = []
            self._one, self._one_fork = con, _forks[0]
            for key, value in stored:
                if key.startswith("sqlite_"):
                    self.reset(key, value, update=False)
            if self._batch_wanted and self._opening:
                self._batch_wanted = False
                self._begin_opening(con, dict(stored))
        return self._one

    def _begin_opening(self, con: sqlite3.Connection, stored: dict[str, Any]) -> None:
        """Open the opening's one transaction, if the database is as diskcache leaves it in
        WAL mode: then none of its pragmas needs changing inside it."""
        con.execute(f"PRAGMA busy_timeout = {self._busy_ms}")  # another process may open it
        (mode,) = con.execute("PRAGMA journal_mode").fetchone()
        if mode != "wal" or stored.get("sqlite_journal_mode") != "wal":
            con.execute("PRAGMA busy_timeout = 0")  # diskcache's opening retries by itself
            return
        con.execute("BEGIN IMMEDIATE")
        self._batch = True

    def close(self) -> None:
        if self._batch:
            return  # diskcache's close halfway through the opening: this connection goes on
        con, self._one = self._one, None
        if con is not None:
            con.close()


_UPDATED_AT = operator.itemgetter(3)  # a LazyRecord's updated_at
_NUMBERS = (int, float)
_WIDTH = len(FIELDS)


def _listed_row(record: TaskRecord | RecordText) -> tuple[str, str, int] | None:
    """The listing ``record``'s row carries (see ``listing.py``): the listing taken with its
    text (or, for a record, from it now): its fields as one JSON array (the row's ``tag``),
    its progress's JSON (its ``size``) and its number of steps (its ``access_time``); None when
    there is none (its JSON is then parsed by the triggers)."""
    listing = record.listing if isinstance(record, RecordText) else listing_of(record)
    if listing is None:
        return None
    try:
        fields = to_json(listing[:_WIDTH], inf_nan_mode="null").decode()  # (bound as text:
        # ``sqlite3`` binds bytes at ~2 k instructions more a commit)
    except ValueError:  # a value that is no JSON: the triggers read the text instead
        return None
    return fields, listing[_WIDTH], listing[_WIDTH + 1]


def _fsync_dir(path: Path) -> None:
    """``blog.files.fsync_dir``, imported on the quarantine path only: the files module loads
    the file locks (filelock), which listing the tasks (``skillrt tasks``) never takes."""
    from skillrt.blog.files import fsync_dir

    fsync_dir(path)


def _stamp() -> str:
    now = time.time()
    base = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now))
    return f"{base}-{secrets.token_hex(3)}"


def _safe_name(task_id: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "_", task_id)[:64].strip(".") or "record"
    if cleaned != task_id:
        cleaned += "-" + hashlib.sha256(task_id.encode("utf-8", "replace")).hexdigest()[:8]
    return cleaned


# ``_rows``' columns: every text as bytes (a key's type said apart), numbers as they are.
_ROWS = (
    "SELECT rowid, CAST(key AS BLOB), typeof(key) = 'text', raw,"
    " CASE typeof(tag) WHEN 'text' THEN CAST(tag AS BLOB) ELSE tag END, mode,"
    " CAST(filename AS BLOB), CAST(value AS BLOB) FROM Cache"
)

_KEYS = "SELECT CAST(key AS BLOB), typeof(key) = 'text' FROM Cache WHERE raw = 1"


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _key_of(key: object, text: int) -> object:
    """A row's key as ``_rows`` read it: a text key as str (as bytes when it is not UTF-8:
    then it is no task id), any other as it is."""
    if text and isinstance(key, bytes):
        try:
            return key.decode("utf-8")
        except UnicodeDecodeError:
            return key
    return key


class CheckpointStore:
    """Task records in a diskcache under ``directory`` (see the module docstring)."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory).expanduser().resolve()
        self.cache_dir = self.directory / "cache"
        self.quarantine_dir = self.directory / "quarantine"
        self.db_path = self.cache_dir / diskcache.core.DBNAME
        self._db_file = os.fspath(self.db_path)  # (a str: no Path method per commit)
        self._lock = threading.RLock()
        self._reports: list[str] = []
        self._identity: tuple[int, int] | None = None
        self.resets = 0  # databases moved aside since opening: the runtime writes its records again
        self._put_on: sqlite3.Connection | None = None  # the connection ``_PUT`` is made on
        self._cursor: sqlite3.Cursor | None = None  # and a cursor of it for one-write rounds
        self._cache = self._open()

    def _new_cache(self) -> diskcache.Cache:
        cache = _OneConnectionCache(
            str(self.cache_dir), timeout=10, disk=_JSONTextDisk, **_CACHE_SETTINGS
        )
        try:  # diskcache made its tables if they were missing: are they the ones it reads?
            cache._sql("SELECT rowid, key, raw, tag, mode, filename, value FROM Cache LIMIT 0")
            ensure_listing(cache._con.execute)
            st = os.stat(self.db_path)
        except BaseException:
            cache.close()
            raise
        self._identity = (st.st_dev, st.st_ino)
        return cache

    def _open(self) -> diskcache.Cache:
        """Open the database: what cannot be read is moved aside, a missing folder made."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            fault = classify(exc, self.db_path)
            raise unavailable("task checkpoints", self.directory, fault, exc) from exc
        # Another process may be making the database right now; the lock file is beside the
        # cache folder, which moving a database aside moves whole.
        with opening(self.cache_dir):
            return self._open_checked()

    def _open_checked(self) -> diskcache.Cache:
        if self.db_path.is_dir():
            self._move_database_aside("a folder stands where the database file should be")
        elif self.db_path.is_file() and self.db_path.stat().st_size == 0:
            self._move_database_aside("the database file is empty (0 bytes)")
        elif (
            self.db_path.is_file()
            and (foreign := foreign_schema(self.db_path, CHECKPOINT_SCHEMA)) is not None
        ):
            self._move_database_aside(foreign)
        try:
            return self._new_cache()
        except (sqlite3.Error, OSError) as exc:
            fault = classify(exc, self.db_path)
            if fault not in ("corrupt", "missing"):
                raise unavailable("task checkpoints", self.directory, fault, exc) from exc
            if fault == "corrupt":
                self._move_database_aside(str(exc))
        try:
            return self._new_cache()
        except (sqlite3.Error, OSError) as exc:
            fault = classify(exc, self.db_path)
            raise unavailable("task checkpoints", self.directory, fault, exc) from exc

    # --- reading rows -------------------------------------------------------------------------

    def _rows(self, where: str = "", params: tuple[object, ...] = ()) -> list[_Row]:
        # Reads go to diskcache's Cache table directly, through its own connection: one query
        # for a bulk load instead of a lookup per key, the updated_at tag to skip old records
        # unparsed, and every text as bytes so that not even a bad text encoding can break a
        # read (a damaged byte in a tag made every command exit 74): a key that is not UTF-8
        # is no task id, its row is moved aside.
        rows = self._cache._sql(_ROWS + where, params).fetchall()
        return [
            _Row(rowid, _key_of(key, text), raw, tag, mode, filename, value)
            for rowid, key, text, raw, tag, mode, filename, value in rows
        ]

    def _single_out_undecodable(self) -> int:
        """Move aside each row whose key or tag is not UTF-8 (what Python's ``sqlite3``
        cannot read as text); how many there were. (Its value is read as bytes, and parsed.)"""
        moved = 0
        for row in self._rows():
            bad = [
                name
                for name, value in (("key", row.key), ("listing", row.tag))
                if isinstance(value, bytes) and not _utf8(value)
            ]
            if bad:
                key = row.key.decode("utf-8", "replace") if isinstance(row.key, bytes) else row.key
                reason = f"its {' and '.join(bad)} is not UTF-8 text (a damaged byte)"
                self._reports.append(self._quarantine_row(row._replace(key=key), reason))
                moved += 1
        return moved

    def _check(self, row: _Row) -> TaskRecord:
        """The row's record; ValueError saying why it is unusable."""
        if not row.raw_key or not isinstance(row.key, str):
            raise ValueError("key is not a task id")
        if row.mode != diskcache.core.MODE_RAW or row.filename is not None:
            raise ValueError(f"stored in diskcache mode {row.mode}, not as JSON text")
        return parse_record(row.key, row.value)

    # --- moving aside -------------------------------------------------------------------------

    def _quarantine_row(self, row: _Row, reason: str) -> str:
        """Write the raw value to ``quarantine/`` (fsynced), then drop the row."""
        name = row.key if isinstance(row.key, str) and row.key else f"row{row.rowid}"
        self.quarantine_dir.mkdir(parents=True, exist_ok=True)
        target = self.quarantine_dir / f"record-{_safe_name(name)}-{_stamp()}.json"
        with target.open("xb") as fh:
            fh.write(row.value or b"")
            fh.flush()
            os.fsync(fh.fileno())
        _fsync_dir(self.quarantine_dir)
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
        if not self.cache_dir.exists():
            return
        self.resets += 1
        self.quarantine_dir.mkdir(parents=True, exist_ok=True)
        target = self.quarantine_dir / f"cache-{_stamp()}"
        os.replace(self.cache_dir, target)
        _fsync_dir(self.quarantine_dir)
        _fsync_dir(self.directory)
        name = diskcache.core.DBNAME
        suspects = scan_task_ids(target / name, target / f"{name}-wal")
        held = (
            f"it may have held tasks {', '.join(suspects)}"
            if suspects
            else "no task could be found in it: any task it held is lost"
        )
        self._reports.append(
            f"checkpoint database {self.cache_dir} unreadable ({detail}); moved to {target}; {held}"
        )
        _log.error(
            "agent.error",
            where="checkpoints",
            error="CheckpointCorrupt",
            detail=detail,
            database=str(self.cache_dir),
            moved_to=str(target),
        )

    def _recover(self, exc: BaseException) -> None:
        """After an error: a corrupt database is moved aside and a fresh one opened, a deleted
        folder made again; anything else raises ``StoreUnavailable`` saying what to do."""
        fault = classify(exc, self.db_path)
        if fault == "corrupt" and undecodable(exc) and self._single_out_undecodable():
            return  # the rows that could not be read are moved aside, the rest kept
        if fault == "corrupt":
            self._cache.close()
            self._move_database_aside(str(exc))
            self._cache = self._open()
        elif fault == "missing":
            self._rescue()
        else:
            raise unavailable("task checkpoints", self.directory, fault, exc) from exc

    def _check_file(self) -> None:
        """Before a write: if the database file was deleted (its folder removed under us),
        copy what the open connection still reads into a new one, so nothing is lost; if
        another file took its place, open that one."""
        try:
            st = os.stat(self._db_file)
        except FileNotFoundError:
            self._rescue()
            return
        except OSError as exc:
            fault = classify(exc, self.db_path)
            raise unavailable("task checkpoints", self.directory, fault, exc) from exc
        if (st.st_dev, st.st_ino) != self._identity:
            self._cache.close()
            self._cache = self._open()
        elif st.st_size == 0:  # truncated under us: the open connection still reads it
            self._rescue(truncated=True)

    def _rescue(self, *, truncated: bool = False) -> None:
        """The database file is gone or cut to 0 bytes: write a copy of what the still-open
        connection reads (its cache and write-ahead log). If that copy is unreadable too, the
        usual path applies: moved aside, the tasks found in it reported, a fresh one made."""
        try:
            old = self._cache._con
            if truncated:
                moved = quarantine_file(self.db_path, self.quarantine_dir)
                self._reports.append(
                    f"checkpoint database {self.db_path} was cut to 0 bytes while open; the"
                    f" empty file moved to {moved}, its records copied from the open connection"
                )
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            if not self.db_path.exists():
                copy = sqlite3.connect(self.db_path)
                try:
                    old.backup(copy)
                finally:
                    copy.close()
        except (sqlite3.Error, OSError) as exc:
            fault = classify(exc, self.db_path)
            self._cache.close()
            if fault != "corrupt":
                raise unavailable("task checkpoints", self.directory, fault, exc) from exc
            # The open connection could not be read whole either: what it held is lost.
            self._move_database_aside(f"could not be copied from the open connection: {exc}")
        finally:
            self._cache.close()
        self._cache = self._open()
        _log.error(
            "agent.error",
            where="checkpoints",
            detail="the checkpoint database was deleted or cut short; made again",
            database=str(self.db_path),
        )

    # --- the API ------------------------------------------------------------------------------

    def save(self, record: TaskRecord) -> None:
        """Write the record; it is on disk (WAL fsynced) when this returns."""
        self.apply([record], [])

    def _write(self, write: Callable[[], object]) -> None:
        """Run ``write`` under the lock; after a corrupt or deleted database, once more on the
        fresh one. Other faults raise ``StoreUnavailable``."""
        with self._lock:
            try:
                self._check_file()
                write()
            except (sqlite3.Error, OSError) as exc:
                self._recover(exc)
                try:
                    write()
                except (sqlite3.Error, OSError) as again:
                    fault = classify(again, self.db_path)
                    raise unavailable("task checkpoints", self.directory, fault, again) from again

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
            except (sqlite3.Error, OSError) as exc:
                self._recover(exc)
                return None

    def delete(self, task_id: str) -> bool:
        """Remove a record; True when there was one. (A statement of its own, not diskcache's
        ``delete``: see ``apply`` for why.)"""
        if type(task_id) is not str:
            return False
        removed: list[int] = []

        def write() -> None:
            gone = self._cache._con.execute(_DELETE, (task_id,))
            removed.append(gone.rowcount)

        self._write(write)
        return bool(removed and removed[-1] > 0)

    def apply(self, saves: Sequence[TaskRecord | RecordText], deletes: list[str]) -> None:
        """Save and delete many records in one transaction: one fsync for all of them (the
        runtime's group commit). All of it is on disk when this returns, or none of it."""
        now = time.time()
        # The rows diskcache's set() writes for a JSON text kept in the row (raw str key, no
        # expiry, mode raw, no side file; see ``_PUT``), for the whole round: set() would look
        # each key up, then update or insert it, then cull, one record at a time. A record
        # whose listing came with it carries it in its row, not listed by the triggers from
        # its JSON (see ``listing.py``).
        rows: list[tuple[object, ...]] = []
        for record in saves:
            text = dump_record(record)
            listed = _listed_row(record)
            if listed is None:
                rows.append((record.id, now, 0, record.updated_at, text, 0, now))
            else:
                fields, progress, steps = listed
                rows.append((record.id, now, LISTED_BY_WRITER, fields, text, progress, steps))
        gone = [(task_id,) for task_id in deletes if type(task_id) is str] if deletes else []

        def write() -> None:
            # A plain transaction, not diskcache's ``transact()``: that one turns a failing
            # BEGIN (a database busy past the timeout, a disk I/O error) into its own
            # ``Timeout``, without the cause, which ``_write`` could not classify, and leaves
            # the transaction open when the COMMIT fails (a full disk). Here the SQLite error
            # itself reaches ``_write``, and a failed transaction is rolled back.
            db = self._cache._con
            cursor = self._cursor
            if db is not self._put_on or cursor is None:
                _make_put(db)
                self._put_on, self._cursor = db, (cursor := db.cursor())
            # A round of one write (a task at a time: every round) is one statement, which
            # SQLite makes a transaction of its own, committed (fsynced) before it returns:
            # no BEGIN and COMMIT of its own to run. (Through a cursor kept for them: no
            # cursor made and dropped per commit. Both statements end with their step, so it
            # holds no read transaction open between commits.)
            if not gone and len(rows) == 1:
                cursor.execute(_PUT, rows[0])
                return
            if not rows and len(gone) == 1:
                cursor.execute(_DELETE, gone[0])
                return
            db.execute("BEGIN IMMEDIATE")
            try:
                if rows:
                    db.executemany(_PUT, rows)
                if gone:
                    db.executemany(_DELETE, gone)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        db.execute("ROLLBACK")
                raise

        self._write(write)

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
            except (sqlite3.Error, OSError) as exc:
                self._recover(exc)
                rows = []
            with gc_paused():
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

    def load_lazy(self, *, max_age_s: float, now: float) -> LazyLoad:
        """``load_recent`` without parsing the records: each one's id, state, error reason,
        ``updated_at`` and what a listing shows of it (``LazyRecord.listed``) are read from its
        ``Listed`` row or the listing its row carries (see ``listing.py``), no record parsed;
        the JSON is kept for
        ``parse_lazy``, and, if the database is lost while the runtime runs, for writing the
        dormant tasks again.

        A row the table does not vouch for (no ``Listed`` row, or one whose fields are not as
        the runtime writes them, or another schema version) goes through ``load_recent``'s
        full check now (and is quarantined if unusable); a record whose fields are sound but
        that fails validation is found, and quarantined, by ``parse_lazy``.
        """
        cutoff = now - max_age_s
        found: list[LazyRecord] = []
        unlisted: list[int | str] = []
        with self._lock, gc_paused():
            for attempt in range(2):
                try:  # one pass over the table; each row let go once read (no list of them)
                    self._read_listed(self._cache._con.execute(LISTED_QUERY, (cutoff,)),
                                      cutoff, found, unlisted)  # fmt: skip
                    break
                except (sqlite3.Error, OSError, UnicodeDecodeError) as exc:
                    found.clear()
                    unlisted.clear()
                    # A damaged row moved aside (or the database): read what is left again.
                    self._recover(exc)
                    if attempt:
                        break
            for rowid_or_key in unlisted:  # each row as it is stored
                rest = (
                    self._rows(" WHERE rowid = ?", (rowid_or_key,))
                    if type(rowid_or_key) is int
                    else self._rows(" WHERE key = ? AND raw = 1", (rowid_or_key,))
                )
                if not rest:
                    continue
                row = rest[0]
                try:
                    record = self._check(row)
                except ValueError as exc:
                    self._reports.append(self._quarantine_row(row, str(exc)))
                    continue
                if record.updated_at >= cutoff:  # sound once pydantic coerced it (a "1.5")
                    found.append(
                        LazyRecord(
                            record.id,
                            record.state,
                            record.error_reason,
                            record.updated_at,
                            row.value or b"",
                        )
                    )
            quarantined, self._reports = self._reports, []
        found.sort(key=_UPDATED_AT, reverse=True)
        return LazyLoad(records=found, quarantined=quarantined)

    @staticmethod
    def _read_listed(
        rows: Iterable[tuple[Any, ...]],
        cutoff: float,
        found: list[LazyRecord],
        unlisted: list[int | str],
    ) -> None:
        """``LISTED_QUERY``'s rows into ``found`` (as the table vouches for them), and into
        ``unlisted`` the others (to be checked in full): the rowid of a row the table does not
        vouch for, the key of a record's own row whose fields are not as the runtime writes
        them."""
        # No attribute lookups per row; a NamedTuple's own __new__ costs more than tuple's.
        make, add, skip, numbers = tuple.__new__, found.append, unlisted.append, _NUMBERS
        for key, value, fields, progress, steps in rows:
            try:  # fields: the listing's JSON array, or a rowid (see LISTED_QUERY)
                head = from_json(fields, cache_strings=False)
            except (ValueError, TypeError):
                skip(fields if type(fields) is int else key)
                continue
            if (
                type(head) is list
                and len(head) == _WIDTH
                and head[3] == key
                and type(head[2]) is int
                and head[2] == SCHEMA_VERSION
                and type(head[0]) is str
                and (head[1] is None or type(head[1]) is str)
                and type(head[4]) in numbers
            ):
                updated = head[4]
                if updated >= cutoff:
                    state, reason = head[0], head[1]
                    del head[:5]  # LISTED's fields but the last two, which follow
                    head.append(progress)
                    head.append(steps)
                    add(make(LazyRecord, (key, state, reason, float(updated), value, tuple(head))))
                continue
            skip(key)  # not as the runtime writes it: checked in full

    def parse_lazy(self, lazy: LazyRecord) -> TaskRecord | None:
        """The record of a ``load_lazy`` entry; None when it does not validate (then it is read
        again and quarantined, as ``get`` does) or is gone."""
        try:
            return parse_record(lazy.id, lazy.text)
        except ValueError:
            return self.get(lazy.id)

    def take_reports(self) -> list[str]:
        """What was moved aside since the last load or call, as ``load_recent`` reports it
        (a record ``get`` or ``parse_lazy`` found unusable), now rather than at the next load."""
        with self._lock:
            reports, self._reports = self._reports, []
        return reports

    def all_ids(self) -> list[str]:
        """Every task id in the store, sorted."""
        with self._lock:
            try:
                rows = self._cache._sql(_KEYS).fetchall()
            except (sqlite3.Error, OSError) as exc:
                self._recover(exc)
                return []
        keys = (_key_of(key, text) for key, text in rows)  # (a key not UTF-8 is no task id)
        return sorted(key for key in keys if isinstance(key, str))

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
        text = dump_record(record)
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
        texts = [(record.id, dump_record(record)) for record in saves]
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
