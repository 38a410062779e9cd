"""History on real SQLite: per session, newest first, bounded, JSON only, durable."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillrt._state.embedded.history import History
from skillrt.exceptions import UserError


def task(n: int, session: str = "s1", **extra: Any) -> dict[str, Any]:
    return {
        "task_id": f"t{n}",
        "session_id": session,
        "skill": "WriteArticle",
        "intent": "WRITE_ARTICLE",
        "state": "COMPLETED",
        "tokens": 10 * n,
        "cost": 0.001 * n,
        "started_at": 1000.0 + n,
        "finished_at": 1001.0 + n,
        "message": f"写好了第 {n} 篇",
        **extra,
    }


@pytest.fixture(params=["disk", "memory"])
def history(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[History]:
    made = History(tmp_path / "state" if request.param == "disk" else None, limit=5)
    yield made
    made.close()


def test_tasks_newest_first_per_session(history: History) -> None:
    for n in range(3):
        history.add_task(task(n, "s1"))
    history.add_task(task(3, "s2"))
    assert [t["task_id"] for t in history.tasks()] == ["t3", "t2", "t1", "t0"]
    assert [t["task_id"] for t in history.tasks("s1")] == ["t2", "t1", "t0"]
    assert [t["task_id"] for t in history.tasks("s1", limit=2)] == ["t2", "t1"]
    assert history.tasks("nobody") == []
    assert history.tasks("s1")[0] == task(2, "s1")


def test_a_task_has_one_entry(history: History) -> None:
    history.add_task(task(1, state="ERROR"))
    history.add_task(task(2))
    history.add_task(task(1, state="COMPLETED"))  # resumed and finished
    entries = history.tasks()
    assert [(t["task_id"], t["state"]) for t in entries] == [
        ("t1", "COMPLETED"),
        ("t2", "COMPLETED"),
    ]


def test_messages_newest_first_per_session(history: History) -> None:
    history.add_message("s1", {"role": "user", "content": "写一篇文章"})
    history.add_message("s2", {"role": "user", "content": "other"})
    history.add_message("s1", {"role": "assistant", "content": "好的"})
    assert [m["content"] for m in history.messages("s1")] == ["好的", "写一篇文章"]
    assert [m["content"] for m in history.messages("s1", limit=1)] == ["好的"]
    assert [m["content"] for m in history.messages("s2")] == ["other"]


def test_bounded_oldest_dropped(history: History) -> None:
    for n in range(12):
        history.add_task(task(n, "s1" if n % 2 else "s2"))
        history.add_message("s1", {"n": n})
    assert [t["task_id"] for t in history.tasks(limit=50)] == ["t11", "t10", "t9", "t8", "t7"]
    assert [m["n"] for m in history.messages("s1", limit=50)] == [11, 10, 9, 8, 7]


def _deletes(history: History) -> list[str]:
    """The DELETE statements ``history``'s connection runs from now on."""
    made: list[str] = []
    history._db.set_trace_callback(lambda sql: made.append(sql) if "DELETE" in sql else None)
    return made


def test_a_write_below_the_limit_deletes_nothing_and_the_bound_holds(history: History) -> None:
    """A task entry replaces its earlier one in one statement (REPLACE), and the oldest rows
    are trimmed only once some row is past the limit: below it, no DELETE is made at all."""
    deletes = _deletes(history)
    for n in range(4):
        history.add_batch([task(n)], [("s1", {"n": n})])
    history.add_batch([task(2, state="ERROR")], [("s1", {"n": 4})])  # resumed: replaced
    assert deletes == []
    assert [t["task_id"] for t in history.tasks()] == ["t2", "t3", "t1", "t0"]
    for n in range(5, 8):
        history.add_batch([task(n)], [("s1", {"n": n})])
    history.add_batch([task(8), task(9)], [("s1", {"n": 8}), ("s1", {"n": 9})])  # several
    assert deletes  # past the limit: trimmed
    assert [t["task_id"] for t in history.tasks(limit=50)] == ["t9", "t8", "t7", "t6", "t5"]
    assert [m["n"] for m in history.messages("s1", limit=50)] == [9, 8, 7, 6, 5]


