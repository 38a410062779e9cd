"""``skillrt serve``'s API on a real uvicorn server at 127.0.0.1 (ephemeral port), with test
models: every endpoint, SSE order and reattach, abort, sessions, questions, bad requests."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

pytest.importorskip("fastapi")

from skillrt.testing import FunctionModel
from tests.server_support import LiveServer, StepModel, make_runtime, stream


@pytest.fixture
def model() -> StepModel:
    return StepModel()


@pytest.fixture
def live(tmp_path: Path, model: StepModel) -> Iterator[LiveServer]:
    server = LiveServer(make_runtime(tmp_path, FunctionModel(model, chunk_delay=0.01)))
    try:
        yield server
    finally:
        server.stop()


def works(live: LiveServer) -> None:
    """A normal request still works (after a bad one)."""
    with live.client() as c:
        r = c.post("/v1/skills/Steps/run", json={"params": {"topic": "ok", "steps": 1}})
        assert r.status_code == 200, r.text
        assert r.json()["state"] == "COMPLETED"


def test_input_json_returns_the_chat_message(live: LiveServer) -> None:
    with live.client() as c:
        r = c.post("/v1/input", json={"text": "steps rust"})
    assert r.status_code == 200, r.text
    msg = r.json()
    assert msg["state"] == "COMPLETED"
    assert msg["content"].startswith("rust part 1 w0")
    assert msg["data"]["parts"][2].startswith("rust part 3")
    assert r.headers["x-skillrt-exit-code"] == "0"


def test_sse_streams_events_in_order_ending_with_the_message(live: LiveServer) -> None:
    with live.client() as c:
        events = stream(c, "POST", "/v1/input", json={"text": "steps go"})
    names = [e.event for e in events]
    assert names[-1] == "message"
    assert events[-1].data["state"] == "COMPLETED"
    assert events[-1].data["content"].startswith("go part 1")
    ids = [e.id for e in events]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)  # strictly increasing
    assert names[0] == "state:changed"
    assert names.index("task:started") < names.index("task:progress")
    assert names.index("task:completed") < names.index("message")
    steps = [e.data["data"]["step"] for e in events if e.event == "task:progress"]
    assert steps == [1, 2, 3]
    text = "".join(e.data["data"]["delta"] for e in events if e.event == "task:stream")
    assert "go part 2 w0 w1 w2 w3" in text
    task_ids = {e.data["task_id"] for e in events}
    assert task_ids == {events[-1].data["task_id"]}


def test_skills_list_has_params_schema(live: LiveServer) -> None:
    with live.client() as c:
        skills = {s["name"]: s for s in c.get("/v1/skills").json()}
    steps = skills["Steps"]
    assert steps["intents"] == ["STEPS"]
    assert steps["params_schema"]["required"] == ["topic"]
    assert steps["params_schema"]["properties"]["steps"]["default"] == 3
    assert "WriteArticle" in skills and skills["WriteArticle"]["description"]


def test_info_healthz_and_openapi(live: LiveServer, tmp_path: Path) -> None:
    with live.client() as c:
        info = c.get("/v1/info").json()
        assert info["model"] == "function" and info["model_reason"] == "injected"
        assert info["content_root"] == str((tmp_path / "blog").resolve())
        assert "Steps" in info["skills"] and info["version"]
        assert c.get("/healthz").json() == {"status": "ok"}
        spec = c.get("/openapi.json").json()
    paths = spec["paths"]
    for path in (
        "/v1/input",
        "/v1/skills",
        "/v1/skills/{name}/run",
        "/v1/tasks",
        "/v1/tasks/{task_id}",
        "/v1/tasks/{task_id}/abort",
        "/v1/tasks/{task_id}/pause",
        "/v1/tasks/{task_id}/resume",
        "/v1/tasks/{task_id}/answer",
        "/v1/tasks/{task_id}/events",
        "/v1/events",
        "/v1/info",
    ):
        assert path in paths, path
    assert "delete" in paths["/v1/tasks/{task_id}"]


def _slow(live: LiveServer, model: StepModel) -> None:
    model.words = 200  # a long stream: 200 words at 10 ms each per step


def _wait_state(c: httpx.Client, task_id: str, state: str, timeout: float = 10) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = c.get(f"/v1/tasks/{task_id}")
        if r.status_code == 200 and r.json()["state"] == state:
            return r.json()
        time.sleep(0.02)
    raise AssertionError(f"task {task_id} never reached {state}: {r.text}")


def test_dropped_client_leaves_the_task_running_and_reattach_loses_nothing(
    live: LiveServer, model: StepModel
) -> None:
    model.words = 30
    with live.client() as c:
        first = stream(c, "POST", "/v1/input", json={"text": "steps reattach"}, stop_after=12)
        task_id = first[0].data["task_id"]
        assert c.get(f"/v1/tasks/{task_id}").json()["state"] == "EXECUTING"  # still running
        rest = stream(
            c, "GET", f"/v1/tasks/{task_id}/events", headers={"Last-Event-ID": str(first[-1].id)}
        )
        # Replaying the whole journal gives the same events: none lost, none repeated.
        full = stream(c, "GET", f"/v1/tasks/{task_id}/events")
    ids = [e.id for e in first + rest]
    assert ids == [e.id for e in full]
    assert len(set(ids)) == len(ids)
    assert rest[-1].event == "message" and rest[-1].data["state"] == "COMPLETED"
    assert rest[-1].data["data"]["parts"][2].startswith("reattach part 3")


def test_reattach_after_a_restart_with_the_last_id_seen_gets_the_resumed_task(
    tmp_path: Path, model: StepModel
) -> None:
    """A plugin followed a task that asked a question; the server restarted and the task was
    resumed (it asks again); the plugin reattaches with the last id it saw. Ids used to start
    at 1 again: it got an empty stream, the resumed task's events among the ids "seen"."""
    first = LiveServer(make_runtime(tmp_path, FunctionModel(model)))
    try:
        with first.client() as c:
            seen = stream(c, "POST", "/v1/input", json={"text": "ask me", "session_id": "s"})
    finally:
        first.stop()
    task_id, last = seen[-1].data["task_id"], seen[-1].id
    assert seen[-1].data["state"] == "WAITING_INPUT" and last is not None
    again = LiveServer(make_runtime(tmp_path, FunctionModel(model)))
    try:
        with again.client() as c:
            r = c.post(f"/v1/tasks/{task_id}/resume", json={"session_id": "s"})
            assert r.json()["state"] == "WAITING_INPUT", r.text
            rest = stream(
                c, "GET", f"/v1/tasks/{task_id}/events", headers={"Last-Event-ID": str(last)}
            )
            every = stream(c, "GET", f"/v1/tasks/{task_id}/events")
    finally:
        again.stop()
    assert [e.id for e in rest] == [e.id for e in every]
    assert all(e.id is not None and e.id > last for e in rest)
    assert rest[-1].event == "message" and rest[-1].data["content"] == "Which colour?"


