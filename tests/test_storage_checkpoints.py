"""The task stores: round trips, the window, quarantine of a bad record, durability when a save
returns; on SQLite (diskcache) also JSON only, never pickle, and a damaged database file.

The contract tests run on every store: the embedded SQLite store, the in-memory one and the
shared PostgreSQL store. Tests that damage or read the SQLite file itself (its rows' modes, a
pickled row, an unreadable file, torn pages) are about that file and stay on SQLite.
"""

from __future__ import annotations

import json
import os
import pickle
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from freezegun import freeze_time

from skillrt._state.embedded.checkpoints import (
    CheckpointStore,
    LoadResult,
    MemoryCheckpointStore,
    TaskStore,
)
from skillrt._state.records import SCHEMA_VERSION, TaskRecord

from .stores import StoreKind

NOW = 1_750_000_000.0


def record(task_id: str, *, updated_at: float = NOW, state: str = "EXECUTING") -> TaskRecord:
    return TaskRecord(
        id=task_id,
        session_id="s1",
        state=state,
        intent={"type": "WRITE_ARTICLE", "confidence": 0.9},
        raw_input="写一篇关于 Rust 所有权的文章",
        skill="WriteArticle",
        params={"topic": "Rust 所有权"},
        steps={"context": {"posts": ["a.md"]}, "outline": ["一", "二"]},
        progress={"step": 2, "total_steps": 4},
        tokens=120,
        cost=0.001,
        created_at=updated_at - 10,
        updated_at=updated_at,
    )


@pytest.fixture(params=["disk", "memory", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TaskStore]:
    if request.param == "postgres":
        with StoreKind("postgres", request.getfixturevalue("pg_url")).open(tmp_path) as shared:
            yield shared
        return
    made: TaskStore = (
        CheckpointStore(tmp_path / "ckpt") if request.param == "disk" else MemoryCheckpointStore()
    )
    yield made
    made.close()


def rows(directory: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(directory / "cache" / "cache.db") as db:
        return db.execute(
            "SELECT key, raw, typeof(key), typeof(value), mode, filename, value FROM Cache"
        ).fetchall()


def test_both_stores_satisfy_the_protocol(store: TaskStore) -> None:
    assert isinstance(store, TaskStore)


def test_round_trip(store: TaskStore) -> None:
    first = record("t1")
    store.save(first)
    store.save(record("t2", state="COMPLETED"))

    assert store.get("t1") == first
    assert store.get("missing") is None
    assert store.all_ids() == ["t1", "t2"]

    loaded = store.load_recent(max_age_s=3600, now=NOW)
    assert isinstance(loaded, LoadResult)
    assert {r.id for r in loaded.records} == {"t1", "t2"}
    assert loaded.quarantined == []

    changed = first.model_copy(update={"state": "PAUSED", "steps": {**first.steps, "c": "x"}})
    store.save(changed)
    assert store.get("t1") == changed

    assert store.delete("t1") is True
    assert store.delete("t1") is False
    assert store.get("t1") is None
    assert store.all_ids() == ["t2"]


def test_window_excludes_old_records_newest_first(store: TaskStore) -> None:
    store.save(record("fresh", updated_at=NOW - 60))
    store.save(record("newest", updated_at=NOW))
    store.save(record("edge", updated_at=NOW - 86_400))
    store.save(record("old", updated_at=NOW - 86_401))

    loaded = store.load_recent(max_age_s=86_400, now=NOW)
    assert [r.id for r in loaded.records] == ["newest", "fresh", "edge"]


def test_window_with_freezegun(store: TaskStore) -> None:
    with freeze_time("2025-03-01 12:00:00") as frozen:
        store.save(record("yesterday", updated_at=time.time()))
        frozen.tick(23 * 3600)
        store.save(record("today", updated_at=time.time()))
        frozen.tick(2 * 3600)  # "yesterday" is now 25 h old
        loaded = store.load_recent(max_age_s=24 * 3600, now=time.time())
    assert [r.id for r in loaded.records] == ["today"]
    assert store.get("yesterday") is not None  # out of the window, not deleted


# SQLite only: how diskcache stores a value (PostgreSQL's column is text; nothing else fits).


def test_values_are_json_text_never_pickle(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "ckpt")
    store.save(record("t1"))
    big = record("big")
    big.steps["content"] = "正文" * 60_000  # larger than diskcache's side-file threshold
    store.save(big)
    store.close()

    found = rows(tmp_path / "ckpt")
    assert len(found) == 2
    for key, raw, key_type, value_type, mode, filename, value in found:
        assert (raw, key_type, value_type, mode, filename) == (1, "text", "text", 1, None)
        assert isinstance(value, str)
        data = json.loads(value)
        assert data["id"] == key
        assert data["schema_version"] == SCHEMA_VERSION
    # Nothing beside the database: no side files (diskcache writes large values to files).
    names = {p.name for p in (tmp_path / "ckpt" / "cache").iterdir()}
    assert names <= {"cache.db", "cache.db-wal", "cache.db-shm"}


def test_store_refuses_to_pickle_anything(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "ckpt")
    with pytest.raises(TypeError):
        store._cache.set(("tuple", "key"), "{}")
    with pytest.raises(TypeError):
        store._cache.set("k", {"a": 1})
    store.close()


def corrupt(directory: Path, task_id: str, value: object, mode: int = 1) -> None:
    with sqlite3.connect(directory / "cache" / "cache.db") as db:
        db.execute("UPDATE Cache SET value = ?, mode = ? WHERE key = ?", (value, mode, task_id))


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("{not json", "invalid record"),
        (json.dumps({"id": "bad", "session_id": "s"}), "invalid record"),
        (json.dumps({**record("bad").model_dump(mode="json"), "schema_version": 99}), "99"),
        (
            json.dumps(
                {k: v for k, v in record("bad").model_dump().items() if k != "schema_version"}
            ),
            "no schema_version",
        ),
        (record("other").model_dump_json(), "stored under key"),
    ],
)
def test_corrupt_record_is_quarantined_and_reported(
    store_kind: StoreKind, tmp_path: Path, value: str, why: str
) -> None:
    check_quarantine(store_kind, tmp_path, value, why)


