"""The shortcut to ``POST /v1/skills/{name}/run`` and ``POST /v1/input`` (``fastroutes``), on
a real uvicorn server: well-formed calls are answered without the FastAPI app, every refusal
goes to it and reads as it always did."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi")

from skillrt.server.fastroutes import FastRoutes
from skillrt.testing import FunctionModel
from tests.server_support import LiveServer, StepModel, make_runtime, stream


class Counting:
    """An ASGI app in front of the FastAPI app: counts the requests that reach it."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.paths: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.paths.append(scope["path"])
        await self.app(scope, receive, send)


def _shortcut(app: Any) -> FastRoutes:
    while not isinstance(app, FastRoutes):
        app = app.app
    return app


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[LiveServer, Counting]]:
    server = LiveServer(make_runtime(tmp_path, FunctionModel(StepModel(), chunk_delay=0.001)))
    fast = _shortcut(server.server.config.app)
    counting = fast.app = Counting(fast.app)
    try:
        yield server, counting
    finally:
        server.stop()


def test_well_formed_calls_are_answered_without_the_app(
    live: tuple[LiveServer, Counting],
) -> None:
    server, app = live
    with server.client() as c:
        r = c.post("/v1/skills/Steps/run", json={"params": {"topic": "go", "steps": 1}})
        assert r.status_code == 200, r.text
        assert r.headers["content-type"] == "application/json"
        assert r.headers["x-skillrt-exit-code"] == "0"
        assert r.json()["state"] == "COMPLETED" and r.json()["content"].startswith("go part 1")
        r = c.post(
            "/v1/input?cancel_on_disconnect=false",
            json={"text": "steps rust", "context": {"session_id": "s1"}},
            headers={"Content-Type": "application/json; charset=utf-8"},
        )
        assert r.status_code == 200 and r.json()["state"] == "COMPLETED"
        events = stream(c, "POST", "/v1/skills/Steps/run", json={"params": {"topic": "sse"}})
        assert events[0].event == "state:changed" and events[-1].event == "message"
        assert events[-1].data["state"] == "COMPLETED"
        assert app.paths == []
        tasks = c.get("/v1/tasks", params={"session_id": "s1"})
        assert tasks.status_code == 200
    assert app.paths == ["/v1/tasks"]  # every other route is the app's


def test_refusals_go_to_the_app_and_read_as_before(live: tuple[LiveServer, Counting]) -> None:
    server, app = live
    run = "/v1/skills/Steps/run"
    ok_body = {"params": {"topic": "x", "steps": 1}}
    cases: list[tuple[str, dict[str, Any], int, str | None]] = [
        (run, {"json": ok_body, "headers": {"Authorization": "Bearer wrong-0123456789"}}, 401,
         "unauthorized"),
        (run, {"json": ok_body, "headers": {"Authorization": ""}}, 401, "unauthorized"),
        (run, {"content": b"topic=x", "headers": {"Content-Type": "text/plain"}}, 422,
         "invalid-request"),
        (run, {"content": b"{not json", "headers": {"Content-Type": "application/json"}}, 422,
         "invalid-request"),
        (run, {"json": {"params": {"steps": "many"}}}, 422, "invalid-request"),
        (run, {"json": {**ok_body, "extra": 1}}, 422, "invalid-request"),
        ("/v1/skills/NoSuch/run", {"json": ok_body}, 404, "unknown-skill"),
        ("/v1/skills/a/b/run", {"json": ok_body}, 404, "not-found"),
        ("/v1/input", {"json": {"text": ""}}, 422, "invalid-request"),
        ("/v1/input?cancel_on_disconnect=maybe", {"json": {"text": "steps a"}}, 422,
         "invalid-request"),
        # Forms of the query FastAPI takes that the shortcut leaves to it: answered all the same.
        ("/v1/input?cancel_on_disconnect=yes", {"json": {"text": "steps a"}}, 200, None),
        (f"{run}?other=1", {"json": ok_body}, 200, None),
    ]  # fmt: skip
    with server.client() as c:
        for path, kwargs, status, code in cases:
            before = len(app.paths)
            r = c.post(path, **kwargs)
            assert r.status_code == status, (path, kwargs, r.text)
            assert len(app.paths) == before + 1, (path, kwargs)
            if code is not None:
                assert r.headers["content-type"] == "application/problem+json"
                assert r.json()["code"] == code, r.text
            if status == 401:
                assert r.headers["www-authenticate"] == "Bearer"
        assert "body.params.topic" in c.post(run, json={"params": {}}).json()["detail"]


