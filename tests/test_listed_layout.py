"""The ``Listed`` table keyed by its ``Cache`` row's rowid: a store with the layout of
2026-11-26 (keyed by task id, ``WITHOUT ROWID``) is rebuilt once at opening and lists right,
nothing moved aside; a ``Listed`` row that is not its ``Cache`` row's is not trusted. And a
bulk build under ``gc_paused`` leaves no young collection to walk it."""

from __future__ import annotations

import gc
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from skillrt._io.bulk import gc_paused
from skillrt._io.redaction import Redactor
from skillrt._state.embedded.checkpoints import CheckpointStore
from skillrt._state.embedded.listing import FIELDS, TRIGGERS, ensure_listing
from skillrt._state.records import RecordText, TaskRecord
from skillrt._state.summary import summarize_restored

from .test_storage_listing import HOUR, _record, lists_as_parsed

# The layout of 2026-11-26, as that version made it.
_PATHS = ", ".join(f"'$.{path}'" for path in FIELDS)
_OLD_ROW = (
    f"NEW.key, json_extract(NEW.value, {_PATHS}),"
    " CASE coalesce(json_type(NEW.value, '$.progress'), 'missing') WHEN 'missing' THEN '{}'"
    " WHEN 'object' THEN json_extract(NEW.value, '$.progress') END,"
    " CASE coalesce(json_type(NEW.value, '$.steps'), 'missing') WHEN 'missing' THEN 0"
    " WHEN 'object' THEN (SELECT count(*) FROM json_each(NEW.value, '$.steps')) END"
    " WHERE NEW.raw = 1 AND typeof(NEW.key) = 'text' AND json_valid(NEW.value)"
)
_OLD_LAYOUT = (
    "CREATE TABLE Listed (key TEXT PRIMARY KEY, fields TEXT, progress TEXT, steps INTEGER)"
    " WITHOUT ROWID",
    f"CREATE TRIGGER Listed_insert AFTER INSERT ON Cache BEGIN INSERT INTO Listed SELECT"
    f" {_OLD_ROW}; END",
    "CREATE TRIGGER Listed_update AFTER UPDATE ON Cache BEGIN DELETE FROM Listed WHERE key ="
    f" OLD.key; INSERT INTO Listed SELECT {_OLD_ROW}; END",
    "CREATE TRIGGER Listed_delete AFTER DELETE ON Cache BEGIN DELETE FROM Listed WHERE key ="
    " OLD.key; END",
)


def _sql(db: Path, *statements: str) -> list[Any]:
    conn = sqlite3.connect(db)
    try:
        with conn:
            rows = [conn.execute(statement).fetchall() for statement in statements]
    finally:
        conn.close()
    return rows[-1] if rows else []


def _lists_right(store: CheckpointStore, ids: set[str]) -> None:
    """Every record is listed from its Listed row, as its parsed record would be."""
    loaded = lists_as_parsed(store, max_age_s=HOUR)
    assert {entry.id for entry in loaded.records} == ids
    assert loaded.quarantined == []


def test_a_store_of_the_old_layout_is_rebuilt_once_and_lists_right(tmp_path: Path) -> None:
    now = time.time()
    store = CheckpointStore(tmp_path / "checkpoints")
    store.apply([_record(f"t{i}", now, updated_at=now - i) for i in range(4)], [])
    store.close()
    db = store.db_path
    # The old layout, its rows written by its own triggers (an update of every record).
    drops = [f"DROP TRIGGER {name}" for name in TRIGGERS]
    _sql(db, *drops, "DROP TABLE Listed", *_OLD_LAYOUT, "UPDATE Cache SET value = value")
    assert len(_sql(db, "SELECT key FROM Listed")) == 4
    store = CheckpointStore(tmp_path / "checkpoints")
    assert store.resets == 0
    assert not (tmp_path / "checkpoints" / "quarantine").exists()
    [(table,)] = _sql(db, "SELECT sql FROM sqlite_master WHERE name = 'Listed'")
    assert "WITHOUT ROWID" not in table
    # Each Listed row carries its Cache row's rowid, and the store does not rebuild it again.
    joined = _sql(db, "SELECT count(*) FROM Cache AS c JOIN Listed AS l ON l.rowid = c.rowid"
                      " AND l.key = c.key")  # fmt: skip
    assert joined == [(4,)]
    assert not ensure_listing(store._cache._con.execute)
    _lists_right(store, {"t0", "t1", "t2", "t3"})
    # Kept from then on, by every write path.
    store.apply([_record("t0", now, state="PAUSED", question="Which?")], ["t1"])
    store.save(_record("t9", now))
    assert store.delete("t2")
    _lists_right(store, {"t0", "t3", "t9"})
    store.close()


