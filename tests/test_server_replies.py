"""How a reply leaves the server: encoded once by pydantic when the redactor's scan finds it
clean, walked and redacted when it does not (``Redactor.dump``, used by the JSON reply, the SSE
``message`` event and the MCP server's replies)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from skillrt._io.redaction import Redactor
from skillrt.messages import ChatMessage
from skillrt.server.sse import EventLog

SECRET = "hunter2-very-secret-value"


def test_a_clean_reply_is_the_message_as_json() -> None:
    message = ChatMessage(content="done", task_id="t1", state="COMPLETED", data={"path": "a.md"})
    text = Redactor([SECRET]).dump(message)[0]
    assert json.loads(text) == message.model_dump(mode="json")


@pytest.mark.parametrize(
    "message",
    [
        ChatMessage(content=f"the key is {SECRET}"),
        ChatMessage(content="fine", data={"nested": [{"note": SECRET}]}),
        ChatMessage(content="fine", data={"api_key": "not-shaped-like-a-key"}),
        ChatMessage(content=f"中文 {SECRET}"),  # not ASCII: always walked
        ChatMessage(content="sk-abcdefghijklmnopqrstuvwxyz0123"),
    ],
)
def test_a_reply_holding_a_secret_is_redacted(message: ChatMessage) -> None:
    text = Redactor([SECRET]).dump(message)[0]
    assert SECRET not in text and "not-shaped-like-a-key" not in text
    assert "abcdefghijklmnopqrstuvwxyz0123" not in text
    assert "***" in text
    assert json.loads(text)["id"] == message.id


async def test_the_journaled_message_is_redacted_and_parses() -> None:
    log = EventLog(Redactor([SECRET]))
    clean = log.add_message(ChatMessage(content="ok", task_id="t1"))
    dirty = log.add_message(ChatMessage(content=f"echo {SECRET}", task_id="t1"))
    assert json.loads(clean.data)["content"] == "ok"
    assert json.loads(dirty.data)["content"] == "echo ***"
    assert [e.seq for e in log.task_entries("t1", 0)] == [clean.seq, dirty.seq]


async def test_a_follower_wakes_for_each_entry_and_misses_none() -> None:
    """The journal makes what followers wait on only when one waits: entries added with no
    follower are read later, entries added while one waits wake it."""
    import asyncio

    log = EventLog(Redactor())
    log.bind("t1", "s1")
    for i in range(3):  # nobody follows yet
        log.add("task:progress", "t1", {"i": i})
    running = True
    got: list[str] = []

    async def follow() -> None:
        async for entry in log.follow_task("t1", 0, running=lambda: running):
            if entry is not None:
                got.append(entry.event)

    follower = asyncio.ensure_future(follow())
    await asyncio.sleep(0.01)
    assert got == ["task:progress"] * 3  # read at once, now waiting
    log.add("task:progress", "t1", {"i": 3})
    await asyncio.sleep(0.01)
    assert len(got) == 4  # woken by the new entry
    log.add_message(ChatMessage(content="done", task_id="t1"))
    await asyncio.wait_for(follower, 5)  # ends with the reply
    assert got[-1] == "message"
    running = False


def test_the_json_reply_is_the_journaled_message(tmp_path: Path) -> None:
    """A JSON call's reply is the text journaled as its ``message`` event: the same id, the
    task's id, and redacted like it."""
    from skillrt.testing import FunctionModel
    from tests.server_support import LiveServer, make_runtime

    live = LiveServer(make_runtime(tmp_path, FunctionModel(lambda m, o: f"echo {SECRET}"),
                                   secrets=[SECRET]))  # fmt: skip
    try:
        with live.client() as c:
            reply = c.post("/v1/skills/Steps/run", json={"params": {"topic": "x", "steps": 1}})
        assert reply.status_code == 200 and reply.headers["x-skillrt-exit-code"] == "0"
        body = reply.json()
        assert SECRET not in reply.text and "***" in body["content"]
        journaled = live.state.log.task_entries(body["task_id"], 0)[-1]
        assert journaled.event == "message" and json.loads(journaled.data) == body
    finally:
        live.stop()


async def test_an_event_journaled_unread_is_redacted_when_a_stream_reads_it() -> None:
    """The journal keeps an event of plain values as it came (its subscriber is ``on_raw``)
    and encodes it, redacted, when first read; an event holding a dict is encoded at once, as
    it is then (what it holds may change after)."""
    from skillrt.events import EventBus
    from skillrt.server.sse import format_entry

    redactor = Redactor([SECRET])
    log = EventLog(redactor)
    bus = EventBus(clock=lambda: 5.0, redactor=redactor)
    bus.on_raw("*", log.on_event)
    log.bind("t1", "s1")
    nested = {"note": f"was {SECRET}", "items": ["a"]}
    bus.emit("task:progress", "t1", message=f"using {SECRET}", step=1, done=False)
    bus.emit("task:started", "t1", skill="S", intent=nested)
    nested["note"], nested["items"] = "changed", ["b"]  # after the emit
    first, second = log.task_entries("t1", 0)
    assert first.session_id == "s1" and first.size > 200
    for entry in (first, second):
        assert SECRET not in entry.data and SECRET not in format_entry(entry).decode()
    assert json.loads(first.data) == {
        "type": "task:progress",
        "task_id": "t1",
        "data": {"message": "using ***", "step": 1, "done": False},
        "timestamp": 5.0,
    }
    assert json.loads(second.data)["data"]["intent"] == {"note": "was ***", "items": ["a"]}
    assert first.data is first.data  # encoded once