def test_an_answer_to_a_task_that_asked_before_a_restart_resumes_it(
    tmp_path: Path, model: StepModel
) -> None:
    """A task asked a question; the server restarted, and the task rests PAUSED with its
    question. ``POST /answer`` said 409 "not waiting for an answer" until a resume had it ask
    again (``skillrt resume ID --answer TEXT`` and MCP's ``answer`` take it at once). Now the
    answer resumes the task, in its own session, and is the answer to its question; an empty
    one is refused before anything runs."""
    first = LiveServer(make_runtime(tmp_path, FunctionModel(model)))
    try:
        with first.client() as c:
            asked = c.post("/v1/input", json={"text": "ask me", "session_id": "s"}).json()
    finally:
        first.stop()
    task_id = asked["task_id"]
    again = LiveServer(make_runtime(tmp_path, FunctionModel(model)))
    try:
        with again.client() as c:
            shown = c.get(f"/v1/tasks/{task_id}").json()
            assert shown["state"] == "PAUSED" and shown["question"] == "Which colour?"
            empty = c.post(f"/v1/tasks/{task_id}/answer", json={"text": " \x00 "})
            assert empty.status_code == 422 and "empty" in empty.json()["detail"], empty.text
            assert c.get(f"/v1/tasks/{task_id}").json()["state"] == "PAUSED"
            r = c.post(f"/v1/tasks/{task_id}/answer", json={"text": "green"})
            assert r.status_code == 200, r.text
            assert r.json()["state"] == "COMPLETED" and r.json()["content"] == "you said green"
            assert c.get(f"/v1/tasks/{task_id}").status_code == 404
    finally:
        again.stop()