def _by_triggers(records: list[TaskRecord]) -> list[RecordText]:
    """The records' texts without their listings: the triggers make their Listed rows."""
    return [RecordText.of(record)._replace(listing=None) for record in records]


def test_a_listed_row_of_another_record_is_not_trusted(tmp_path: Path) -> None:
    """A Listed row whose key is not its Cache row's (damaged by hand) is not read: the
    record is parsed instead, and listed as it is."""
    now = time.time()
    store = CheckpointStore(tmp_path / "checkpoints")
    # (Listed rows made from their JSON: the group commit's rows carry their listing instead.)
    store.apply(_by_triggers([_record("a", now), _record("b", now, state="PAUSED", tokens=5)]), [])
    # Row a's Listed row says it is paused, and is filed under another key.
    _sql(
        store.db_path,
        "UPDATE Listed SET key = 'other', fields = json_set(fields, '$[0]', 'PAUSED')"
        " WHERE rowid = (SELECT rowid FROM Cache WHERE key = 'a')",
    )
    loaded = store.load_lazy(max_age_s=HOUR, now=now)
    entries = {entry.id: entry for entry in loaded.records}
    assert set(entries) == {"a", "b"}
    assert entries["a"].listed is None and entries["a"].state == "EXECUTING"
    assert entries["b"].listed is not None and entries["b"].state == "PAUSED"
    assert loaded.quarantined == []
    [a] = summarize_restored([entries["a"]], Redactor())
    assert a is not None and a.id == "a" and a.tokens == 0
    store.close()


def test_a_bulk_build_goes_to_the_oldest_generation_at_once() -> None:
    """What a bulk build made under ``gc_paused`` is in the oldest generation when the pause
    ends (no young collection walks it); a small build moves nothing; a host's frozen
    objects stay frozen."""
    with gc_paused():
        built = [[i] for i in range(20_000)]
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert id(built[0]) in oldest and id(built[-1]) in oldest
    gc.collect()
    young = [[0]]  # made after a collection: young
    with gc_paused():
        small = [[i] for i in range(10)]
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert id(young[0]) not in oldest and id(small[0]) not in oldest
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with gc_paused():
            again = [[i] for i in range(20_000)]
        assert gc.get_freeze_count() == frozen  # not given back to the collector
        assert len(again) == 20_000
    finally:
        gc.unfreeze()


def test_fields_not_as_written_send_the_record_to_the_full_check(tmp_path: Path) -> None:
    """A record's own row whose Listed fields are not as the runtime writes them (not JSON,
    another schema version) is read again by its key and checked in full: listed from its
    parsed record when it is sound, moved aside and reported when it is not."""
    now = time.time()
    store = CheckpointStore(tmp_path / "checkpoints")
    records = [_record("good", now), _record("garbled", now), _record("future", now)]
    store.apply(_by_triggers(records), [])
    rowid = "(SELECT rowid FROM Cache WHERE key = ?)"
    conn = sqlite3.connect(store.db_path)
    with conn:
        conn.execute(f"UPDATE Listed SET fields = 'not json' WHERE rowid = {rowid}", ("garbled",))
        future = _record("future", now).model_dump(mode="json") | {"schema_version": 99}
        conn.execute("UPDATE Cache SET value = ? WHERE key = 'future'", (json.dumps(future),))
    conn.close()
    loaded = store.load_lazy(max_age_s=HOUR, now=now)
    entries = {entry.id: entry for entry in loaded.records}
    assert set(entries) == {"good", "garbled"}
    assert entries["garbled"].listed is None and entries["good"].listed is not None
    assert len(loaded.quarantined) == 1 and "future" in loaded.quarantined[0]
    assert "schema_version 99" in loaded.quarantined[0]
    store.close()