def test_a_value_that_is_not_utf8_is_quarantined(tmp_path: Path) -> None:
    """SQLite only: a PostgreSQL text column cannot hold such bytes in the first place."""
    check_quarantine(StoreKind("sqlite", None), tmp_path, b"\xff\xfe binary", "invalid record")


def check_quarantine(kind: StoreKind, tmp_path: Path, value: str | bytes, why: str) -> None:
    with kind.open(tmp_path) as store:
        store.save(record("good"))
        store.save(record("bad"))
        kind.corrupt(tmp_path, "bad", value)

        loaded = store.load_recent(max_age_s=3600, now=NOW)
        assert [r.id for r in loaded.records] == ["good"]
        assert len(loaded.quarantined) == 1
        assert "'bad'" in loaded.quarantined[0] and why in loaded.quarantined[0]
        expected = value if isinstance(value, bytes) else value.encode()
        assert kind.quarantined(tmp_path, "bad") == [expected]  # kept byte for byte
        assert store.all_ids() == ["good"]
        assert store.load_recent(max_age_s=3600, now=NOW).quarantined == []  # reported once


def test_get_of_a_corrupt_record_quarantines_it(store_kind: StoreKind, tmp_path: Path) -> None:
    with store_kind.open(tmp_path) as store:
        store.save(record("bad"))
        store_kind.corrupt(tmp_path, "bad", "[]")
        assert store.get("bad") is None
        assert store.all_ids() == []
        reported = store.load_recent(max_age_s=3600, now=NOW).quarantined
        assert len(reported) == 1 and "'bad'" in reported[0]
        assert store_kind.quarantined(tmp_path, "bad") == [b"[]"]


# SQLite only from here to the durability test: a pickled row, an unreadable database file and
# torn pages are what can go wrong with the diskcache file itself.


