"""Listing tasks restored at start-up: what ``get_resumable_tasks`` shows of a checkpoint it
has not parsed yet is what the parsed record would show, a record that cannot be read is set
aside (and not offered), and a task another process runs is not offered."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from skillrt._io.redaction import Redactor
from skillrt._state.embedded.checkpoints import CheckpointStore
from skillrt._state.embedded.runlocks import RunLocks
from skillrt._state.records import TaskRecord
from skillrt._state.summary import summarize
from skillrt.outcomes import as_restored
from skillrt.testing import ScriptedModel

from .helpers import make_runtime

SECRET = "cfg-listing-secret-77"


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
    checkpoints = tmp_path / ".skillrt" / "checkpoints"
    store = CheckpointStore(checkpoints)
    records = _records(now)
    for record in records:
        store.save(record)
    store.close()
    # A record whose JSON is sound but is no record (its tokens a word): set aside, not listed.
    bad = TaskRecord(id="other-ones", session_id="s", state="EXECUTING", created_at=now,
                     updated_at=now - 1).model_dump(mode="json")  # fmt: skip
    bad["tokens"] = "many"
    db = sqlite3.connect(store.db_path)
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
