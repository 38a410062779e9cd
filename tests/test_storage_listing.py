"""The checkpoint database's ``Listed`` table never disagrees with the checkpoints: it is kept
by SQLite from the JSON stored, by every path that writes, after a kill -9 between commits,
and for a store made before it existed (built once, at opening, in one transaction)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from skillrt._io.redaction import Redactor
from skillrt._state.embedded.checkpoints import CheckpointStore
from skillrt._state.embedded.listing import FIELDS, LISTED_BY_WRITER, RETIRED_COLUMNS, TRIGGERS
from skillrt._state.embedded.offline import resumable_on_disk
from skillrt._state.protocol import LazyLoad
from skillrt._state.records import RecordText, TaskRecord, dump_record
from skillrt._state.summary import summarize, summarize_restored
from skillrt.messages import TaskSummary
from skillrt.outcomes import as_restored, is_resumable
from skillrt.settings import load_config

HOUR = 3600.0


def _record(task_id: str, now: float, **fields: Any) -> TaskRecord:
    base: dict[str, Any] = {
        "id": task_id,
        "session_id": "s",
        "state": "EXECUTING",
        "created_at": now - 60,
        "updated_at": now - 30,
        "skill": "WriteArticle",
        "intent": {"type": "WRITE_ARTICLE"},
        "raw_input": f"write about {task_id}",
        "steps": {"context": {"topic": task_id}},
        "progress": {"step": 1, "total_steps": 3},
    }
    return TaskRecord(**{**base, **fields})


def _expected_rows(db: Path) -> dict[str, tuple[Any, ...]]:
    """What each Listed row must hold, computed in Python from the JSON in ``Cache``."""
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT key, value FROM Cache WHERE raw = 1").fetchall()
    finally:
        conn.close()
    out: dict[str, tuple[Any, ...]] = {}
    for key, value in rows:
        data = json.loads(value)
        fields = [data.get(path) for path in FIELDS if path != "intent.type"]
        fields.insert(FIELDS.index("intent.type"), (data.get("intent") or {}).get("type"))
        out[key] = (*fields, data.get("progress", {}), len(data.get("steps", {})))
    return out


def _listing_rows(db: Path) -> dict[str, tuple[Any, ...]]:
    """What lists each record as stored: its Listed row, or, with none, the listing its Cache
    row carries (the group commit's: the fields in its tag, the progress in its size, the steps
    in its access time)."""
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT key, fields, progress, steps FROM Listed").fetchall()
        carried = conn.execute(
            "SELECT c.key, c.tag, c.size, CAST(c.access_time AS INTEGER) FROM Cache AS c"
            " LEFT JOIN Listed AS l ON l.rowid = c.rowid"
            " WHERE c.raw = 1 AND l.rowid IS NULL AND c.access_count = ?"
            " AND typeof(c.tag) = 'text'",
            (LISTED_BY_WRITER,),
        ).fetchall()
    finally:
        conn.close()
    out = {
        key: (*json.loads(fields), None if progress is None else json.loads(progress), steps)
        for key, fields, progress, steps in rows
    }
    for key, tag, progress, steps in carried:
        out[key] = (*json.loads(tag), json.loads(progress), steps)
    return out


def lists_as_parsed(store: CheckpointStore, *, max_age_s: float = 24 * HOUR) -> LazyLoad:
    """Every record is listed from its Listed row, and the listing the store gives is the
    listing the parsed records give; returns what ``load_lazy`` found."""
    redactor = Redactor()
    loaded = store.load_lazy(max_age_s=max_age_s, now=time.time())
    assert all(entry.listed is not None for entry in loaded.records)
    parsed = [store.parse_lazy(entry) for entry in loaded.records]
    assert summarize_restored(loaded.records, redactor) == [
        summarize(as_restored(r), redactor) for r in parsed if r is not None
    ]
    return loaded


def _agrees(store: CheckpointStore) -> None:
    """The Listed table matches the JSON row for row, and the listing is the parsed one."""
    assert _listing_rows(store.db_path) == _expected_rows(store.db_path)
    lists_as_parsed(store)


def test_every_write_path_keeps_the_listing(tmp_path: Path) -> None:
    now = time.time()
    store = CheckpointStore(tmp_path / "checkpoints")
    # diskcache's own set (an older skillrt's save), save() and the group commit
    store._cache.set("saved", dump_record(_record("saved", now)), tag=now - 30)
    store.save(_record("saved-now", now))
    store.apply([_record("applied", now), RecordText.of(_record("text", now))], [])
    _agrees(store)
    # Updated: a step more, paused with a question, failed with an error.
    store.apply(
        [
            _record("saved", now, steps={"a": 1, "b": 2}, progress={"step": 2}, tokens=7),
            _record("applied", now, state="PAUSED", question="Which title?", cost=1),
            RecordText.of(
                _record("text", now, state="ERROR", error_reason="CRASH", last_error="boom")
            ),
        ],
        [],
    )
    _agrees(store)
    assert _listing_rows(store.db_path)["saved"][-1] == 2  # the number of completed steps
    store.apply([], ["applied"])  # the group commit's delete
    assert store.delete("text")  # the store's delete
    assert store._cache.delete("saved-now")  # diskcache's own (an older skillrt's)
    assert set(_listing_rows(store.db_path)) == {"saved"}
    _agrees(store)
    store.close()


def test_a_row_moved_aside_leaves_no_listing_row(tmp_path: Path) -> None:
    now = time.time()
    store = CheckpointStore(tmp_path / "checkpoints")
    store.apply([_record("good", now), _record("odd", now)], [])
    conn = sqlite3.connect(store.db_path)
    with conn:  # sound JSON, no record (its tokens a word): listed, found bad when parsed
        text = json.dumps({**_record("odd", now).model_dump(mode="json"), "tokens": "many"})
        conn.execute("UPDATE Cache SET value = ? WHERE key = 'odd'", (text,))
    conn.close()
    assert _listing_rows(store.db_path)["odd"][FIELDS.index("tokens")] == "many"
    loaded = store.load_lazy(max_age_s=HOUR, now=now)
    [odd] = [entry for entry in loaded.records if entry.id == "odd"]
    assert summarize_restored([odd], Redactor()) == [None]  # so it is parsed...
    assert store.parse_lazy(odd) is None  # ...and moved aside, reported
    assert "odd" in " ".join(store.take_reports())
    assert set(_listing_rows(store.db_path)) == {"good"}
    _agrees(store)
    store.close()


def _old_store(directory: Path, records: list[TaskRecord]) -> Path:
    """A store as made before the Listed table: its records written, then the table and its
    triggers dropped (with a record written after that, which no trigger saw)."""
    store = CheckpointStore(directory)
    store.apply(records[:-1], [])
    store.close()
    conn = sqlite3.connect(store.db_path)
    with conn:
        for trigger in TRIGGERS:
            conn.execute(f"DROP TRIGGER {trigger}")
        conn.execute("DROP TABLE Listed")
    with conn:
        conn.execute(
            "INSERT INTO Cache (key, raw, store_time, expire_time, access_time, access_count,"
            " tag, size, mode, filename, value) VALUES (?, 1, 0, NULL, 0, 0, ?, 0, 1, NULL, ?)",
            (records[-1].id, records[-1].updated_at, records[-1].model_dump_json()),
        )
    conn.close()
    return store.db_path


def test_an_old_store_gets_its_listing_once_at_opening(tmp_path: Path) -> None:
    now = time.time()
    records = [_record(f"t{i}", now, updated_at=now - i) for i in range(5)]
    db = _old_store(tmp_path / "checkpoints", records)
    # A value that is not JSON: no Listed row; the listing moves it aside, as before.
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE Cache SET value = 'not json' WHERE key = 't3'")
    conn.close()
    store = CheckpointStore(tmp_path / "checkpoints")
    assert set(_listing_rows(db)) == {"t0", "t1", "t2", "t4"}
    loaded = store.load_lazy(max_age_s=HOUR, now=now)
    assert [e.id for e in loaded.records] == ["t0", "t1", "t2", "t4"]
    assert len(loaded.quarantined) == 1 and "t3" in loaded.quarantined[0]
    _agrees(store)
    store.apply([_record("t0", now, state="PAUSED")], [])  # and kept from then on
    _agrees(store)
    store.close()


def test_a_missing_trigger_has_the_listing_built_again(tmp_path: Path) -> None:
    now = time.time()
    store = CheckpointStore(tmp_path / "checkpoints")
    store.apply([_record("a", now), _record("b", now)], [])
    store.close()
    conn = sqlite3.connect(store.db_path)
    with conn:
        conn.execute("DROP TRIGGER Listed_update")
    with conn:  # written while no trigger watched
        text = _record("a", now, state="PAUSED", tokens=99).model_dump_json()
        conn.execute("UPDATE Cache SET value = ? WHERE key = 'a'", (text,))
    conn.close()
    store = CheckpointStore(tmp_path / "checkpoints")
    assert _listing_rows(store.db_path)["a"][0] == "PAUSED"
    assert _listing_rows(store.db_path)["a"][FIELDS.index("tokens")] == 99
    _agrees(store)
    store.close()


_WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from skillrt._state.embedded.checkpoints import CheckpointStore
    from skillrt._state.records import TaskRecord
    store = CheckpointStore(Path(sys.argv[1]))
    now = time.time()
    round = 0
    while True:
        round += 1
        records = [
            TaskRecord(id=f"t{i}", session_id="s", state="EXECUTING", created_at=now - 60,
                       updated_at=now - 30 + round * 1e-3, raw_input=f"round {round}",
                       steps={f"s{j}": "x" * 200 for j in range(round % 7)},
                       progress={"step": round % 7}, tokens=round)
            for i in range(20)
        ]
        store.apply(records, [] if round % 5 else ["t19"])
        if round == 3:
            print("writing", flush=True)
    """
)


