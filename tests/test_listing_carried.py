"""The group commit writes each record's ``Listed`` row itself, from the listing the runtime
took when it serialised the record, instead of having the triggers parse its JSON again: the
row is the one the triggers make, for every kind of record; a record without a listing, a
row written another way and an ``UPDATE`` by hand are listed from their JSON as before; a
store of layout 1 gets its triggers only, a store an older version opened last lists right
under this version's commits, and a store of a later layout is left as it is."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic_core import from_json

from skillrt._io.redaction import Redactor
from skillrt._state.embedded import listing
from skillrt._state.embedded.checkpoints import CheckpointStore
from skillrt._state.embedded.listing import LAYOUT, LISTED_BY_WRITER, TRIGGERS
from skillrt._state.records import RecordText, TaskRecord, listing_of
from skillrt._tasks.checkpointing import checkpoint_text
from skillrt._tasks.journaljson import LARGE, JournalJSON

from .test_listed_layout import _sql
from .test_storage_listing import (
    _agrees,
    _expected_rows,
    _listing_rows,
    _record,
    lists_as_parsed,
)

REDACTOR = Redactor()


def _raw_listed(db: Path) -> dict[str, tuple[Any, ...]]:
    """What lists each record as stored, its JSON parsed (fields, progress) and its steps: its
    Listed row, or, with none, the listing its row carries (the group commit's, in its tag)."""
    rows = _sql(db, "SELECT key, fields, progress, steps FROM Listed")
    out = {
        key: (from_json(fields), None if progress is None else from_json(progress), steps)
        for key, fields, progress, steps in rows
    }
    carried = _sql(
        db,
        "SELECT c.key, c.tag, c.size, CAST(c.access_time AS INTEGER) FROM Cache AS c"
        " LEFT JOIN Listed AS l ON l.rowid = c.rowid"
        f" WHERE l.rowid IS NULL AND c.access_count = {LISTED_BY_WRITER}"
        " AND typeof(c.tag) = 'text'",
    )
    for key, tag, progress, steps in carried:
        out[key] = (from_json(tag), from_json(progress), steps)
    return out


def _marks(db: Path) -> dict[str, int]:
    return dict(_sql(db, "SELECT key, access_count FROM Cache WHERE raw = 1"))


def _varied(now: float) -> list[TaskRecord]:
    """Records whose listing could read otherwise than their JSON if made carelessly."""
    secret = "sk-" + "a1B2" * 10  # what the redactor takes for an API key
    return [
        _record("plain", now),
        _record("unicode", now, raw_input="写一篇关于 \u2028 \"引号\" \\ 的文章 é", skill="Écrire"),
        _record("empty", now, progress={}, steps={}, intent={}, skill=None),
        _record("numbers", now, tokens=2**40, cost=float("inf"), created_at=1e300),
        _record("nan", now, updated_at=float("nan")),  # not listable: the full check says so
        _record("kinds", now, intent={"type": True}, error_reason="CRASH", last_error="boom",
                question="Which one?", progress={"nested": {"a": [1, 2.5, None]}, "x": "é"}),
        _record("intent-int", now, intent={"type": 3}),
        _record("secret", now, progress={"message": secret}, last_error=f"failed: {secret}"),
    ]  # fmt: skip


def _texts(records: list[TaskRecord]) -> list[RecordText]:
    texts = [checkpoint_text(record, REDACTOR) for record in records]
    assert all(text is not None for text in texts)
    return [text for text in texts if text is not None]


def test_a_carried_listing_is_the_row_the_triggers_make(tmp_path: Path) -> None:
    now = time.time()
    records = _varied(now)
    carried = _texts(records)
    assert all(text.listing is not None for text in carried)
    # The same texts without their listings: the triggers read them from the JSON.
    parsed = [text._replace(listing=None) for text in carried]
    a = CheckpointStore(tmp_path / "a")
    b = CheckpointStore(tmp_path / "b")
    a.apply(carried, [])
    b.apply(parsed, [])
    assert set(_marks(a.db_path).values()) == {LISTED_BY_WRITER}  # no trigger parsed them
    assert set(_marks(b.db_path).values()) == {0}
    assert _raw_listed(a.db_path) == _raw_listed(b.db_path)
    # Updated (the row is there: the update's path), with a secret redacted in the text.
    later = [r.model_copy(update={"updated_at": now - 5, "tokens": 9}) for r in records]
    a.apply(_texts(later), [])
    b.apply([text._replace(listing=None) for text in _texts(later)], [])
    assert _raw_listed(a.db_path) == _raw_listed(b.db_path)
    assert "sk-" not in json.dumps(_raw_listed(a.db_path)["secret"])
    listed_a = a.load_lazy(max_age_s=3600, now=time.time())
    listed_b = b.load_lazy(max_age_s=3600, now=time.time())
    assert [e.listed for e in listed_a.records] == [e.listed for e in listed_b.records]
    assert len(listed_a.records) == len(records)  # "nan" has a number since
    assert listed_a.quarantined == listed_b.quarantined == []
    a.close()
    b.close()


def test_a_large_journal_is_listed_with_the_steps_its_text_holds(tmp_path: Path) -> None:
    now = time.time()
    secret = "sk-" + "a1B2" * 10
    steps = {f"step{i}": "x" * 2000 for i in range(LARGE // 2000 + 2)}
    steps["leak"] = f"token {secret}"  # the journal is cut here
    steps["after"] = "y"
    record = _record("big", now, steps=steps, last_error=f"failed: {secret}")
    text = checkpoint_text(record, REDACTOR, JournalJSON())
    assert text is not None and text.listing is not None
    store = CheckpointStore(tmp_path / "checkpoints")
    store.apply([text], [])
    assert _marks(store.db_path) == {"big": LISTED_BY_WRITER}
    stored = json.loads(store._cache._con.execute("SELECT value FROM Cache").fetchone()[0])
    assert _raw_listed(store.db_path)["big"][2] == len(stored["steps"]) == len(steps) - 2
    _agrees(store)
    store.close()


def test_records_without_a_listing_are_listed_from_their_json(tmp_path: Path) -> None:
    now = time.time()
    odd = _record("odd", now, intent={"type": {"nested": 1}})  # not a plain value
    assert listing_of(odd) is None
    text = RecordText.of(_record("text", now))
    store = CheckpointStore(tmp_path / "checkpoints")
    store.apply([odd, text._replace(listing=None), RecordText.of(odd)], [])
    store.save(_record("saved", now))  # a record: its listing is taken in the commit
    store._cache.set("set", text.text.replace('"text"', '"set"'), tag=now)  # diskcache's own
    assert _marks(store.db_path) == {"odd": 0, "text": 0, "saved": LISTED_BY_WRITER, "set": 0}
    assert _listing_rows(store.db_path)["odd"][listing.FIELDS.index("intent.type")] == {"nested": 1}
    # (Not listed through summaries: a TaskSummary refuses an intent type that is an object.)
    assert _listing_rows(store.db_path) == _expected_rows(store.db_path)
    store.close()


def test_an_update_by_hand_is_listed_from_its_json(tmp_path: Path) -> None:
    now = time.time()
    store = CheckpointStore(tmp_path / "checkpoints")
    store.apply([RecordText.of(_record("a", now))], [])
    assert _marks(store.db_path) == {"a": LISTED_BY_WRITER}
    changed = _record("a", now, state="COMPLETED", tokens=5).model_dump_json()
    _sql(store.db_path, f"UPDATE Cache SET value = '{changed}' WHERE key = 'a'")
    assert _listing_rows(store.db_path)["a"][0] == "COMPLETED"
    _agrees(store)
    store.close()


def _as_layout_1(db: Path) -> None:
    """The triggers as layout 1 made them (an older version's), its Listed rows kept."""
    drops = [f"DROP TRIGGER {name}" for name in TRIGGERS]
    _sql(db, *drops, *(listing._MADE_1[name] for name in TRIGGERS))


def _as_an_older_version_opens_it(db: Path) -> None:
    """What an older version's ``ensure_listing`` does to a store it finds otherwise than it
    makes it: the table filled again from the JSON, with its own triggers."""
    drops = [f"DROP TRIGGER {name}" for name in TRIGGERS]
    made = (listing._MADE_1[name] for name in TRIGGERS)
    _sql(db, *drops, "DROP TABLE Listed", listing._TABLE, listing._FILL, *made)


def _triggers(db: Path) -> dict[str, str]:
    names = ", ".join(f"'{name}'" for name in TRIGGERS)
    return dict(_sql(db, f"SELECT name, sql FROM sqlite_master WHERE name IN ({names})"))


def _as_layout_2(db: Path) -> None:
    """The triggers as layout 2 made them (stop 39's), its Listed rows kept."""
    drops = [f"DROP TRIGGER {name}" for name in TRIGGERS]
    _sql(db, *drops, *(listing._MADE_2[name] for name in TRIGGERS), "PRAGMA user_version = 2")


@pytest.mark.parametrize("layout", [1, 2])
def test_a_store_of_layout_1_gets_its_triggers_only(tmp_path: Path, layout: int) -> None:
    """A store of layout 1 or 2 (every record with its Listed row) gets this layout's
    triggers, its rows kept as they are."""
    now = time.time()
    store = CheckpointStore(tmp_path / "checkpoints")
    # Each record with a Listed row, as those layouts wrote them (from their JSON here).
    records = [RecordText.of(_record(f"t{i}", now, updated_at=now - i)) for i in range(3)]
    store.apply([record._replace(listing=None) for record in records], [])
    store.close()
    db = store.db_path
    if layout == 1:
        _as_layout_1(db)
        _sql(db, "PRAGMA user_version = 0")  # as layout 1 left it
    else:
        _as_layout_2(db)
    # A mark the triggers would not make: gone if the table were filled again.
    _sql(db, "UPDATE Listed SET steps = 99 WHERE key = 't0'")
    store = CheckpointStore(tmp_path / "checkpoints")
    assert _triggers(db) == {name: listing._MADE[name] for name in TRIGGERS}
    assert _sql(db, "PRAGMA user_version") == [(LAYOUT,)]
    assert _sql(db, "SELECT steps FROM Listed WHERE key = 't0'") == [(99,)]  # kept, not rebuilt
    store.apply([RecordText.of(_record("t0", now))], [])
    _agrees(store)
    assert not listing.ensure_listing(store._cache._con.execute)  # nothing more to do
    store.close()


def test_an_older_version_opening_the_store_and_this_one_after_both_list_right(
    tmp_path: Path,
) -> None:
    now = time.time()
    store = CheckpointStore(tmp_path / "checkpoints")
    store.apply([_record(f"t{i}", now, updated_at=now - i) for i in range(3)], [])
    db = store.db_path
    _as_an_older_version_opens_it(db)  # while this one runs
    assert _sql(db, "PRAGMA user_version") == [(LAYOUT,)]  # the older one never touches it
    # This version's commits under the older triggers: they parse, the commit's row replaces.
    store.apply(
        [RecordText.of(_record("t1", now, state="PAUSED", question="Which?")),
         RecordText.of(_record("t9", now, steps={"a": 1, "b": 2}))],
        [],
    )  # fmt: skip
    store.delete("t2")
    _agrees(store)
    assert {key for key in _listing_rows(db)} == {"t0", "t1", "t9"}
    store.close()
    # This version opens it next: its triggers again, the rows as they were.
    store = CheckpointStore(tmp_path / "checkpoints")
    assert _triggers(db) == {name: listing._MADE[name] for name in TRIGGERS}
    assert store.resets == 0
    lists_as_parsed(store)
    store.close()


def test_a_store_of_a_later_layout_is_left_as_it_is(tmp_path: Path) -> None:
    now = time.time()
    store = CheckpointStore(tmp_path / "checkpoints")
    store.apply([_record("a", now)], [])
    store.close()
    db = store.db_path
    # Triggers this version does not make, as a later one might (these still list right).
    drops = [f"DROP TRIGGER {name}" for name in TRIGGERS]
    made = [listing._MADE[name].replace(" BEGIN ", " AND 1 BEGIN ", 1) for name in TRIGGERS[:2]]
    _sql(db, *drops[:2], *made, f"PRAGMA user_version = {LAYOUT + 1}")
    later = _triggers(db)
    store = CheckpointStore(tmp_path / "checkpoints")
    assert _triggers(db) == later
    assert _sql(db, "PRAGMA user_version") == [(LAYOUT + 1,)]
    store.apply([RecordText.of(_record("a", now, tokens=3)), _record("b", now)], [])
    _agrees(store)
    store.close()


@pytest.mark.parametrize("damage", ["DROP TRIGGER Listed_update", "DROP TABLE Listed"])
def test_a_later_layout_with_its_table_or_a_trigger_gone_is_built_again(
    tmp_path: Path, damage: str
) -> None:
    now = time.time()
    store = CheckpointStore(tmp_path / "checkpoints")
    store.apply([_record("a", now)], [])
    store.close()
    db = store.db_path
    _sql(db, f"PRAGMA user_version = {LAYOUT + 1}", damage)
    store = CheckpointStore(tmp_path / "checkpoints")
    assert _triggers(db) == {name: listing._MADE[name] for name in TRIGGERS}
    assert _sql(db, "PRAGMA user_version") == [(LAYOUT,)]
    _agrees(store)
    store.close()


def test_layout_1_is_spelled_as_that_version_made_it() -> None:
    # sqlite_master's text of layout 1 (skillrt before 2026-11-27 13:30 UTC): were it to read
    # otherwise, every store of that layout would be filled again at opening.
    spelled = json.dumps(listing._MADE_1, sort_keys=True).encode()
    assert hashlib.sha256(spelled).hexdigest() == (
        "cf57bb611c129392974409403ae1ab30cb0bbe6d936b296c2618a514bb454989"
    )
    # And layout 2's (2026-11-27 afternoon to stop 40).
    spelled = json.dumps(listing._MADE_2, sort_keys=True).encode()
    assert hashlib.sha256(spelled).hexdigest() == (
        "47969dc9fb036f1f10df201aabde6a09197c427e93337ddcbbdb5f8fa2cc723f"
    )
