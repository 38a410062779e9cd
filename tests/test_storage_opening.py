"""Opening the checkpoint store again: diskcache's opening runs in one transaction on one
connection (a start-up's waits on the disk), and still leaves the store as it must be: every
commit fsynced (``synchronous=FULL``), its settings, its busy timeout, another process's
writer waited for, a database in another journal mode made WAL. (A read-only folder and a full
disk found at opening: ``test_storage_faults.py``.)"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

import diskcache
import pytest

from skillrt._state.embedded.checkpoints import CheckpointStore
from skillrt._state.records import TaskRecord
from skillrt.exceptions import StoreUnavailable

NOW = time.time()


def _record(task_id: str) -> TaskRecord:
    return TaskRecord(id=task_id, session_id="s", state="EXECUTING", created_at=NOW,
                      updated_at=NOW)  # fmt: skip


def _made(tmp_path: Path) -> Path:
    store = CheckpointStore(tmp_path / "checkpoints")
    store.save(_record("first"))
    store.close()
    return store.db_path


def _pragma(store: CheckpointStore, name: str) -> object:
    return store._cache._con.execute(f"PRAGMA {name}").fetchone()[0]


def _triggers(store: CheckpointStore, like: str) -> list[str]:
    query = "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE ? ORDER BY name"
    return [name for (name,) in store._cache._con.execute(query, (like,))]


def test_a_store_with_diskcaches_counting_triggers_loses_them_and_keeps_its_records(
    tmp_path: Path,
) -> None:
    db_path = _made(tmp_path)
    # diskcache itself (an older skillrt) opening the store makes its five triggers again
    diskcache.Cache(str(db_path.parent), eviction_policy="none").close()
    with sqlite3.connect(db_path) as con:
        names = "SELECT count(*) FROM sqlite_master WHERE name LIKE 'Settings_%'"
        assert con.execute(names).fetchone()[0] == 5
    store = CheckpointStore(tmp_path / "checkpoints")
    try:
        assert _triggers(store, "Settings_%") == []
        assert _triggers(store, "Listed_%") == ["Listed_delete", "Listed_insert", "Listed_update"]
        store.apply([_record("second")], ["first"])
        assert sorted(store.all_ids()) == ["second"]
        assert [r.id for r in store.load_lazy(max_age_s=1e9, now=time.time()).records] == ["second"]
    finally:
        store.close()


def _indexes(db_path: Path) -> list[str]:
    query = "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name"
    with sqlite3.connect(db_path) as con:
        return [name for (name,) in con.execute(query)]


def test_no_store_keeps_diskcaches_index_of_expiry_times(tmp_path: Path) -> None:
    db_path = _made(tmp_path)
    assert _indexes(db_path) == ["Cache_key_raw"]  # a new store never made it
    # diskcache itself (an older skillrt) opening the store makes it again, over the rows there
    cache = diskcache.Cache(str(db_path.parent), eviction_policy="none")
    cache.set("older", '{"schema_version": 1}', tag=NOW)  # its own set: culls by expiry time
    cache.close()
    assert _indexes(db_path) == ["Cache_expire_time", "Cache_key_raw"]
    store = CheckpointStore(tmp_path / "checkpoints")
    try:
        assert _indexes(db_path) == ["Cache_key_raw"]
        store.apply([_record("second")], ["first"])
        store._cache.set("third", '{"schema_version": 1}', tag=NOW)  # diskcache's set still works
        assert sorted(store.all_ids()) == ["older", "second", "third"]
        assert store.get("second") == _record("second")
    finally:
        store.close()


def test_a_store_opened_again_commits_at_full_and_keeps_its_settings(tmp_path: Path) -> None:
    db_path = _made(tmp_path)
    statements: list[str] = []
    connect = sqlite3.connect
    opened: list[sqlite3.Connection] = []

    def traced(*args: object, **kwargs: object) -> sqlite3.Connection:
        con = connect(*args, **kwargs)  # type: ignore[arg-type]
        con.set_trace_callback(statements.append)
        opened.append(con)
        return con

    sqlite3.connect = traced  # type: ignore[assignment]
    try:
        store = CheckpointStore(tmp_path / "checkpoints")
    finally:
        sqlite3.connect = connect  # type: ignore[assignment]
    try:
        # One read-only look at the schema, then one connection for the whole opening: the
        # settings written in one transaction, not closed and opened again halfway.
        assert len(opened) == 2
        assert statements.count("BEGIN IMMEDIATE") == 1 and statements.count("COMMIT") == 1
        assert _pragma(store, "synchronous") == 2  # FULL again before the store writes
        assert _pragma(store, "busy_timeout") == 10_000
        assert _pragma(store, "journal_mode") == "wal"
        settings = dict(store._cache._con.execute("SELECT key, value FROM Settings").fetchall())
        assert settings["sqlite_synchronous"] == 2 and settings["eviction_policy"] == "none"
        # diskcache's counting triggers are not made: a commit writes no Settings page
        assert _triggers(store, "Settings_%") == []
        store.save(_record("second"))
        assert sorted(store.all_ids()) == ["first", "second"]
    finally:
        store.close()
    again = CheckpointStore(db_path.parent.parent)
    assert sorted(again.all_ids()) == ["first", "second"]
    again.close()


def test_opening_waits_for_another_processs_writer(tmp_path: Path) -> None:
    db_path = _made(tmp_path)
    other = sqlite3.connect(db_path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # another process in the middle of a write
    released = threading.Timer(0.5, other.execute, ("COMMIT",))
    released.start()
    started = time.monotonic()
    store = CheckpointStore(tmp_path / "checkpoints")
    waited = time.monotonic() - started
    released.join()
    other.close()
    try:
        assert waited >= 0.4  # it waited for the writer instead of failing
        assert store.all_ids() == ["first"]
    finally:
        store.close()


def test_a_database_in_another_journal_mode_is_made_wal(tmp_path: Path) -> None:
    db_path = _made(tmp_path)
    con = sqlite3.connect(db_path, isolation_level=None)
    con.execute("PRAGMA journal_mode = DELETE")
    con.execute("UPDATE Settings SET value = 'delete' WHERE key = 'sqlite_journal_mode'")
    con.close()
    store = CheckpointStore(tmp_path / "checkpoints")
    try:
        assert _pragma(store, "journal_mode") == "wal"
        assert store.all_ids() == ["first"]
        assert store.take_reports() == []  # nothing moved aside
    finally:
        store.close()


def test_an_opening_that_fails_halfway_leaves_no_lock_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db_path = _made(tmp_path)

    def broken(self: object) -> None:
        raise sqlite3.OperationalError("disk I/O error")  # a fault late in diskcache's opening

    monkeypatch.setattr(diskcache.Cache, "drop_tag_index", broken)
    with pytest.raises(StoreUnavailable):
        CheckpointStore(tmp_path / "checkpoints")
    other = sqlite3.connect(db_path, isolation_level=None, timeout=0)
    other.execute("BEGIN IMMEDIATE")  # the failed opening's transaction is gone, not held
    other.execute("ROLLBACK")
    other.close()
    monkeypatch.undo()
    store = CheckpointStore(tmp_path / "checkpoints")
    assert store.all_ids() == ["first"]
    store.close()


def test_a_forked_child_writes_through_a_connection_of_its_own(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "checkpoints")
    store.save(_record("parent"))
    before = store._cache._con
    pid = os.fork()
    if pid == 0:  # the child: the parent's connection is not its to use
        code = 1
        try:
            theirs = store._cache._con
            store.save(_record("child"))
            code = 0 if theirs is not before and store.get("parent") is not None else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert store._cache._con is before  # the parent's own, still open
    assert store.get("child") == _record("child")
    store.close()