def test_a_stopping_server_refuses_through_the_app(live: tuple[LiveServer, Counting]) -> None:
    server, app = live
    server.state.closing = True
    try:
        r = httpx.post(f"{server.url}/v1/input", json={"text": "steps a"}, headers=server.headers())
    finally:
        server.state.closing = False
    assert r.status_code == 503 and r.json()["code"] == "shutting-down"
    assert app.paths == ["/v1/input"]


def test_the_body_limit_holds_on_the_shortcut(live: tuple[LiveServer, Counting]) -> None:
    """Without CORS the shortcut stands in front of the body limit: a call within it, even sent
    in pieces, is answered by the shortcut; one past it, declared or streamed, goes to the app
    and is refused there with 413 as before."""
    server, app = live
    limit = server.state.runtime.config.serve.max_body_bytes
    run = "/v1/skills/Steps/run"
    json_type = {"Content-Type": "application/json"}

    def pieces(total: int) -> Iterator[bytes]:  # no Content-Length: counted as it comes
        yield b'{"params": {"topic": "'
        sent = 0
        while sent < total:
            yield b"y" * min(100_000, total - sent)
            sent += 100_000
        yield b'", "steps": 1}}'

    with server.client() as c:
        r = c.post(run, content=pieces(250_000), headers=json_type)
        assert r.status_code == 200 and r.json()["state"] == "COMPLETED"
        assert app.paths == []
        r = c.post(run, content=b"{" + b" " * limit + b"}", headers=json_type)
        assert r.status_code == 413 and r.json()["code"] == "too-large"
        assert app.paths == [run]
    with server.client() as c:
        r = c.post(run, content=pieces(limit + 200_000), headers=json_type)
        assert r.status_code == 413 and r.json()["code"] == "too-large"
        assert app.paths == [run, run]


def _raw_post(port: int, path: str, hosts: list[str], token: str, body: bytes) -> bytes:
    """A POST with exactly the Host headers given (none, one or two); the server's answer."""
    lines = [f"POST {path} HTTP/1.1", *(f"Host: {h}" for h in hosts),
             f"Authorization: Bearer {token}", "Content-Type: application/json",
             f"Content-Length: {len(body)}", "Connection: close"]  # fmt: skip
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        got = b""
        while chunk := sock.recv(65536):
            got += chunk
    return got


def test_a_host_not_allowed_is_refused_by_the_guard_and_runs_nothing(
    live: tuple[LiveServer, Counting],
) -> None:
    """The shortcut stands in front of the Host guard: a call whose Host is not on the list,
    missing or repeated goes to the guard, which refuses it as before (421, 400) before any
    task starts; the first call with an allowed Host is answered by the shortcut."""
    server, app = live
    run = "/v1/skills/Steps/run"
    body = json.dumps({"params": {"topic": "x", "steps": 1}}).encode()
    here = f"127.0.0.1:{server.port}"
    seq = server.state.log.seq
    for hosts, status in (
        (["evil.example"], b"421"),
        ([], b"400"),
        ([here, "evil.example"], b"400"),
        ([here, here], b"400"),
        (["evil.example:80@x"], b"400"),
    ):
        answer = _raw_post(server.port, run, hosts, server.token, body)
        assert answer.startswith(b"HTTP/1.1 " + status), (hosts, answer[:300])
        assert b"bad-host" in answer
    assert server.state.log.seq == seq  # no task ran, no event came
    assert app.paths == [run] * 5  # each went to the guard
    answer = _raw_post(server.port, run, [here], server.token, body)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:300]
    assert b'"state":"COMPLETED"' in answer
    assert app.paths == [run] * 5