def test_reattach_to_a_task_paused_by_a_restart_says_why_nothing_comes(
    tmp_path: Path, model: StepModel
) -> None:
    """After a restart the journal is empty: the reattached stream of the paused task used to
    end at once with no reply and no reason. It ends with an ``error`` event saying so; a
    stream past a reply already sent still ends quietly."""
    first = LiveServer(make_runtime(tmp_path, FunctionModel(model)))
    try:
        with first.client() as c:
            seen = stream(c, "POST", "/v1/input", json={"text": "ask me", "session_id": "s"})
            task_id, last = seen[-1].data["task_id"], seen[-1].id
            done = stream(c, "POST", "/v1/skills/Steps/run", json={"params": {"topic": "a"}})
            done_id = done[-1].data["task_id"]
            past = c.get(f"/v1/tasks/{done_id}/events", headers={"Last-Event-ID": str(done[-1].id)})
    finally:
        first.stop()
    assert past.status_code == 200 and "event:" not in past.text  # nothing after the reply
    again = LiveServer(make_runtime(tmp_path, FunctionModel(model)))
    try:
        with again.client() as c:
            assert c.get(f"/v1/tasks/{task_id}").json()["state"] == "PAUSED"
            events = stream(
                c, "GET", f"/v1/tasks/{task_id}/events", headers={"Last-Event-ID": str(last)}
            )
    finally:
        again.stop()
    assert [e.event for e in events] == ["error"]
    assert events[0].data["code"] == "task-conflict" and events[0].data["status"] == 409
    assert f"task {task_id} is PAUSED" in events[0].data["detail"]


def test_cancel_on_disconnect_cancels_the_task(live: LiveServer, model: StepModel) -> None:
    model.words = 200
    with live.client() as c:
        first = stream(
            c,
            "POST",
            "/v1/input?cancel_on_disconnect=true",
            json={"text": "steps gone"},
            stop_after=8,
        )
        task_id = first[0].data["task_id"]
        rest = stream(c, "GET", f"/v1/tasks/{task_id}/events", headers={"Last-Event-ID": "0"})
    assert rest[-1].event == "message"
    assert rest[-1].data["state"] == "CANCELLED"
    assert len(model.calls) == 1  # the second step never began


def test_cancel_on_disconnect_closes_the_model_stream(tmp_path: Path) -> None:
    """The model is the OpenAI-compatible test server over a real socket: the client drops its
    SSE connection mid-answer, the server side sees the model's stream closed, and step 2 of
    the task never runs. (How fast: ``python -m benchmarks --only serve``.)"""
    from skillrt.llm.openai_provider import OpenAIProvider
    from tests.openai_server import OpenAIServer, Reply
    from tests.server_support import parse_sse

    words = 400
    with OpenAIServer() as upstream:
        upstream.default = Reply(" ".join(f"w{i}" for i in range(words)), chunk_delay=0.01)
        provider = OpenAIProvider(
            base_url=upstream.base_url, api_key="test", model="gpt-4o-mini", max_retries=0
        )
        live = LiveServer(make_runtime(tmp_path, provider))
        try:
            with live.client() as c:
                path = "/v1/skills/Steps/run?cancel_on_disconnect=true"
                body = {"params": {"topic": "gone", "steps": 3}}
                headers = {"Accept": "text/event-stream"}
                with c.stream("POST", path, json=body, headers=headers) as r:
                    for event in parse_sse(r.iter_lines()):
                        if event.event == "task:stream":
                            task_id = event.data["task_id"]
                            break  # and the connection closes
                [request] = upstream.chat_requests
                assert upstream.wait_for(lambda: request.disconnected_at is not None, 10)
                assert request.finished_at is None and request.chunks_sent < words
                rest = stream(
                    c, "GET", f"/v1/tasks/{task_id}/events", headers={"Last-Event-ID": "0"}
                )
            assert rest[-1].event == "message" and rest[-1].data["state"] == "CANCELLED"
            assert len(upstream.chat_requests) == 1  # step 2 never began
            assert "part2" not in str(rest)
        finally:
            live.call(provider.aclose())
            live.stop()


async def test_a_stream_cancelled_as_an_event_comes_stops() -> None:
    """The race that let a dropped stream follow its task to the end (so
    ``cancel_on_disconnect`` came only then): the follower is cancelled in the same loop turn
    as the event it waits for is set. It must stop, not read on."""
    import asyncio

    from skillrt.server.sse import EventLog

    log = EventLog()
    log.bind("t1", None)
    got: list[str] = []

    async def follow() -> None:
        async for entry in log.follow_task("t1", 0, running=lambda: True):
            got.append(entry.event if entry else "ping")

    follower = asyncio.ensure_future(follow())
    await asyncio.sleep(0.01)  # waiting for the task's next event now
    log.add("task:stream", "t1", {"delta": "a"})
    follower.cancel()
    await asyncio.wait({follower}, timeout=2)
    assert follower.cancelled()
    assert got == []