def test_a_kill_between_commits_leaves_both_tables_agreeing(tmp_path: Path) -> None:
    directory = tmp_path / "checkpoints"
    child = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(directory)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "writing"
        time.sleep(0.3)  # many commit rounds, the last one maybe cut short
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
        if child.stdout is not None:
            child.stdout.close()
    store = CheckpointStore(directory)
    rows = _listing_rows(store.db_path)
    assert len(rows) >= 19
    rounds = {row[FIELDS.index("raw_input")] for row in rows.values()}  # one round's records
    assert len(rounds) <= 2  # t19 may be older: deleted and written again every 5 rounds
    _agrees(store)
    store.close()


def test_skillrt_tasks_lists_from_the_table_and_reports_a_bad_record(tmp_path: Path) -> None:
    now = time.time()
    config = load_config(content_root=tmp_path, state_dir=tmp_path / ".skillrt")
    store = CheckpointStore(config.state_path / "checkpoints")
    records = [_record(f"t{i}", now, updated_at=now - i) for i in range(3)]
    records.append(_record("done", now, state="COMPLETED"))
    records.append(_record("odd", now))
    store.apply(records, [])
    store.close()
    conn = sqlite3.connect(store.db_path)
    with conn:
        bad = json.dumps({**records[-1].model_dump(mode="json"), "steps": "none"})
        conn.execute("UPDATE Cache SET value = ? WHERE key = 'odd'", (bad,))
    conn.close()
    listed, quarantined = resumable_on_disk(config)
    redactor = Redactor(config.secret_values())
    wanted = [r for r in records[:3] if is_resumable(r)]
    assert listed == [summarize(as_restored(r.model_copy()), redactor) for r in wanted]
    assert len(quarantined) == 1 and "odd" in quarantined[0]


