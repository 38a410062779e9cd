"""Listing tasks restored at start-up: what ``get_resumable_tasks`` shows of a checkpoint it
has not parsed yet is what the parsed record would show, a record that cannot be read is set
aside (and not offered), and a task another process runs is not offered."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import diskcache
import pytest

from skillrt._io.redaction import Redactor
from skillrt._state.embedded.checkpoints import CheckpointStore
from skillrt._state.embedded.runlocks import RunLocks
from skillrt._state.records import TaskRecord
from skillrt._state.summary import summarize, summarize_restored
from skillrt.outcomes import as_restored
from skillrt.testing import ScriptedModel

from .helpers import make_runtime

SECRET = "cfg-listing-secret-77"


def _checkpointed(root: Path, records: list[TaskRecord]) -> Path:
    """``records`` saved as the runtime over ``root`` keeps them; returns the database file."""
    store = CheckpointStore(root / ".skillrt" / "checkpoints")
    for record in records:
        store.save(record)
    store.close()
    return store.db_path


def _records(now: float) -> list[TaskRecord]:
    return [
        TaskRecord(id="running-one", session_id="s1", state="EXECUTING", created_at=now - 9,
                   updated_at=now - 5, skill="WriteArticle", intent={"type": "WRITE_ARTICLE"},
                   raw_input=f"write about {SECRET}", steps={"a": 1, "b": 2},
                   progress={"step": 2, "total_steps": 3}, tokens=12, cost=0.5),
        TaskRecord(id="paused-one", session_id="s2", state="PAUSED", created_at=now - 8,
                   updated_at=now - 4, question="Which title?", skill="EditContent"),
        TaskRecord(id="failed-one", session_id="s3", state="ERROR", created_at=now - 7,
                   updated_at=now - 3, error_reason="PROVIDER_UNAVAILABLE",
                   last_error=f"model down, key {SECRET}"),
        TaskRecord(id="other-ones", session_id="s4", state="WAITING_INPUT", created_at=now - 6,
                   updated_at=now - 2),
    ]  # fmt: skip


async def test_restored_tasks_are_listed_as_their_records_would_be(tmp_path: Path) -> None:
    now = time.time()
    records = _records(now)
    db_path = _checkpointed(tmp_path, records)
    # A record whose JSON is sound but is no record (its tokens a word): set aside, not listed.
    bad = TaskRecord(id="other-ones", session_id="s", state="EXECUTING", created_at=now,
                     updated_at=now - 1).model_dump(mode="json")  # fmt: skip
    bad["tokens"] = "many"
    db = sqlite3.connect(db_path)
    db.execute("UPDATE Cache SET value = ? WHERE key = 'other-ones'", (json.dumps(bad),))
    db.commit()
    db.close()
    other = RunLocks(tmp_path / ".skillrt" / "locks" / "running")  # another runs "paused-one"
    assert other.hold("paused-one")

    rt = make_runtime(tmp_path, ScriptedModel([]), [], secrets=[SECRET])
    await rt.initialize()
    listed = {s.id: s for s in rt.get_resumable_tasks()}
    redactor = Redactor([SECRET])
    expected = {r.id: summarize(as_restored(r.model_copy()), redactor) for r in records[:3]}
    del expected["paused-one"]  # running elsewhere: not offered
    assert listed == expected
    assert SECRET not in json.dumps([s.model_dump() for s in listed.values()])
    assert listed["running-one"].error_reason == "CRASH"
    assert listed["running-one"].steps_done == 2
    other.close()
    assert {s.id for s in rt.get_resumable_tasks()} == {"running-one", "failed-one",
                                                       "paused-one"}  # fmt: skip
    await rt.close()


def _mixed(now: float) -> list[TaskRecord]:
    """Tasks in every state a checkpoint can hold, newest last."""
    made: list[TaskRecord] = []

    def one(task_id: str, state: str, **fields: Any) -> TaskRecord:
        at = now - 100 + len(made)
        record = TaskRecord(id=task_id, session_id="s", state=state, created_at=at - 1,
                          updated_at=at, raw_input=f"do {task_id}", **fields)  # fmt: skip
        made.append(record)
        return record

    return [
        one("cut-off", "EXECUTING", skill="WriteArticle", steps={"a": 1}, tokens=3, cost=0.25,
            progress={"step": 1, "total_steps": 2}),
        one("asking", "WAITING_INPUT", question="Which one?", intent={"type": "EDIT"}),
        one("paused", "PAUSED", error_reason="BUDGET_EXCEEDED", steps={"x": {"deep": [1]}}),
        one("down", "ERROR", error_reason="PROVIDER_UNAVAILABLE", last_error="model down"),
        one("refused", "ERROR", error_reason="SKILL_ERROR", last_error="no"),
        one("finished", "COMPLETED", steps={"a": 1, "b": 2}),
        one("cancelled", "CANCELLED"),
        one("not-begun", "IDLE"),
        one("another-workers", "EXECUTING", skill="EditContent"),
        one("  odd id: \u00e9\"'", "PAUSED"),
    ]  # fmt: skip


def _put_row(db_path: Path, key: str, value: str | bytes) -> None:
    """A row written behind the store's back (a bug, a bad disk), as diskcache lays one out."""
    with sqlite3.connect(db_path) as db:
        db.execute(
            "INSERT INTO Cache (key, raw, store_time, expire_time, access_time, access_count,"
            " tag, size, mode, filename, value) VALUES (?, 1, 0, NULL, 0, 0, ?, 0, ?, NULL, ?)",
            (key, time.time(), diskcache.core.MODE_RAW, value),
        )