def test_abort_mid_stream_closes_the_model_stream(live: LiveServer, model: StepModel) -> None:
    model.words = 300
    events = []
    task_id: list[str] = []
    with live.client() as c:

        def abort_soon() -> None:
            while not task_id:
                time.sleep(0.01)
            time.sleep(0.3)
            assert c.post(f"/v1/tasks/{task_id[0]}/abort").json()["ok"] is True

        aborter = threading.Thread(target=abort_soon)
        aborter.start()
        headers = {"Accept": "text/event-stream"}
        from tests.server_support import parse_sse

        started = time.monotonic()
        with c.stream("POST", "/v1/input", json={"text": "steps abort"}, headers=headers) as r:
            for e in parse_sse(r.iter_lines()):
                events.append(e)
                if not task_id and e.data.get("task_id"):
                    task_id.append(e.data["task_id"])
        elapsed = time.monotonic() - started
        aborter.join()
        assert c.get(f"/v1/tasks/{task_id[0]}").status_code == 404  # gone: cancelled
    assert events[-1].event == "message" and events[-1].data["state"] == "CANCELLED"
    deltas = [e for e in events if e.event == "task:stream"]
    assert 5 < len(deltas) < 150  # the stream stopped well before its 300 words
    assert elapsed < 2.5
    assert [e.data["data"]["reason"] for e in events if e.event == "task:aborted"] == ["cancelled"]
    time.sleep(0.2)
    assert len(model.calls) == 1


def test_abort_of_a_running_call_replies_with_the_state_it_ended_in(
    live: LiveServer, model: StepModel
) -> None:
    """The abort's reply said ``{"ok": true, "state": "EXECUTING"}``: the state a moment
    before the task stopped. Its call here ends at once: the reply names ``CANCELLED``."""
    model.words = 300
    replies: list[httpx.Response] = []
    with live.client() as c:

        def run() -> None:
            with live.client() as other:
                body = {"params": {"topic": "x"}, "session_id": "ab"}
                replies.append(other.post("/v1/skills/Steps/run", json=body))

        runner = threading.Thread(target=run)
        runner.start()
        deadline = time.monotonic() + 10
        while not (tasks := c.get("/v1/tasks", params={"session_id": "ab"}).json()):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        r = c.post(f"/v1/tasks/{tasks[0]['id']}/abort")
        runner.join(10)
    assert r.status_code == 200 and r.json() == {
        "task_id": tasks[0]["id"],
        "ok": True,
        "state": "CANCELLED",
    }, r.text
    assert replies[0].json()["state"] == "CANCELLED"


def test_two_sessions_are_kept_apart(live: LiveServer) -> None:
    with live.client() as c:
        a = c.post("/v1/skills/Ask/run", json={"params": {}, "session_id": "alice"}).json()
        b = c.post("/v1/skills/Ask/run", json={"params": {}, "session_id": "bob"}).json()
        assert a["state"] == b["state"] == "WAITING_INPUT"
        tasks = {t["id"]: t for t in c.get("/v1/tasks").json()}
        assert tasks[a["task_id"]]["session_id"] == "alice"
        assert tasks[b["task_id"]]["question"] == "Which colour?"
        only_bob = c.get("/v1/tasks", params={"session_id": "bob"}).json()
        assert [t["id"] for t in only_bob] == [b["task_id"]]
        # Bob's plain input answers Bob's question, not Alice's.
        rb = c.post("/v1/input", json={"text": "blue", "session_id": "bob"}).json()
        assert rb["task_id"] == b["task_id"] and rb["content"] == "you said blue"
        ra = c.post("/v1/input", json={"text": "red", "context": {"session_id": "alice"}}).json()
        assert ra["task_id"] == a["task_id"] and ra["content"] == "you said red"


def test_waiting_task_answered_over_http_with_sse(live: LiveServer) -> None:
    with live.client() as c:
        events = stream(c, "POST", "/v1/skills/Ask/run", json={"params": {"question": "Tea?"}})
        assert events[-1].event == "message"
        question = events[-1].data
        assert question["state"] == "WAITING_INPUT" and question["content"] == "Tea?"
        assert "task:waiting_input" in [e.event for e in events]
        task_id = question["task_id"]
        assert c.get(f"/v1/tasks/{task_id}").json()["question"] == "Tea?"
        answered = stream(c, "POST", f"/v1/tasks/{task_id}/answer", json={"text": "yes please"})
        assert answered[-1].data["content"] == "you said yes please"
        assert answered[-1].data["state"] == "COMPLETED"
        assert answered[0].id > events[-1].id  # only what came after the answer
        r = c.post(f"/v1/tasks/{task_id}/answer", json={"text": "again"})
        assert r.status_code == 404