@pytest.mark.parametrize(
    "body",
    [
        b'{"params": {"topic": "x"}}',
        b' {"params" : {"topic": "x", "steps": 2}} \n',
        b"{}",
        b'{"params": {}}',
        b'{"params": {"a": 1}, "params": {"topic": "last"}}',
        b'{"params": {"topic": "\\u4e2d\\u6587", "n": 100000000000000000000000, "f": 1e400}}',
        b'{"params": {"topic": NaN}}',
        b'{"params": {"topic": "\\ud800"}}',
        b'{"params": {"topic": "\xff"}}',
        b'\xef\xbb\xbf{"params": {}}',
        b'{"params": {}} trailing',
        b'{"params": null}',
        b'{"params": []}',
        b"[]",
        b"",
        b'{"context": {"current_file": "posts/a.md"}}',
        b'{"session_id": "s1"}',
        b'{"params": {"topic": "x"}, "session_id": "s1"}',
        b'{"params": {"topic": "x"}, "extra": 1}',
    ],
)
def test_a_body_of_params_only_is_read_as_the_model_reads_it(body: bytes) -> None:
    """The shortcut reads a run's body that holds only its params without building
    ``SkillRunRequest``: whatever it reads so, the model reads the same (same params, no
    context, no session); anything else (another key, a body the model refuses) it leaves
    to the model."""
    from pydantic import ValidationError

    from skillrt.server.fastroutes import _params_only
    from skillrt.server.models import SkillRunRequest

    fast = _params_only(body)
    try:
        model: SkillRunRequest | None = SkillRunRequest.model_validate_json(body)
    except ValidationError:
        model = None
    if fast is None:
        assert model is None or set(json.loads(body.decode("utf-8-sig") or "{}")) - {"params"}
        return
    assert model is not None and repr(model.params) == repr(fast)
    assert not model.context.__pydantic_fields_set__ and model.session_id is None


def _masked(answer: bytes) -> bytes:
    """A response with what differs between two runs of a call (the date, the ids, the
    time, and so the body's length, checked here) replaced by placeholders; every other byte
    as it was."""
    import re

    head, body = answer.split(b"\r\n\r\n", 1)
    assert f"content-length: {len(body)}\r\n".encode() in head
    answer = re.sub(rb"(?im)^(date|content-length): [^\r]*", rb"\1: -", answer)
    answer = re.sub(rb'"(id|task_id)":"[0-9a-f]+"', rb'"\1":"-"', answer)
    return re.sub(rb'"created_at":[0-9.e+-]+', b'"created_at":0', answer)


def test_a_run_the_shortcut_reads_answers_byte_for_byte_as_the_app(
    live: tuple[LiveServer, Counting],
) -> None:
    """The same calls answered by the shortcut (a body of params only, read without the
    model; or with a context and a session, through it) and by the app (a query the shortcut
    leaves to it): the same status line, headers and body, byte for byte but for the date,
    the ids and the time."""
    server, app = live
    here = f"127.0.0.1:{server.port}"
    run = "/v1/skills/Steps/run"
    for body in (
        b'{"params": {"topic": "x", "steps": 1}}',
        b'{"params": {"topic": "x", "steps": 1, "unknown": [1]}}',
        b'{"params": {"topic": "y", "steps": 1}, "session_id": "s9"}',
        b'{"params": {"topic": "z", "steps": 1}, "context": {"current_file": "posts/a.md"}}',
    ):
        before = len(app.paths)
        fast = _raw_post(server.port, run, [here], server.token, body)
        assert len(app.paths) == before  # the shortcut answered
        slow = _raw_post(server.port, f"{run}?other=1", [here], server.token, body)
        assert app.paths[before:] == [run]  # the app answered
        assert fast.startswith(b"HTTP/1.1 200") and b'"state":"COMPLETED"' in fast, fast[:300]
        assert _masked(fast) == _masked(slow), (fast, slow)