@pytest.mark.parametrize("not_json", [True, False], ids=["a row not JSON", "all rows JSON"])
async def test_listing_is_right_for_every_state_a_corrupt_row_and_another_workers_task(
    tmp_path: Path, not_json: bool
) -> None:
    """What start-up lists comes from SQLite's reading of each checkpoint (no record parsed):
    it must show every resumable task as its parsed record would, whatever the other rows hold
    (a row that is not JSON makes SQLite read every row the careful way), never a finished,
    cancelled or unresumable one, nor one another process runs; a corrupt row is reported and
    its bytes kept, and start-up goes on."""
    now = time.time()
    records = _mixed(now)
    db_path = _checkpointed(tmp_path, records)
    bad = [json.dumps(records[0].model_dump(mode="json") | {"id": "wrong-id"}).encode()]
    if not_json:
        bad.append(b'{"id": "not-json", oops')
    for key, value in zip(["mislabelled", "not-json"], bad, strict=False):
        _put_row(db_path, key, value)
    other = RunLocks(tmp_path / ".skillrt" / "locks" / "running")  # another worker's task
    assert other.hold("another-workers")

    rt = make_runtime(tmp_path, ScriptedModel([]), [])
    reported: list[list[str]] = []
    rt.on("runtime:checkpoints_loaded", lambda e: reported.append(e.data["quarantined"]))
    await rt.initialize()
    resumable = {"cut-off", "asking", "paused", "down", "  odd id: \u00e9\"'"}
    expected = {r.id: summarize(as_restored(r.model_copy()), Redactor([]))
                for r in records if r.id in resumable}  # fmt: skip
    listed = rt.get_resumable_tasks()
    assert {s.id: s for s in listed} == expected
    assert [s.id for s in listed] == sorted(resumable, key=lambda i: -expected[i].updated_at)
    by_id = {s.id: s for s in listed}
    assert by_id["cut-off"].error_reason == "CRASH" and by_id["cut-off"].steps_done == 1
    assert by_id["paused"].steps_done == 1 and by_id["paused"].error_reason == "BUDGET_EXCEEDED"
    assert by_id["asking"].question == "Which one?" and by_id["asking"].intent == "EDIT"

    # The bad rows were reported at start-up and moved aside byte for byte, not lost.
    assert len(reported) == 1 and len(reported[0]) == len(bad)
    kept = sorted(
        p.read_bytes()
        for p in (tmp_path / ".skillrt" / "checkpoints" / "quarantine").glob("record-*.json")
    )
    assert kept == sorted(bad)

    # The listing follows what happens next: a task cancelled here, the other worker done.
    assert rt.abort("down")
    other.close()
    after = {s.id for s in rt.get_resumable_tasks()}
    assert after == (resumable - {"down"}) | {"another-workers"}
    await rt.close()

    again = make_runtime(tmp_path, ScriptedModel([]), [])  # and so does the next start
    await again.initialize()
    assert {s.id for s in again.get_resumable_tasks()} == after
    await again.close()