def test_pause_resume_and_abandon(live: LiveServer, model: StepModel) -> None:
    model.words = 40
    with live.client() as c:
        first = stream(c, "POST", "/v1/input", json={"text": "steps pause"}, stop_after=3)
        task_id = first[0].data["task_id"]
        assert c.post(f"/v1/tasks/{task_id}/pause").json() == {
            "task_id": task_id,
            "ok": True,
            "state": "EXECUTING",
        }
        paused = _wait_state(c, task_id, "PAUSED")
        assert paused["steps_done"] == 1
        listed = [t["id"] for t in c.get("/v1/tasks").json()]
        assert task_id in listed
        resumed = stream(c, "POST", f"/v1/tasks/{task_id}/resume", json={"session_id": "s2"})
        assert resumed[-1].event == "message"
        assert resumed[-1].data["state"] == "COMPLETED"
        assert [e.data["data"]["step"] for e in resumed if e.event == "task:progress"] == [1, 2, 3]
        assert len(model.calls) == 3  # the first step was not asked again
        assert c.post(f"/v1/tasks/{task_id}/resume").status_code == 404

        # Pause another, then abandon it: it is gone for good.
        second = stream(c, "POST", "/v1/input", json={"text": "steps drop"}, stop_after=3)
        other = second[0].data["task_id"]
        c.post(f"/v1/tasks/{other}/pause")
        _wait_state(c, other, "PAUSED")
        gone = c.delete(f"/v1/tasks/{other}")
        assert gone.json() == {"task_id": other, "ok": True, "state": "ABANDONED"}
        assert c.get(f"/v1/tasks/{other}").status_code == 404
        assert c.delete(f"/v1/tasks/{other}").status_code == 404


def test_abort_of_a_paused_task_replies_cancelled(live: LiveServer, model: StepModel) -> None:
    """Cancelling a paused task replied ``{"ok": true, "state": null}``: ended, it is no
    longer held, and the reply named no state. It names ``CANCELLED``; the task is gone."""
    model.words = 40
    with live.client() as c:
        first = stream(c, "POST", "/v1/input", json={"text": "steps cancel"}, stop_after=3)
        task_id = first[0].data["task_id"]
        c.post(f"/v1/tasks/{task_id}/pause")
        _wait_state(c, task_id, "PAUSED")
        r = c.post(f"/v1/tasks/{task_id}/abort")
        assert r.status_code == 200, r.text
        assert r.json() == {"task_id": task_id, "ok": True, "state": "CANCELLED"}
        assert c.get(f"/v1/tasks/{task_id}").status_code == 404


def test_abort_of_a_task_waiting_for_an_answer_replies_cancelled(live: LiveServer) -> None:
    """Its call had returned the question: the abort replied ``{"ok": true, "state":
    "WAITING_INPUT"}``, the state a moment before its run, cancelled, ended."""
    with live.client() as c:
        for _ in range(3):
            asked = c.post("/v1/skills/Ask/run", json={"params": {}}).json()
            task_id = asked["task_id"]
            r = c.post(f"/v1/tasks/{task_id}/abort")
            assert r.json() == {"task_id": task_id, "ok": True, "state": "CANCELLED"}, r.text
            assert c.get(f"/v1/tasks/{task_id}").status_code == 404


def test_resume_json_and_conflicts(live: LiveServer, model: StepModel) -> None:
    model.words = 40
    with live.client() as c:
        first = stream(c, "POST", "/v1/input", json={"text": "steps json"}, stop_after=3)
        task_id = first[0].data["task_id"]
        r = c.post(f"/v1/tasks/{task_id}/resume")  # running: not resumable
        assert r.status_code == 409 and r.json()["code"] == "task-conflict"
        r = c.delete(f"/v1/tasks/{task_id}")
        assert r.status_code == 409
        c.post(f"/v1/tasks/{task_id}/pause")
        _wait_state(c, task_id, "PAUSED")
        assert c.post(f"/v1/tasks/{task_id}/pause").status_code == 409
        done = c.post(f"/v1/tasks/{task_id}/resume")
        assert done.status_code == 200 and done.json()["state"] == "COMPLETED"
    works(live)


def test_events_stream_by_session(live: LiveServer) -> None:
    seen = []
    ready = threading.Event()

    def follow() -> None:
        with (
            live.client() as c,
            c.stream(
                "GET",
                "/v1/events",
                params={"session_id": "watched"},
                headers={"Accept": "text/event-stream"},
            ) as r,
        ):
            from tests.server_support import parse_sse

            ready.set()
            for e in parse_sse(r.iter_lines()):
                seen.append(e)
                if e.event == "message":
                    return

    follower = threading.Thread(target=follow)
    follower.start()
    assert ready.wait(5)
    time.sleep(0.2)
    with live.client() as c:
        other = c.post("/v1/input", json={"text": "steps other", "session_id": "elsewhere"})
        mine = c.post("/v1/input", json={"text": "steps mine", "session_id": "watched"})
    follower.join(10)
    assert seen and seen[-1].event == "message"
    assert {e.data["task_id"] for e in seen} == {mine.json()["task_id"]}
    assert other.json()["task_id"] != mine.json()["task_id"]


