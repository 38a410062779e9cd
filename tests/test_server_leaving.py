"""A call answered with JSON runs in its request's own asyncio task (``Jobs.run_here``); a
request that stops waiting, cancelled or gone, leaves its task running: the task ends as it
would have, its reply is in the history and journaled as a ``message`` event for whoever
reattaches. The runtime's side of it is ``on_left``; without it, a cancelled caller still
stops its task (a host's Ctrl-C)."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

pytest.importorskip("fastapi")

from skillrt import AgentRuntime, SkillContext, SkillResult, skill
from skillrt.messages import ChatMessage
from skillrt.server.app import create_app
from skillrt.testing import FunctionModel
from tests.server_support import TOKEN, LiveServer, StepModel, make_runtime

_GATES: dict[str, asyncio.Event] = {}  # the test opens a gate; the skill waits at it


class GateParams(BaseModel):
    gate: str


@skill(name="Gate", params=GateParams, description="Waits at the test's gate, in a step")
async def gate_skill(ctx: SkillContext, params: GateParams) -> SkillResult:
    async def wait() -> str:
        await _GATES[params.gate].wait()
        return "opened"

    said = await ctx.step("wait", wait)
    return SkillResult(message=f"{params.gate} {said}")


@skill(name="GateAsk", params=GateParams, description="Waits at the test's gate, then asks")
async def gate_ask_skill(ctx: SkillContext, params: GateParams) -> SkillResult:
    await _GATES[params.gate].wait()
    answer = await ctx.ask("Which colour?")
    return SkillResult(message=f"you said {answer}")


def _runtime(tmp_path: Path) -> AgentRuntime:
    llm = FunctionModel(StepModel(), chunk_delay=0.001)
    return make_runtime(tmp_path, llm, extra_skills=[gate_skill, gate_ask_skill])


async def _until(check: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.005)


async def _first_task(runtime: AgentRuntime, call: asyncio.Future[Any], ids: list[str]) -> str:
    await _until(lambda: bool(ids) and runtime.task_state(ids[0]) is not None)
    assert not call.done()
    return ids[0]


# --- the runtime: on_left --------------------------------------------------------------------


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[AgentRuntime]:
    rt = _runtime(tmp_path)
    await rt.initialize()
    try:
        yield rt
    finally:
        await rt.close()


async def test_a_caller_that_may_leave_leaves_its_task_running(
    runtime: AgentRuntime, tmp_path: Path
) -> None:
    _GATES["left"] = asyncio.Event()
    ids: list[str] = []
    handed: list[ChatMessage | None] = []
    call = asyncio.ensure_future(
        runtime.run_skill(
            "Gate", {"gate": "left"}, {"session_id": "s-left"}, on_task=ids.append,
            on_left=handed.append,
        )
    )  # fmt: skip
    task_id = await _first_task(runtime, call, ids)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await asyncio.sleep(0.05)
    state = runtime.task_state(task_id)
    assert state is not None and state.value == "EXECUTING"  # not stopped with its caller
    assert handed == []
    _GATES["left"].set()
    await _until(lambda: bool(handed))
    [message] = handed
    assert message is not None and message.state == "COMPLETED"
    assert message.content == "left opened"
    # The reply is in the history, on disk: a new runtime on the same state reads it.
    await runtime.chatlog.written()
    again = _runtime(tmp_path)
    await again.initialize()
    try:
        await again.chatlog.load_session("s-left")
        turns = again.conversation("s-left").turns
        assert (turns[-1].role, turns[-1].content) == ("assistant", "left opened")
    finally:
        await again.close()


async def test_a_caller_that_may_leave_is_handed_a_question(runtime: AgentRuntime) -> None:
    _GATES["ask"] = asyncio.Event()
    ids: list[str] = []
    handed: list[ChatMessage | None] = []
    call = asyncio.ensure_future(
        runtime.run_skill("GateAsk", {"gate": "ask"}, on_task=ids.append, on_left=handed.append)
    )
    await _first_task(runtime, call, ids)
    call.cancel()  # before the question comes
    with pytest.raises(asyncio.CancelledError):
        await call
    _GATES["ask"].set()
    await _until(lambda: bool(handed))
    [message] = handed
    assert message is not None and message.state == "WAITING_INPUT"
    assert message.data["question"] == "Which colour?"
    answered = await runtime.answer_task(ids[0], "blue")
    assert answered is not None and answered.content == "you said blue"


async def test_a_caller_without_on_left_stops_its_task(runtime: AgentRuntime) -> None:
    _GATES["stop"] = asyncio.Event()
    ids: list[str] = []
    call = asyncio.ensure_future(runtime.run_skill("Gate", {"gate": "stop"}, on_task=ids.append))
    task_id = await _first_task(runtime, call, ids)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await _until(lambda: (s := runtime.task_state(task_id)) is None or s.value == "CANCELLED")


# --- the server: a JSON call in its request's task -------------------------------------------


def _scope(path: str, body: bytes) -> dict[str, Any]:
    headers = [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode()),
               (b"authorization", f"Bearer {TOKEN}".encode())]  # fmt: skip
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": "POST", "scheme": "http", "path": path, "raw_path": path.encode(),
            "query_string": b"", "root_path": "", "headers": headers,
            "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80), "state": {}}  # fmt: skip


async def test_a_cancelled_json_request_leaves_its_call_running(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path)
    app = create_app(runtime, token=TOKEN, hosts=["127.0.0.1"])
    state = app.state.skillrt
    await state.start()
    try:
        _GATES["json"] = asyncio.Event()
        body = json.dumps({"params": {"gate": "json"}, "session_id": "s-json"}).encode()
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        request = asyncio.ensure_future(app(_scope("/v1/skills/Gate/run", body), receive, send))
        await _until(lambda: any(j.task_id for j in state.jobs._running))
        [job] = state.jobs._running
        task_id = job.task_id
        # The call runs in the request's task: no task of its own.
        assert job.future is None
        request.cancel()
        with pytest.raises(asyncio.CancelledError):
            await request
        assert sent == []
        assert state.jobs.running_for(task_id)  # it goes on, and counts as running
        settling = asyncio.ensure_future(state.jobs.settle(task_id, 10))
        await asyncio.sleep(0.05)
        assert not settling.done()
        _GATES["json"].set()
        await settling
        assert not state.jobs.running_for(task_id)
        entries = list(state.log.task_entries(task_id, 0))
        assert entries[-1].event == "message"
        reply = json.loads(entries[-1].data)
        assert reply["state"] == "COMPLETED" and reply["content"] == "json opened"
        turns = runtime.conversation("s-json").turns
        assert (turns[-1].role, turns[-1].content) == ("assistant", "json opened")
    finally:
        await state.stop()


def test_a_json_client_that_goes_away_leaves_the_task_to_finish(tmp_path: Path) -> None:
    """A real socket closed while its JSON call runs: the task completes, and a client that
    reattaches to its events gets the reply."""
    live = LiveServer(_runtime(tmp_path))
    try:
        live.call(_open_gate_later("gone", None))
        body = json.dumps({"params": {"gate": "gone"}}).encode()
        sock = socket.create_connection(("127.0.0.1", live.port))
        sock.sendall(
            b"POST /v1/skills/Gate/run HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
            + TOKEN.encode()
            + b"\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(body)).encode()
            + b"\r\n\r\n"
            + body
        )
        deadline = time.monotonic() + 10
        while not (running := [j for j in list(live.state.jobs._running) if j.task_id]):
            assert time.monotonic() < deadline
            time.sleep(0.005)
        task_id = running[0].task_id
        sock.close()
        time.sleep(0.1)
        assert live.state.jobs.running_for(task_id)
        live.call(_open_gate_later("gone", 0.0))
        with live.client() as c:
            events = c.get(f"/v1/tasks/{task_id}/events", headers={"Accept": "text/event-stream"})
        last = events.text.strip().rsplit("event: message\ndata: ", 1)[1]
        message = json.loads(last.split("\n", 1)[0])
        assert message["state"] == "COMPLETED" and message["content"] == "gone opened"
    finally:
        live.stop()


async def _open_gate_later(name: str, after: float | None) -> None:
    """Make the gate (``after`` None) or open it."""
    if after is None:
        _GATES[name] = asyncio.Event()
    else:
        _GATES[name].set()


async def test_a_server_stopping_with_a_left_call_waits_for_it_and_ends(tmp_path: Path) -> None:
    """The server stops while a call whose request was cancelled still runs: the runtime stops
    the task (resumable, as ``close()`` leaves it), the call ends with the task's reply
    journaled, and stopping does not hang on it."""
    runtime = _runtime(tmp_path)
    app = create_app(runtime, token=TOKEN, hosts=["127.0.0.1"])
    state = app.state.skillrt
    await state.start()
    stopped = False
    try:
        _GATES["stop-left"] = asyncio.Event()  # never opened
        body = json.dumps({"params": {"gate": "stop-left"}}).encode()

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            raise AssertionError("no reply goes to a cancelled request")

        scope = _scope("/v1/skills/Gate/run", body)
        request = asyncio.ensure_future(app(scope, receive, send))
        await _until(lambda: any(j.task_id for j in state.jobs._running))
        [job] = state.jobs._running
        request.cancel()
        with pytest.raises(asyncio.CancelledError):
            await request
        assert not job.finished
        stopped = True
        async with asyncio.timeout(30):  # in this task: the one that started it (MCP's)
            await state.stop()
        assert job.finished and not state.jobs._running
        assert job.entry is not None and job.entry.event == "message"
        assert json.loads(job.entry.data)["task_id"] == job.task_id
    finally:
        if not stopped:
            await state.stop()