def test_what_sqlite_reads_of_a_checkpoint_is_what_its_record_shows(tmp_path: Path) -> None:
    """The quick path itself (no fall-back to parsing): every sound checkpoint comes with what
    a listing shows of it, and that is the parsed record's summary, field for field."""
    now = time.time()
    store = CheckpointStore(tmp_path / "checkpoints")
    records = [r for r in _mixed(now) if r.state not in ("COMPLETED", "CANCELLED", "IDLE")]
    records.append(TaskRecord(id="big", session_id="s", state="PAUSED", created_at=now - 2,
                              updated_at=now - 1, raw_input="x" * 5000, last_error="e" * 3000,
                              progress={"step": 1, "nested": {"a": [1, 2.5, None]}},
                              steps={f"s{i}": "y" * 100 for i in range(7)}))  # fmt: skip
    for record in records:
        store.save(record)
    loaded = store.load_lazy(max_age_s=3600, now=now)
    assert {e.id for e in loaded.records} == {r.id for r in records}
    assert all(entry.listed is not None for entry in loaded.records)
    redactor = Redactor(["cfg-listing-secret-77"])
    found = summarize_restored(loaded.records, redactor)
    parsed = [store.parse_lazy(entry) for entry in loaded.records]
    assert found == [summarize(as_restored(r), redactor) for r in parsed if r is not None]
    store.close()


def test_a_listing_redacts_before_it_cuts(tmp_path: Path) -> None:
    """The listing scans every description and error at once and redacts only when that scan
    finds something; what it redacts is the whole text, then cut: a secret across the cut at
    200 (or 2,000) characters leaves not even its first part, and a key-shaped string is
    redacted with no secret configured."""
    now = time.time()
    store = CheckpointStore(tmp_path / "checkpoints")
    records = [
        TaskRecord(id="across", session_id="s", state="EXECUTING", created_at=now - 3,
                   updated_at=now - 3, raw_input="a" * 195 + SECRET,
                   last_error="e" * 1995 + SECRET),
        TaskRecord(id="shaped", session_id="s", state="EXECUTING", created_at=now - 2,
                   updated_at=now - 2, raw_input="key sk-" + "Z" * 30 + " here"),
        TaskRecord(id="plain", session_id="s", state="EXECUTING", created_at=now - 1,
                   updated_at=now - 1, raw_input="nothing to hide", last_error="plain"),
    ]  # fmt: skip
    for record in records:
        store.save(record)
    loaded = store.load_lazy(max_age_s=3600, now=now)
    redactor = Redactor([SECRET])
    found = {s.id: s for s in summarize_restored(loaded.records, redactor) if s is not None}
    parsed = [store.parse_lazy(entry) for entry in loaded.records]
    assert found == {r.id: summarize(as_restored(r), redactor) for r in parsed if r is not None}
    assert found["across"].description == "a" * 195 + "***"
    assert found["across"].last_error == "e" * 1995 + "***"
    assert "sk-ZZZZ" not in found["shaped"].description
    assert found["plain"].description == "nothing to hide"
    clean = summarize_restored(
        [e for e in loaded.records if e.id == "plain"], redactor
    )  # nothing to redact: the same summary without the per-text pass
    assert clean == [found["plain"]]
    assert redactor.holds_nothing("nothing\0plain") and not redactor.holds_nothing(SECRET)
    store.close()