async def test_an_event_holding_a_dict_is_kept_as_it_came_and_redacted_when_read() -> None:
    """An event holding a dict is encoded when it comes (a snapshot) but redacted only when a
    stream reads it: a key named like a secret, a secret value deep in it, and a value JSON
    cannot hold (written as its text) are all redacted then; its size is its text's."""
    from skillrt.events import EventBus

    class Opaque:
        def __str__(self) -> str:
            return f"opaque {SECRET}"

    redactor = Redactor([SECRET])
    log = EventLog(redactor)
    bus = EventBus(clock=lambda: 7.0, redactor=redactor)
    bus.on_raw("*", log.on_event)
    held = {"api_key": "plain-looking-value", "deep": [{"note": f"has {SECRET}"}], "o": Opaque()}
    bus.emit("task:completed", "t1", result=held, clean={"n": 1})
    [entry] = log.task_entries("t1", 0)
    assert entry._raw is not None and SECRET in str(entry._raw)  # kept unredacted until read
    held["deep"] = []  # after the emit: the entry holds what was sent
    data = json.loads(entry.data)["data"]
    assert data["result"] == {"api_key": "***", "deep": [{"note": "has ***"}], "o": "opaque ***"}
    assert data["clean"] == {"n": 1}
    assert SECRET not in entry.data and entry._raw is None
    bus.emit("task:completed", "t2", result={"n": 2})
    [clean] = log.task_entries("t2", 0)
    assert clean.size == len(clean.data) + 200  # its text, and the entry's overhead


async def test_the_journals_bounds_count_unread_events() -> None:
    """Events kept unencoded count against the journal's byte bounds by their estimated size:
    a task's journal stays within ``per_task_bytes``, the newest entries kept."""
    from skillrt.events import EventBus

    log = EventLog(Redactor(), per_task_bytes=20_000)
    bus = EventBus(clock=lambda: 6.0)
    bus.on_raw("*", log.on_event)
    for i in range(200):
        bus.emit("task:stream", "t1", delta="x" * 100, i=i)
    kept = log.task_entries("t1", 0)
    assert 0 < len(kept) < 200 and sum(e.size for e in kept) <= 20_000
    assert json.loads(kept[-1].data)["data"] == {"delta": "x" * 100, "i": 199}


async def test_the_recent_journal_keeps_the_newest_within_its_count_and_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``/v1/events`` replays from the recent journal: at most ``_RECENT`` entries and
    ``recent_bytes``, the oldest dropped first, the newest always kept."""
    from skillrt.server import sse

    monkeypatch.setattr(sse, "_RECENT", 5)
    log = EventLog(Redactor(), recent_bytes=10_000)
    for i in range(12):
        log.add("task:progress", f"t{i % 3}", {"i": i})
    kept = log.recent_entries(0, None)
    assert [json.loads(e.data)["i"] for e in kept] == [7, 8, 9, 10, 11]
    assert log._recent_size == sum(e.size for e in kept)
    log.add("task:stream", "t1", {"delta": "x" * 20_000})  # above the bytes on its own
    kept = log.recent_entries(0, None)
    assert len(kept) == 1 and kept[0].event == "task:stream"
    assert log._recent_size == kept[0].size


async def test_the_journal_keeps_an_events_fields_as_it_kept_the_event() -> None:
    """The journal subscribes by fields (``on_fields``, no ``Event`` per event): its entries
    (sequence, type, task, session, size, text once read) are those it makes of the same
    events given as ``Event`` objects (``on_raw``), plain and holding a dict alike."""
    from skillrt.events import EventBus

    redactor = Redactor([SECRET])
    by_event, by_fields = EventLog(redactor), EventLog(redactor)
    bus = EventBus(clock=lambda: 9.0, redactor=redactor)
    bus.on_raw("*", by_event.on_event)
    bus.on_fields(by_fields.keep_event)
    for log in (by_event, by_fields):
        log.bind("t1", "s1")
    bus.emit("state:changed", "t1", **{"from": "IDLE", "to": "EXECUTING"})
    bus.emit("task:started", "t1", skill="S", intent=None)
    bus.emit("task:progress", "t1", message=f"using {SECRET}", step=1, done=False, ratio=0.5)
    bus.emit("task:completed", "t1", result={"message": f"has {SECRET}", "data": {"n": [1]}})
    bus.emit("runtime:initialized", None, session_id="s1")
    old, new = by_event.recent_entries(0, None), by_fields.recent_entries(0, None)
    assert len(old) == len(new) == 5
    for a, b in zip(old, new, strict=True):
        assert (a.seq, a.event, a.task_id, a.session_id, a.size) == (
            b.seq, b.event, b.task_id, b.session_id, b.size)  # fmt: skip
        assert a.data == b.data and SECRET not in b.data
    assert by_fields.bytes == by_event.bytes


async def test_an_event_from_another_thread_is_journaled_on_the_loop() -> None:
    """A provider streaming from its own thread: its events reach the journal on the loop's
    thread, in order."""
    import threading

    log = EventLog(Redactor())
    log.bind("t1", None)

    def send() -> None:
        for i in range(3):
            log.keep_event("task:stream", "t1", {"delta": str(i)}, 1.0)

    sender = threading.Thread(target=send)
    sender.start()
    sender.join()
    assert log.task_entries("t1", 0) == []  # not yet: handed to the loop
    for _ in range(3):
        await asyncio.sleep(0)
    deltas = [json.loads(e.data)["data"]["delta"] for e in log.task_entries("t1", 0)]
    assert deltas == ["0", "1", "2"]