class _Trap:
    """Unpickling this would create a folder: the test checks it never happens."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.mkdir, (str(self.marker),))


def test_a_pickled_row_is_quarantined_not_unpickled(tmp_path: Path) -> None:
    directory = tmp_path / "ckpt"
    marker = tmp_path / "unpickled"
    store = CheckpointStore(directory)
    store.save(record("evil"))
    corrupt(directory, "evil", pickle.dumps(_Trap(marker)), mode=4)  # diskcache MODE_PICKLE

    assert store.get("evil") is None
    assert not marker.exists()
    reported = store.load_recent(max_age_s=3600, now=NOW).quarantined
    assert "mode 4" in reported[0]
    store.close()


def test_corrupt_database_file_is_moved_aside_and_the_store_starts(tmp_path: Path) -> None:
    directory = tmp_path / "ckpt"
    store = CheckpointStore(directory)
    store.save(record("lost"))
    store.close()
    db = directory / "cache" / "cache.db"
    for extra in ("cache.db-wal", "cache.db-shm"):
        (directory / "cache" / extra).unlink(missing_ok=True)
    db.write_bytes(b"this is not an SQLite database\x00" * 200)

    store = CheckpointStore(directory)
    loaded = store.load_recent(max_age_s=3600, now=NOW)
    assert loaded.records == []
    assert len(loaded.quarantined) == 1
    assert "unreadable" in loaded.quarantined[0]
    aside = list((directory / "quarantine").glob("cache-*"))
    assert len(aside) == 1
    assert (aside[0] / "cache.db").read_bytes().startswith(b"this is not an SQLite database")

    store.save(record("new"))  # the fresh store works
    assert store.all_ids() == ["new"]
    store.close()


def test_damaged_pages_found_later_are_handled_too(tmp_path: Path) -> None:
    directory = tmp_path / "ckpt"
    store = CheckpointStore(directory)
    for i in range(200):
        store.save(record(f"t{i:03d}"))
    store.close()
    with sqlite3.connect(directory / "cache" / "cache.db") as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db_file = directory / "cache" / "cache.db"
    data = bytearray(db_file.read_bytes())
    page = 4096
    for start in range(2 * page, len(data), page):  # keep the header and the settings page
        data[start : start + page] = b"\xa5" * page
    db_file.write_bytes(bytes(data))

    store = CheckpointStore(directory)
    loaded = store.load_recent(max_age_s=3600, now=NOW)
    assert any("unreadable" in q for q in loaded.quarantined)
    store.save(record("after"))
    assert store.get("after") is not None
    store.close()


def test_save_is_durable_when_it_returns(store_kind: StoreKind, tmp_path: Path) -> None:
    """A child process saves, then dies without closing anything; the record is there."""
    code = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from skillrt._state.embedded.checkpoints import CheckpointStore\n"
        "from skillrt._state.records import TaskRecord\n"
        "if sys.argv[2]:\n"
        "    from skillrt._state.postgres import PgDatabase, PgTaskStore\n"
        "    store = PgTaskStore(PgDatabase(sys.argv[2]))\n"
        "else:\n"
        "    store = CheckpointStore(Path(sys.argv[1]) / 'checkpoints')\n"
        "store.save(TaskRecord(id='crash', session_id='s', state='EXECUTING',"
        " steps={'outline': ['a']}, created_at=1.0, updated_at=2.0))\n"
        "os._exit(0)\n"
    )
    subprocess.run(
        [sys.executable, "-c", code, str(tmp_path), store_kind.state_url or ""],
        check=True,
        timeout=30,
    )
    with store_kind.open(tmp_path) as store:
        got = store.get("crash")
    assert got is not None and got.steps == {"outline": ["a"]}


def test_memory_store_copies_records(tmp_path: Path) -> None:
    store = MemoryCheckpointStore()
    original = record("t1")
    store.save(original)
    original.steps["later"] = "not saved"
    got = store.get("t1")
    assert got is not None and "later" not in got.steps


def test_a_group_commit_against_a_database_held_by_another_writer_says_so_and_loses_nothing(
    tmp_path: Path,
) -> None:
    from skillrt.exceptions import StoreUnavailable

    store = CheckpointStore(tmp_path / "ckpt")
    try:
        store.apply([record("kept")], [])
        store._cache._con.execute("PRAGMA busy_timeout = 50")  # not 10 s in a test
        other = sqlite3.connect(tmp_path / "ckpt" / "cache" / "cache.db", isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process writing, for longer than the timeout
        try:
            with pytest.raises(StoreUnavailable) as raised:
                store.apply([record("second")], ["kept"])
            assert "locked" in str(raised.value)
        finally:
            other.execute("ROLLBACK")
            other.close()
        # Nothing of the refused round was written, nothing before it lost, and the next
        # round is written: no transaction was left open.
        assert store.all_ids() == ["kept"]
        store.apply([record("second")], [])
        assert sorted(store.all_ids()) == ["kept", "second"]
    finally:
        store.close()
    again = CheckpointStore(tmp_path / "ckpt")
    assert sorted(again.all_ids()) == ["kept", "second"]
    again.close()


def test_a_round_of_one_write_is_one_statement_committed_by_itself(tmp_path: Path) -> None:
    """A round of one record (every round when tasks run one at a time) or of one delete is
    one statement, a transaction of its own: no BEGIN and COMMIT to run; a round of several
    is one transaction. Either is on disk for another connection when ``apply`` returns, and
    the view it writes through is the connection's own (in no file, seen by no other)."""
    from skillrt._state.embedded.schema import CHECKPOINT_SCHEMA, foreign_schema
    from skillrt._state.records import RecordText

    store = CheckpointStore(tmp_path / "ckpt")
    db_path = tmp_path / "ckpt" / "cache" / "cache.db"
    store.apply([RecordText.of(record("a"))], [])
    made: list[str] = []
    store._cache._con.set_trace_callback(made.append)
    store.apply([RecordText.of(record("a", state="WAITING"))], [])
    store.apply([], ["a"])
    # (A statement is traced again for each trigger program it runs.)
    assert len(set(made)) == 2
    assert not [sql for sql in made if sql.startswith(("BEGIN", "COMMIT"))]
    made.clear()
    store.apply([RecordText.of(record("b")), record("c")], [])
    assert made[0] == "BEGIN IMMEDIATE" and made[-1] == "COMMIT"
    other = sqlite3.connect(db_path)
    try:
        assert other.execute("SELECT key FROM Cache ORDER BY key").fetchall() == [("b",), ("c",)]
        # Each row carries its listing (no Listed row: see test_listing_in_row.py).
        carried = other.execute(
            "SELECT key, access_count, typeof(tag) FROM Cache ORDER BY key"
        ).fetchall()
        assert carried == [("b", -1, "text"), ("c", -1, "text")]
        assert other.execute("SELECT key FROM Listed").fetchall() == []
        names = {name for (name,) in other.execute("SELECT name FROM sqlite_master")}
        assert not any("skillrt" in name for name in names)
    finally:
        other.close()
    assert foreign_schema(db_path, CHECKPOINT_SCHEMA) is None
    # Between commits the store holds no read transaction open (its statements end with
    # their step): another process checkpoints the whole log into the database.
    store.apply([RecordText.of(record("b", state="WAITING"))], [])
    other = sqlite3.connect(db_path)
    try:
        busy, _, _ = other.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        assert busy == 0
    finally:
        other.close()
    store.close()
    reopened = CheckpointStore(tmp_path / "ckpt")  # a new connection makes its own view
    reopened.apply([RecordText.of(record("e"))], [])
    assert reopened.all_ids() == ["b", "c", "e"]
    assert [r.id for r in reopened.load_lazy(max_age_s=1e12, now=NOW).records] == ["b", "c", "e"]
    reopened.close()


def test_a_round_of_one_write_against_a_locked_database_says_so(tmp_path: Path) -> None:
    from skillrt.exceptions import StoreUnavailable

    store = CheckpointStore(tmp_path / "ckpt")
    try:
        store.apply([record("kept")], [])
        store._cache._con.execute("PRAGMA busy_timeout = 50")
        other = sqlite3.connect(tmp_path / "ckpt" / "cache" / "cache.db", isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(StoreUnavailable, match="locked"):
                store.apply([record("second")], [])
            with pytest.raises(StoreUnavailable, match="locked"):
                store.apply([], ["kept"])
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert store.all_ids() == ["kept"]
        store.apply([record("second")], [])
        assert store.all_ids() == ["kept", "second"]
    finally:
        store.close()