def test_the_bound_holds_after_reopening_and_beside_another_writer(tmp_path: Path) -> None:
    first = History(tmp_path / "state", limit=5)
    for n in range(4):
        first.add_task(task(n))
    first.close()
    reopened, other = History(tmp_path / "state", limit=5), History(tmp_path / "state", limit=5)
    other.add_task(task(10))  # another process writes the same file
    other.add_message("s1", {"n": 10})
    for n in range(4, 7):
        reopened.add_batch([task(n)], [("s1", {"n": n})])
    reopened.add_message("s1", {"n": 7})
    assert [t["task_id"] for t in reopened.tasks(limit=50)] == ["t6", "t5", "t4", "t10", "t3"]
    assert [m["n"] for m in other.messages("s1", limit=50)] == [7, 6, 5, 4, 10]
    reopened.close()
    other.close()


def test_entries_must_be_json(history: History) -> None:
    with pytest.raises(UserError, match="not JSON-serialisable"):
        history.add_task(task(1, started_at=object()))
    with pytest.raises(UserError, match="not JSON-serialisable"):
        history.add_message("s1", {"content": float("nan")})
    with pytest.raises(UserError, match="task_id"):
        history.add_task({"session_id": "s1"})
    assert history.tasks() == []


def test_durable_and_stored_as_json_text(tmp_path: Path) -> None:
    history = History(tmp_path / "state")
    history.add_task(task(1))
    history.add_message("s1", {"role": "user", "content": "你好"})
    history.close()

    with sqlite3.connect(tmp_path / "state" / "history.db") as db:
        for table in ("tasks", "messages"):
            for value_type, data in db.execute(f"SELECT typeof(data), data FROM {table}"):
                assert value_type == "text"
                json.loads(data)
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)

    reopened = History(tmp_path / "state")
    assert reopened.tasks("s1") == [task(1)]
    assert reopened.messages("s1") == [{"role": "user", "content": "你好"}]
    reopened.close()


def test_entries_encode_as_json_dumps_did_and_refuse_what_it_refused() -> None:
    from skillrt._state.embedded.history import _to_json

    plain = {
        "task_id": "t1",
        "session_id": "s",
        "skill": None,
        "input": "é\u2028\x00\x7f 写",
        "tokens": 3,
        "cost": 0.1,
        "at": 1.7e9,
        "big": 1e16,
        "ok": True,
        "error": None,
    }
    nested = {"a": [1, {"b": 2.5}], 1: "int key"}
    for entry in (plain, nested):
        expected = json.dumps(entry, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        assert _to_json("entry", entry) == expected
    for bad in ({"cost": float("nan")}, {"cost": float("inf")}, {"raw": b"x"}, {"o": object()}):
        with pytest.raises(UserError, match="not JSON-serialisable"):
            _to_json("entry", bad)


def test_a_turn_of_several_messages_below_the_limit_deletes_nothing(history: History) -> None:
    """A chat turn writes two messages (and its task's entry): below the limit no DELETE is
    made for them either (several rows go as one statement, whose last seq is known), and
    past it the bound holds, for a few rows and for many (``executemany``)."""
    deletes = _deletes(history)
    history.add_batch([task(1)], [("s1", {"n": 1}), ("s1", {"n": 2})])
    history.add_batch([], [("s1", {"n": 3}), ("s1", {"n": 4})])
    assert deletes == []
    assert [m["n"] for m in history.messages("s1", limit=50)] == [4, 3, 2, 1]
    history.add_batch([task(2), task(1, state="ERROR")], [("s1", {"n": 5}), ("s1", {"n": 6})])
    assert deletes  # past the limit: trimmed
    assert [m["n"] for m in history.messages("s1", limit=50)] == [6, 5, 4, 3, 2]
    assert [t["task_id"] for t in history.tasks(limit=50)] == ["t1", "t2"]
    history.add_batch([task(n) for n in range(10, 30)], [("s2", {"n": n}) for n in range(20)])
    assert [m["n"] for m in history.messages("s2", limit=50)] == [19, 18, 17, 16, 15]
    assert [t["task_id"] for t in history.tasks(limit=50)] == ["t29", "t28", "t27", "t26", "t25"]
    assert history.messages("s1", limit=50) == []