# --- bad requests, each followed by a request that works -----------------------------------


def test_missing_or_wrong_token_is_401(live: LiveServer) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong-token-0123456789"}, {"Authorization": "x"}):
        r = httpx.get(f"{live.url}/v1/tasks", headers=headers)
        assert r.status_code == 401
        assert r.headers["content-type"] == "application/problem+json"
        body = r.json()
        assert body["code"] == "unauthorized" and body["type"] == "urn:skillrt:problem:unauthorized"
        assert body["exit_code"] == 2 and body["status"] == 401
        assert r.headers["www-authenticate"] == "Bearer"
        works(live)
    assert httpx.get(f"{live.url}/healthz").status_code == 200  # no token needed


def test_bad_host_is_refused(live: LiveServer) -> None:
    r = httpx.get(f"{live.url}/v1/tasks", headers={**live.headers(), "Host": "evil.example:80"})
    assert r.status_code == 421 and r.json()["code"] == "bad-host"
    works(live)
    r = httpx.get(f"{live.url}/", headers={"Host": "rebind.attacker.test"})
    assert r.status_code == 421
    r = httpx.get(f"{live.url}/v1/tasks", headers={**live.headers(), "Host": "a b"})
    assert r.status_code == 400
    works(live)
    ok = httpx.get(
        f"{live.url}/v1/tasks", headers={**live.headers(), "Host": f"localhost:{live.port}"}
    )
    assert ok.status_code == 200


def test_oversize_body_is_413(live: LiveServer) -> None:
    with live.client() as c:
        r = c.post("/v1/input", json={"text": "x" * 1_100_000})
        assert r.status_code == 413 and r.json()["code"] == "too-large"
    # A new connection: under load, the next request on the one that sent the refused body
    # once got a 431 (an open question in the closing note of 2026-11-26).
    with live.client() as c:

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it comes
            yield b'{"text": "'
            for _ in range(20):
                yield b"y" * 100_000
            yield b'"}'

        r = c.post("/v1/input", content=chunks(), headers={"Content-Type": "application/json"})
        assert r.status_code == 413
    works(live)


def test_a_body_not_sent_as_json_is_told_to_send_json(live: LiveServer) -> None:
    """``fetch`` with a string body sends ``text/plain``: the 422 said only "body: Input should
    be a valid dictionary or object to extract fields from"."""
    body = b'{"text": "steps a"}'
    with live.client() as c:
        for headers, came in (
            ({"Content-Type": "text/plain;charset=UTF-8"}, "Content-Type text/plain"),
            ({}, "no Content-Type"),
        ):
            for path in ("/v1/input", "/v1/tasks/x/answer"):
                r = c.post(path, content=body, headers=headers)
                assert r.status_code == 422 and r.json()["code"] == "invalid-request", r.text
                detail = r.json()["detail"]
                assert "Content-Type: application/json" in detail and came in detail, detail
        r = c.post("/v1/input", json={"txt": "hello"})  # JSON: its fields are named as before
        assert "Content-Type" not in r.json()["detail"]
    works(live)


def test_malformed_json_and_wrong_params_are_422_naming_the_field(live: LiveServer) -> None:
    with live.client() as c:
        r = c.post("/v1/input", content=b"{not json", headers={"Content-Type": "application/json"})
        assert r.status_code == 422 and r.json()["code"] == "invalid-request"
        works(live)
        r = c.post("/v1/input", json={"txt": "hello"})
        assert r.status_code == 422
        assert "body.text" in r.json()["detail"]
        works(live)
        r = c.post("/v1/skills/Steps/run", json={"params": {"steps": "many"}})
        assert r.status_code == 422
        detail = r.json()["detail"]
        assert "params.topic" in detail and "params.steps" in detail
        assert {tuple(e["loc"]) for e in r.json()["errors"]} >= {("body", "params", "topic")}
        works(live)
        r = c.get("/v1/tasks/x/events", headers={"Last-Event-ID": "abc"})
        assert r.status_code == 422 and "Last-Event-ID" in r.json()["detail"]
    works(live)


def test_unknown_skill_or_task_is_404(live: LiveServer) -> None:
    with live.client() as c:
        r = c.post("/v1/skills/NoSuch/run", json={"params": {}})
        assert r.status_code == 404 and r.json()["code"] == "unknown-skill"
        assert "Steps" in r.json()["detail"]
        works(live)
        for method, path in (
            ("GET", "/v1/tasks/nope"),
            ("POST", "/v1/tasks/nope/abort"),
            ("POST", "/v1/tasks/nope/pause"),
            ("POST", "/v1/tasks/nope/resume"),
            ("DELETE", "/v1/tasks/nope"),
            ("GET", "/v1/tasks/nope/events"),
        ):
            r = c.request(method, path)
            assert r.status_code == 404, (method, path)
            assert r.json()["code"] == "unknown-task"
            works(live)
        r = c.post("/v1/tasks/nope/answer", json={"text": "x"})
        assert r.status_code == 404
        assert c.get("/v1/nothing-here").json()["code"] == "not-found"
    works(live)


