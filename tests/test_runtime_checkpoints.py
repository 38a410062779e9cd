"""Checkpoints through the runtime: the resume window, a corrupt record, a corrupt database.

Each test runs on both task stores (``store_kind``), except two that are about the SQLite
store's own behaviour: a damaged database file moved aside (there is no file on PostgreSQL),
and start-up reading summaries without parsing records (``CheckpointStore.load_lazy``; the
shared store parses every record it loads, as it syncs with other workers on every listing).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

from skillrt import SkillContext, SkillResult, State, skill
from skillrt._state.embedded.checkpoints import CheckpointStore
from skillrt._state.records import TaskRecord
from skillrt.testing import FunctionModel, ScriptedModel

from .helpers import NoParams, Recorder, make_runtime
from .stores import StoreKind
from .test_runtime import writer

HOUR = 3600.0


def _record(task_id: str, updated_at: float, state: str = "EXECUTING") -> TaskRecord:
    return TaskRecord(
        id=task_id,
        session_id="old-session",
        state=state,
        raw_input="write an article about resuming",
        skill="Writer",
        params={"topic": "resuming"},
        steps={"context": {"topic": "resuming"}},
        created_at=updated_at - 10,
        updated_at=updated_at,
    )


def _seed(state_dir: Path, records: list[TaskRecord]) -> None:
    store = CheckpointStore(state_dir / "checkpoints")
    for record in records:
        store.save(record)
    store.close()


def _seed_kind(kind: StoreKind, state_dir: Path, records: list[TaskRecord]) -> None:
    with kind.open(state_dir) as store:
        store.apply(records, [])


async def test_only_unfinished_tasks_inside_the_window_come_back(
    isolated: Path, store_kind: StoreKind
) -> None:
    now = 1_800_000_000.0
    _seed_kind(
        store_kind,
        isolated / ".skillrt",
        [
            _record("fresh", now - 2 * HOUR),
            _record("waiting", now - 1 * HOUR, state="WAITING_INPUT"),
            _record("stale", now - 30 * HOUR),
            _record("done", now - 1 * HOUR, state="COMPLETED"),
            _record("cancelled", now - 1 * HOUR, state="CANCELLED"),
        ],
    )
    rt = make_runtime(isolated, ScriptedModel(["outline", "content"]), [writer([])])
    rt.clock = lambda: now
    events = Recorder(rt)
    await rt.initialize()
    assert {t.id for t in rt.get_resumable_tasks()} == {"fresh", "waiting"}
    assert {t.state for t in rt.get_resumable_tasks()} == {"PAUSED"}  # loaded as PAUSED
    [loaded] = events.of("runtime:checkpoints_loaded")
    assert {t["id"] for t in loaded.data["tasks"]} == {"fresh", "waiting"}
    assert loaded.data["quarantined"] == []
    msg = await rt.resume_task("fresh")
    assert msg is not None and msg.state == "COMPLETED"
    await rt.close()


async def test_a_corrupt_record_is_quarantined_and_the_rest_load(
    isolated: Path, store_kind: StoreKind
) -> None:
    now = 1_800_000_000.0
    state = isolated / ".skillrt"
    _seed_kind(store_kind, state, [_record("good", now - HOUR), _record("bad", now - HOUR)])
    store_kind.corrupt(state, "bad", "{not json")
    rt = make_runtime(isolated, ScriptedModel([]), [writer([])])
    rt.clock = lambda: now
    events = Recorder(rt)
    await rt.initialize()
    assert [t.id for t in rt.get_resumable_tasks()] == ["good"]
    [loaded] = events.of("runtime:checkpoints_loaded")
    assert len(loaded.data["quarantined"]) == 1 and "'bad'" in loaded.data["quarantined"][0]
    assert store_kind.quarantined(state) == [b"{not json"]  # kept, not lost
    await rt.close()


async def test_a_corrupt_database_is_moved_aside_and_the_runtime_starts(isolated: Path) -> None:
    state = isolated / ".skillrt"
    _seed(state, [_record("lost", 1_800_000_000.0)])
    db = state / "checkpoints" / "cache" / "cache.db"
    db.write_bytes(b"this is not a database" * 100)
    for extra in ("cache.db-wal", "cache.db-shm"):
        (db.parent / extra).unlink(missing_ok=True)
    rt = make_runtime(isolated, FunctionModel(lambda m, o: "fine"), [writer([])])
    events = Recorder(rt)
    await rt.initialize()
    [loaded] = events.of("runtime:checkpoints_loaded")
    assert loaded.data["tasks"] == []
    assert "unreadable" in loaded.data["quarantined"][0]
    assert any(p.name.startswith("cache-") for p in (db.parent.parent / "quarantine").iterdir())
    msg = await rt.process_input("write an article about starting over")
    assert msg.state == "COMPLETED"  # a fresh store works
    assert rt.state is State.IDLE
    await rt.close()


async def test_a_paused_task_survives_a_restart_with_its_tokens(
    isolated: Path, store_kind: StoreKind
) -> None:
    gate = asyncio.Event()

    async def answer(messages: list[Any], options: Any) -> str:
        await gate.wait()  # holds the outline call until the pause is asked for
        return "an outline of some length"

    model = FunctionModel(answer)
    rt = make_runtime(isolated, model, [writer([])])
    job = asyncio.create_task(rt.process_input("write an article about costs"))
    while not model.calls:
        await asyncio.sleep(0.005)
    task_id = rt.current_task_id
    assert rt.pause() is True
    gate.set()
    paused = await job
    assert paused.state == "PAUSED" and paused.tokens > 0
    await rt.close()
    again = make_runtime(isolated, FunctionModel(lambda m, o: "x"), [writer([])])
    await again.initialize()
    [summary] = again.get_resumable_tasks()
    assert summary.id == task_id
    assert summary.tokens == paused.tokens and summary.steps_done == 2
    await again.close()


async def test_restored_tasks_are_built_only_when_asked_for(isolated: Path) -> None:
    """Start-up reads summaries: a record whose JSON parses but does not validate is found
    (and quarantined, kept byte for byte) only when the tasks are listed; the others are listed
    as PAUSED, can be cancelled in place, and resumed."""
    now = 1_800_000_000.0
    state = isolated / ".skillrt"
    _seed(state, [_record(name, now - HOUR) for name in ("one", "two", "three", "odd")])
    db = state / "checkpoints" / "cache" / "cache.db"
    with sqlite3.connect(db) as conn:
        (text,) = conn.execute("SELECT value FROM Cache WHERE key = 'odd'").fetchone()
        odd = json.dumps({**json.loads(text), "tokens": "many"})  # sound JSON, not a record
        conn.execute("UPDATE Cache SET value = ? WHERE key = 'odd'", (odd,))
    rt = make_runtime(isolated, ScriptedModel(["outline", "content"]), [writer([])])
    rt.clock = lambda: now
    await rt.initialize()
    quarantine = state / "checkpoints" / "quarantine"
    assert not quarantine.exists()  # nothing parsed yet
    assert rt.task_state("two") is State.PAUSED
    assert rt.abort("two")  # a restored task cancelled in place
    assert rt.task_state("two") is None  # over: no longer held or offered
    listed = {t.id: t for t in rt.get_resumable_tasks()}
    assert set(listed) == {"one", "three"}
    assert {t.state for t in listed.values()} == {"PAUSED"}
    assert listed["one"].error_reason == "CRASH" and listed["one"].steps_done == 1
    assert [p.read_text() for p in quarantine.iterdir()] == [odd]
    assert {t.id for t in rt.list_tasks()} == {"one", "three"}
    msg = await rt.resume_task("three")
    assert msg is not None and msg.state == "COMPLETED", msg.content
    assert {t.id for t in rt.get_resumable_tasks()} == {"one"}
    await rt.close()


async def test_a_task_of_many_large_steps_resumes_with_its_whole_journal(
    isolated: Path, store_kind: StoreKind
) -> None:
    """Forty steps of non-ASCII text (well past ``LARGE``, so checkpoints splice each step's
    JSON made once) and a question: a new runtime finds the whole journal on disk, runs none
    of the steps again, and the skill reads back every step as it first returned it."""
    runs: list[int] = []

    def pages() -> Any:
        @skill(name="Pages", params=NoParams, intents=["SUMMARIZE"])
        async def read_pages(ctx: SkillContext, params: NoParams) -> SkillResult:
            texts = []
            for i in range(40):

                async def page(i: int = i) -> dict[str, Any]:
                    runs.append(i)
                    return {"n": i, "text": f"第{i}页 " + "博客正文。" * 200}

                texts.append(await ctx.step(f"page{i}", page))
            answer = await ctx.ask("Which page?")
            chosen = texts[int(answer)]
            return SkillResult(message=f"page {chosen['n']}", data={"len": len(chosen["text"])})

        return read_pages

    first = make_runtime(isolated, ScriptedModel([]), [pages()])
    asked = await first.process_input("summarize the pages")
    assert asked.state == "WAITING_INPUT" and runs == list(range(40))
    await first.close()
    second = make_runtime(isolated, ScriptedModel([]), [pages()])
    await second.initialize()
    [summary] = second.get_resumable_tasks()
    assert summary.id == asked.task_id and summary.steps_done == 40
    again = await second.resume_task(summary.id)
    assert again is not None and again.state == "WAITING_INPUT"
    done = await second.process_input("7")
    assert done.state == "COMPLETED" and done.content == "page 7"
    assert done.data["len"] == len("第7页 " + "博客正文。" * 200)
    assert runs == list(range(40))  # nothing ran twice
    await second.close()


async def test_a_record_whose_intent_type_is_not_a_string_is_listed_without_one(
    isolated: Path,
) -> None:
    """A record's intent is a free dict: a ``type`` that is an object or a bool (a record
    written by hand, or damaged) shows as no intent in every listing, as the start-up's listing
    shows it, instead of failing ``list_tasks`` as a whole."""
    now = 1_800_000_000.0
    records = [_record(name, now - HOUR) for name in ("object", "flag", "plain")]
    for record, kind in zip(records, ({"x": 1}, True, "WRITE"), strict=True):
        record.intent = {"type": kind}
    _seed(isolated / ".skillrt", records)
    rt = make_runtime(isolated, ScriptedModel([]), [writer([])])
    rt.clock = lambda: now
    await rt.initialize()
    shown = {"object": None, "flag": None, "plain": "WRITE"}
    assert {t.id: t.intent for t in rt.get_resumable_tasks()} == shown
    assert {t.id: t.intent for t in rt.list_tasks()} == shown  # each record built: the same
    await rt.close()


@skill(name="Stalls", params=NoParams, description="a first step, then a long one")
async def _stalls(ctx: SkillContext, params: NoParams) -> SkillResult:
    await ctx.step("first", lambda: "one")

    async def second() -> str:
        await asyncio.sleep(30)
        return "two"

    await ctx.step("second", second)
    return SkillResult(message="done")


async def test_a_task_close_stopped_is_shown_paused_until_the_runtime_reopens(
    isolated: Path, store_kind: StoreKind
) -> None:
    """``close()`` stopped a running task and its caller heard PAUSED ("resume it"), but
    ``get_task`` of it then said None, as for a task that never was, until the runtime was
    reopened. Now it shows the task PAUSED; reopened, the store's checkpoint stands."""
    rt = make_runtime(isolated, ScriptedModel([]), [_stalls])
    running = asyncio.create_task(rt.run_skill("Stalls", {}))
    for _ in range(500):
        await asyncio.sleep(0.01)
        if rt.state == "EXECUTING":
            break
    await asyncio.sleep(0.1)  # in its second step
    await rt.close()
    reply = await running
    assert reply.state == "PAUSED" and reply.task_id is not None
    shown = rt.get_task(reply.task_id)
    assert shown is not None and shown.state == "PAUSED", shown
    try:
        await rt.initialize()
        assert [(t.id, t.state) for t in rt.get_resumable_tasks()] == [(reply.task_id, "PAUSED")]
        shown = rt.get_task(reply.task_id)
        assert shown is not None and shown.state == "PAUSED"
    finally:
        await rt.close()
