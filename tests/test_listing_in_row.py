"""Layout 3: the group commit's row carries its own listing (in diskcache's ``tag``), so a
commit writes the record's page alone, not a ``Listed`` page too; the listing reads it as it
read a ``Listed`` row. A row written any other way, or changed by hand, is listed from its JSON
as before; an older skillrt's ``Listed`` row is not left behind stale; and an older version's
listing, which knows only ``Listed``, checks such a row in full (slower, never wrong)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from skillrt._state.embedded.checkpoints import CheckpointStore
from skillrt._state.embedded.listing import LISTED_BY_WRITER
from skillrt._state.records import RecordText

from .test_listed_layout import _sql
from .test_storage_listing import HOUR, _agrees, _record, lists_as_parsed

# Layout 2's listing query, as skillrt read the store before this layout (stop 39).
_LAYOUT_2_QUERY = (
    "SELECT c.key, CAST(c.value AS BLOB), CASE WHEN c.raw = 1 AND typeof(c.key) = 'text'"
    " AND c.mode = 1 AND c.filename IS NULL AND l.key = c.key AND l.fields IS NOT NULL"
    " THEN CAST(l.fields AS BLOB) ELSE c.rowid END, CAST(l.progress AS BLOB), l.steps"
    " FROM Cache AS c LEFT JOIN Listed AS l ON l.rowid = c.rowid"
    " WHERE NOT (typeof(c.tag) IN ('integer', 'real') AND c.tag < ?)"
)


def _frames(db: Path) -> int:
    """The frames in the write-ahead log since its last restart."""
    data = (db.parent / f"{db.name}-wal").read_bytes()
    salt, count, at = data[16:24], 0, 32
    while at + 24 <= len(data) and data[at + 8 : at + 16] == salt:
        count += 1
        at += 24 + 4096
    return count


def test_a_commit_writes_the_records_page_alone(tmp_path: Path) -> None:
    """A task's four commits (its record made, updated twice, deleted) write 2, 1, 1 and 2
    pages (the record's, and its key's index page when it is made or deleted): no Listed
    page (3, 2, 2, 3 before)."""
    now = time.time()
    store = CheckpointStore(tmp_path / "checkpoints")
    store.apply([RecordText.of(_record("dormant", now))], [])  # a store holds some
    written = []
    for step in range(3):
        before = _frames(store.db_path)
        steps = {f"s{i}": "x" * 300 for i in range(step + 1)}
        store.apply([RecordText.of(_record("task", now, steps=steps))], [])
        written.append(_frames(store.db_path) - before)
        lists_as_parsed(store)
    before = _frames(store.db_path)
    store.apply([], ["task"])
    written.append(_frames(store.db_path) - before)
    assert written == [2, 1, 1, 2]
    assert _sql(store.db_path, "SELECT count(*) FROM Listed") == [(0,)]
    _agrees(store)
    store.close()


def test_the_commit_leaves_no_older_listed_row_behind(tmp_path: Path) -> None:
    """A record an older skillrt wrote (its Listed row beside it), then this version's commit:
    the Listed row goes in the same statement, the row carries the listing, and the listing
    shows the new state (an older version reading it then checks it in full)."""
    now = time.time()
    store = CheckpointStore(tmp_path / "checkpoints")
    old = RecordText.of(_record("a", now))
    store._cache.set("a", old.text, tag=now - 30)  # listed by the triggers from its JSON
    assert _sql(store.db_path, "SELECT key FROM Listed") == [("a",)]
    store.apply([RecordText.of(_record("a", now, state="PAUSED", question="Which?"))], [])
    assert _sql(store.db_path, "SELECT key FROM Listed") == []
    marks = _sql(store.db_path, "SELECT access_count, typeof(tag) FROM Cache")
    assert marks == [(LISTED_BY_WRITER, "text")]
    [entry] = lists_as_parsed(store).records
    assert entry.state == "PAUSED" and entry.listed is not None
    _agrees(store)
    # An older version's listing finds no Listed row: the row's rowid, so it parses the record.
    conn = sqlite3.connect(store.db_path)
    try:
        [(key, _, fields, progress, steps)] = conn.execute(_LAYOUT_2_QUERY, (now - HOUR,))
    finally:
        conn.close()
    assert key == "a" and type(fields) is int and progress is None and steps is None
    store.close()


def test_a_row_changed_by_hand_no_longer_vouches_for_its_listing(tmp_path: Path) -> None:
    """An UPDATE by hand (the row's store_time kept) unmarks the row: listed from its new JSON,
    or, when that is no record, checked in full and moved aside."""
    now = time.time()
    store = CheckpointStore(tmp_path / "checkpoints")
    store.apply([RecordText.of(_record("a", now)), RecordText.of(_record("b", now))], [])
    changed = _record("a", now, state="COMPLETED", tokens=5).model_dump_json()
    _sql(store.db_path, f"UPDATE Cache SET value = '{changed}' WHERE key = 'a'")
    _sql(store.db_path, "UPDATE Cache SET value = 'not json' WHERE key = 'b'")
    marks = dict(_sql(store.db_path, "SELECT key, access_count FROM Cache"))
    assert marks == {"a": 0, "b": 0}
    loaded = store.load_lazy(max_age_s=HOUR, now=now)
    assert [(e.id, e.state) for e in loaded.records] == [("a", "COMPLETED")]
    assert len(loaded.quarantined) == 1 and "'b'" in loaded.quarantined[0]
    _agrees(store)
    store.close()


def test_a_carried_listing_outside_the_window_is_not_listed(tmp_path: Path) -> None:
    """The window is checked on the carried listing's updated_at (its tag is no number)."""
    now = time.time()
    store = CheckpointStore(tmp_path / "checkpoints")
    store.apply(
        [RecordText.of(_record("new", now)),
         RecordText.of(_record("old", now, updated_at=now - 3 * HOUR))],
        [],
    )  # fmt: skip
    loaded = store.load_lazy(max_age_s=HOUR, now=now)
    assert [e.id for e in loaded.records] == ["new"] and loaded.quarantined == []
    store.close()