def test_a_summary_made_without_validation_equals_a_validated_one() -> None:
    now = time.time()
    record = as_restored(_record("x", now, question="Which?", last_error="e", cost=2, tokens=3))
    made = summarize(record, Redactor())
    [fast] = summarize_restored([_lazy(record)], Redactor())
    assert fast == made == TaskSummary.model_validate(made.model_dump())
    assert fast is not None
    assert fast.model_dump_json() == made.model_dump_json()
    assert fast.model_fields_set == made.model_fields_set


def _lazy(record: TaskRecord) -> Any:
    from skillrt._state.protocol import LazyRecord

    return LazyRecord(record.id, record.state, record.error_reason, record.updated_at,
                      record.model_dump_json().encode())  # fmt: skip


def test_the_retired_listing_table_is_dropped_not_taken_for_foreign(tmp_path: Path) -> None:
    """A store that had the first layout's ``Listing`` table (one column per field) is opened
    as it is, that table and its triggers dropped and ``Listed`` built, nothing moved aside."""
    now = time.time()
    store = CheckpointStore(tmp_path / "checkpoints")
    store.apply([_record("a", now), _record("b", now)], [])
    store.close()
    conn = sqlite3.connect(store.db_path)
    with conn:
        for trigger in TRIGGERS:
            conn.execute(f"DROP TRIGGER {trigger}")
        conn.execute("DROP TABLE Listed")
        columns = ", ".join(RETIRED_COLUMNS)
        conn.execute(f"CREATE TABLE Listing ({columns}, PRIMARY KEY (key)) WITHOUT ROWID")
        conn.execute("CREATE TRIGGER Listing_delete AFTER DELETE ON Cache BEGIN"
                     " DELETE FROM Listing WHERE key = OLD.key; END")  # fmt: skip
    conn.close()
    store = CheckpointStore(tmp_path / "checkpoints")
    assert store.resets == 0
    assert not (tmp_path / "checkpoints" / "quarantine").exists()
    conn = sqlite3.connect(store.db_path)
    names = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert "Listing" not in names and "Listing_delete" not in names
    assert {"Listed", *TRIGGERS} <= names
    assert store.delete("b")
    _agrees(store)
    store.close()