def test_path_outside_the_blog_gets_the_runtimes_refusal(live: LiveServer, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("# secret\n", encoding="utf-8")
    with live.client() as c:
        r = c.post(
            "/v1/skills/EditContent/run",
            json={"params": {"path": "../secret.md", "instruction": "shorten it"}},
        )
    assert r.status_code == 200
    msg = r.json()
    assert msg["state"] == "ERROR"
    assert "outside" in msg["content"] or "escape" in msg["content"], msg["content"]
    assert r.headers["x-skillrt-exit-code"] == "1"
    assert secret.read_text(encoding="utf-8") == "# secret\n"
    works(live)


def test_undo_with_no_body_undoes_the_last_write(live: LiveServer, tmp_path: Path) -> None:
    """``{path?, language?}``: every field optional, so no body at all asks the plainest undo
    (it was refused, 422 "body: Field required")."""
    with live.client() as c:
        r = c.post("/v1/undo")
        assert r.status_code == 200, r.text
        assert r.json()["data"]["error"] == "nothing_to_undo"
        r = c.post("/v1/skills/CreateArticle/run", json={"params": {"title": "Undo me"}})
        assert r.json()["state"] == "COMPLETED", r.text
        made = tmp_path / "blog" / r.json()["data"]["path"]
        assert made.exists()
        r = c.post("/v1/undo")
        assert r.status_code == 200, r.text
        assert r.json()["data"]["action"] == "create" and not made.exists()
        r = c.post("/v1/undo", content=b"[1]", headers={"Content-Type": "application/json"})
        assert r.status_code == 422  # a body that is there is still checked


def test_cors_only_for_the_configured_origins(tmp_path: Path) -> None:
    rt = make_runtime(
        tmp_path, FunctionModel(StepModel()), serve={"cors_origins": ["http://editor.test"]}
    )
    server = LiveServer(rt)
    try:
        preflight = {
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization,content-type",
        }
        ok = httpx.options(
            f"{server.url}/v1/input", headers={"Origin": "http://editor.test", **preflight}
        )
        assert ok.status_code == 200
        assert ok.headers["access-control-allow-origin"] == "http://editor.test"
        assert "authorization" in ok.headers["access-control-allow-headers"].lower()
        bad = httpx.options(
            f"{server.url}/v1/input", headers={"Origin": "http://evil.test", **preflight}
        )
        assert "access-control-allow-origin" not in bad.headers
        r = httpx.get(
            f"{server.url}/v1/tasks", headers={**server.headers(), "Origin": "http://editor.test"}
        )
        assert r.headers["access-control-allow-origin"] == "http://editor.test"
    finally:
        server.stop()


def test_no_cors_by_default(live: LiveServer) -> None:
    r = httpx.get(
        f"{live.url}/v1/tasks", headers={**live.headers(), "Origin": "http://editor.test"}
    )
    assert r.status_code == 200
    assert "access-control-allow-origin" not in r.headers
    pre = httpx.options(
        f"{live.url}/v1/input",
        headers={"Origin": "http://editor.test", "Access-Control-Request-Method": "POST"},
    )
    assert "access-control-allow-origin" not in pre.headers
    works(live)


def test_an_answer_sent_as_soon_as_the_task_is_listed_waiting_is_taken(
    live: LiveServer,
) -> None:
    """A task is listed WAITING_INPUT, with its question, while that question is saved (a
    commit away). A client that answered as soon as it saw it listed was refused, 409 "not
    waiting for an answer", ten times in fifteen, and its answer lost. Now it is taken."""
    with live.client() as c:
        for n in range(8):
            session = f"early{n}"
            asked: list[httpx.Response] = []

            def ask(session: str = session, asked: list[httpx.Response] = asked) -> None:
                with live.client() as other:
                    body = {"params": {}, "session_id": session}
                    asked.append(other.post("/v1/skills/Ask/run", json=body))

            asker = threading.Thread(target=ask)
            asker.start()
            deadline = time.monotonic() + 10
            while not (
                waiting := [
                    t
                    for t in c.get("/v1/tasks", params={"session_id": session}).json()
                    if t["state"] == "WAITING_INPUT"
                ]
            ):
                assert time.monotonic() < deadline
            r = c.post(f"/v1/tasks/{waiting[0]['id']}/answer", json={"text": "red"})
            asker.join(10)
            assert r.status_code == 200, r.text
            assert r.json()["content"] == "you said red"
            assert asked[0].json()["state"] == "WAITING_INPUT"  # its caller got the question


def test_an_answer_racing_a_plain_input_is_told_the_question_was_answered(
    live: LiveServer,
) -> None:
    """``POST /answer`` and a plain input of the task's session, sent together: the one that
    lost, past the check that the task waits, was told 409 "the task cannot be resumed now"
    (nothing was being resumed). Now it is told the task is not waiting for an answer."""
    replies: list[httpx.Response] = []
    with live.client() as c:
        for n in range(20):
            session = f"race{n}"
            asked = c.post("/v1/input", json={"text": "ask me", "session_id": session}).json()
            task_id = asked["task_id"]

            def plain(session: str = session) -> None:
                with live.client() as other:
                    other.post("/v1/input", json={"text": "blue", "session_id": session})

            def answered(task_id: str = task_id) -> None:
                with live.client() as other:
                    replies.append(other.post(f"/v1/tasks/{task_id}/answer", json={"text": "red"}))

            both = [threading.Thread(target=plain), threading.Thread(target=answered)]
            for thread in both:
                thread.start()
            for thread in both:
                thread.join(10)
    for r in replies:
        if r.status_code == 409:
            assert "not waiting for an answer" in r.json()["detail"], r.text
        else:
            assert r.status_code in (200, 404), r.text


def test_a_bad_answer_is_a_problem_in_json_and_in_sse(live: LiveServer) -> None:
    with live.client() as c:
        asked = c.post("/v1/skills/Ask/run", json={"params": {}}).json()
        task_id = asked["task_id"]
        r = c.post(f"/v1/tasks/{task_id}/answer", json={"text": "   "})
        assert r.status_code == 422 and "empty" in r.json()["detail"]
        events = stream(c, "POST", f"/v1/tasks/{task_id}/answer", json={"text": "\x00 "})
        assert [e.event for e in events] == ["error"]
        assert events[0].data["code"] == "invalid-request" and events[0].data["status"] == 422
        # Still waiting, and a real answer works.
        assert c.get(f"/v1/tasks/{task_id}").json()["state"] == "WAITING_INPUT"
        done = c.post(f"/v1/tasks/{task_id}/answer", json={"text": "green"}).json()
        assert done["content"] == "you said green"
    works(live)


def test_shutdown_refuses_new_calls_and_ends_streams_with_the_reply(
    live: LiveServer, model: StepModel
) -> None:
    model.words = 400
    with live.client() as c:
        first = stream(c, "POST", "/v1/input", json={"text": "steps stop"}, stop_after=6)
        task_id = first[0].data["task_id"]
        follower: list = []
        reader = threading.Thread(
            target=lambda: follower.extend(
                stream(c, "GET", f"/v1/tasks/{task_id}/events", headers={"Last-Event-ID": "0"})
            )
        )
        reader.start()
        time.sleep(0.3)
        live.loop.call_soon_threadsafe(live.state.begin_shutdown)  # what SIGTERM does first
        reader.join(10)
        assert follower[-1].event == "message"
        assert follower[-1].data["data"]["outcome"] == "interrupted"
        r = c.get("/v1/tasks")
        assert r.status_code == 503 and r.json()["code"] == "shutting-down"
        assert c.get("/healthz").json() == {"status": "stopping"}
    # The task stays resumable, as close() leaves it: a new runtime on the same state has it.
    from skillrt import AgentRuntime

    again = AgentRuntime(live.runtime.config, llm=FunctionModel(StepModel()))

    async def resumable() -> list[str]:
        await again.initialize()
        try:
            return [t.id for t in again.get_resumable_tasks()]
        finally:
            await again.close()

    import asyncio

    assert task_id in asyncio.run(resumable())


async def test_task_list_while_many_tasks_start_and_end(live: LiveServer) -> None:
    import asyncio

    async with httpx.AsyncClient(base_url=live.url, headers=live.headers(), timeout=30) as c:

        async def run(i: int) -> str:
            r = await c.post("/v1/input", json={"text": f"steps many{i}", "session_id": f"s{i}"})
            return str(r.json()["state"])

        async def poll() -> list[int]:
            codes = []
            for _ in range(40):
                codes.append((await c.get("/v1/tasks")).status_code)
                await asyncio.sleep(0.005)
            return codes

        *states, codes = await asyncio.gather(*(run(i) for i in range(30)), poll())
    assert states == ["COMPLETED"] * 30
    assert set(codes) == {200}
