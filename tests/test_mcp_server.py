"""``skillrt mcp`` (stdio) and ``/mcp`` in ``skillrt serve`` (streamable HTTP), driven by the
official SDK's client against real child processes running the writing model of the tests
through ``llm.factory``: tools, progress, refusals, cancellation, MCP tasks across a restart."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

pytest.importorskip("mcp", reason="the MCP SDK is not installed: pip install 'skillrt[mcp]'")

from mcp import ClientSession, types

from skillrt import AgentRuntime, load_config
from skillrt.testing import FunctionModel

from .blog import copy_blog
from .mcp_support import (
    GATE_ENV,
    TOKEN,
    HttpServer,
    experimental,
    http_session,
    stdio_session,
    wait_for,
)
from .writing_support import WritingModelFn

pytestmark = pytest.mark.slow
ARTICLE = "posts/rust-ownership.md"


class Door:
    """One way in: a ``skillrt mcp`` child per connection, or one ``skillrt serve`` child."""

    def __init__(self, kind: str, tmp: Path) -> None:
        self.kind = kind
        self.tmp = tmp
        self.blog = copy_blog(tmp / "blog")
        self.state = tmp / "state"
        self.gate = tmp / "gate"
        self.http: HttpServer | None = None

    def start(self, **extra: str) -> None:
        if self.kind == "http":
            self.http = HttpServer(self.blog, self.state, self.tmp / "serve.log", **extra)

    def stop(self, *, kill: bool = False) -> None:
        if self.http is not None:
            self.http.stop(kill=kill)
            self.http = None

    @asynccontextmanager
    async def connect(self, *, gated: bool = False, **env: str) -> AsyncIterator[ClientSession]:
        """A client session; ``env``: more of the server's environment."""
        extra = {GATE_ENV: str(self.gate)} if gated else {}
        extra.update(env)
        if self.kind == "stdio":
            async with stdio_session(self.blog, self.state, **extra) as session:
                yield session
            return
        if self.http is None:
            self.start(**extra)
        assert self.http is not None
        async with http_session(self.http.mcp_url, TOKEN) as session:
            yield session

    async def history(self) -> list[dict[str, Any]]:
        """The finished tasks, read by a runtime of the test once the server has stopped."""
        config = load_config(content_root=self.blog, state_dir=self.state)
        runtime = AgentRuntime(config, llm=FunctionModel(WritingModelFn()))
        await runtime.initialize()
        try:
            assert runtime.history is not None
            return runtime.history.tasks(limit=20)
        finally:
            await runtime.close()


@pytest.fixture(params=["stdio", "http"])
def door(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Door]:
    found = Door(request.param, tmp_path)
    yield found
    found.stop()


def _leftovers(blog: Path) -> list[str]:
    """Temporary or half-written files in the posts folder."""
    found = (blog / "posts").rglob("*")
    return [p.name for p in found if p.name.startswith(".") or ".tmp" in p.name]


async def test_lists_the_skills_as_tools_and_writes_an_article_with_progress(door: Door) -> None:
    async with door.connect() as session:
        listed = {t.name: t for t in (await session.list_tools()).tools}
        assert {"WriteArticle", "Summarize", "ask", "answer"} <= set(listed)
        write = listed["WriteArticle"]
        assert write.description
        assert "topic" in write.inputSchema["properties"]
        assert write.inputSchema["required"] == ["topic"]
        # An editor's agent fills the params from these: each built-in skill says what each is.
        for tool in listed.values():
            for name, spec in tool.inputSchema["properties"].items():
                assert spec.get("description"), (tool.name, name)

        seen: list[tuple[float, float | None, str | None]] = []

        async def progress(value: float, total: float | None, message: str | None) -> None:
            seen.append((value, total, message))

        result = await session.call_tool(
            "WriteArticle", {"topic": "Rust ownership"}, progress_callback=progress
        )
    assert not result.isError, result.content
    assert isinstance(result.content[0], types.TextContent)
    assert ARTICLE in result.content[0].text
    data = result.structuredContent
    assert data is not None
    assert data["path"] == ARTICLE and data["outcome"] == "done" and data["state"] == "COMPLETED"
    assert data["task_id"]
    saved = (door.blog / ARTICLE).read_text(encoding="utf-8")
    assert "Understanding Rust Ownership" in saved
    values = [v for v, _, _ in seen]
    assert values == sorted(values) and len(set(values)) == len(values)  # strictly rising
    messages = [m or "" for _, _, m in seen]
    assert "Drafting the outline" in messages  # task:progress
    assert any("ownership" in m for m in messages)  # streamed text of a section


async def test_routing_is_built_before_the_first_request(door: Door) -> None:
    """Both doors build routing's tables (``warm_up``: every kind of text of its samples) in a
    thread once the runtime is open, before the editor asks anything: its first request does
    not wait for them. Without it, the first request builds only its own kind of text."""
    log = door.tmp / "skillrt.log"
    async with door.connect(SKILLRT_LOG_LEVEL="debug", SKILLRT_LOG_FILE=str(log)) as session:
        with anyio.fail_after(60):
            while not (ready := _logged(log, "agent.routing.ready")):
                await anyio.sleep(0.05)
        assert (await session.list_tools()).tools  # no request routed: only the tools listed
    assert ready[0]["samples"] > 1  # warm_up's samples, not a first input's one
    assert not _logged(log, "agent.input.received")


def _logged(log: Path, event: str) -> list[dict[str, Any]]:
    """The log file's JSON lines (the runtime's; other libraries' are plain text) of
    ``event``."""
    if not log.exists():
        return []
    lines = [line for line in log.read_text(encoding="utf-8").splitlines() if line[:1] == "{"]
    return [e for e in map(json.loads, lines) if e.get("event") == event]


async def test_bad_params_are_an_error_result_and_the_server_goes_on(door: Door) -> None:
    async with door.connect() as session:
        refused = await session.call_tool("WriteArticle", {"tone": "dry"})
        assert refused.isError
        assert isinstance(refused.content[0], types.TextContent)
        assert "params.topic: Field required" in refused.content[0].text
        unknown = await session.call_tool("NoSuchSkill", {})
        assert unknown.isError
        assert "no tool 'NoSuchSkill'" in unknown.content[0].text  # type: ignore[union-attr]
        empty = await session.call_tool("ask", {"text": "   "})
        assert empty.isError
        assert len((await session.list_tools()).tools) > 3  # still serving
    assert not (door.blog / ARTICLE).exists()


async def test_a_cancelled_request_cancels_the_task_and_writes_nothing(door: Door) -> None:
    reached = Path(str(door.gate) + ".reached")
    async with door.connect(gated=True) as session:
        request_id = session._request_id  # the id the next request gets
        outcome: dict[str, Any] = {}

        async def call() -> None:
            try:
                outcome["result"] = await session.call_tool(
                    "WriteArticle", {"topic": "Rust ownership"}
                )
            except Exception as exc:  # the server answers a cancelled request with an error
                outcome["error"] = exc

        async with anyio.create_task_group() as group:
            group.start_soon(call)
            await wait_for(reached)  # in the middle of section 2
            await session.send_notification(
                types.ClientNotification(
                    types.CancelledNotification(
                        params=types.CancelledNotificationParams(
                            requestId=request_id, reason="user pressed stop"
                        )
                    )
                )
            )
            with anyio.fail_after(30):
                while "result" not in outcome and "error" not in outcome:
                    await anyio.sleep(0.02)
            group.cancel_scope.cancel()
        assert "result" not in outcome or outcome["result"].isError
        # The server still serves this session.
        assert (await session.list_tools()).tools
    door.stop()
    entries = await door.history()
    writes = [e for e in entries if e.get("skill") == "WriteArticle"]
    assert [e["state"] for e in writes] == ["CANCELLED"], entries
    assert not (door.blog / ARTICLE).exists()
    assert _leftovers(door.blog) == []


async def test_an_mcp_task_is_fetched_after_the_server_restarted(door: Door) -> None:
    reached = Path(str(door.gate) + ".reached")
    async with door.connect(gated=True) as session:
        tasks = experimental(session)
        created = await tasks.call_tool_as_task("WriteArticle", {"topic": "Rust ownership"})
        task_id = created.task.taskId
        assert created.task.status == "working"
        await wait_for(reached)  # the outline is journalled, section 2 is being written
        status = await tasks.get_task(task_id)
        assert status.status == "working"
        if door.kind == "http":
            door.stop(kill=True)  # the server dies with the task half done
    door.gate.write_text("open", encoding="utf-8")  # the new server's model does not wait
    assert not (door.blog / ARTICLE).exists()
    async with door.connect() as session:  # a new server, and a new client session
        tasks = experimental(session)
        with anyio.fail_after(60):
            result = await tasks.get_task_result(task_id, types.CallToolResult)
            status = await tasks.get_task(task_id)
    assert status.status == "completed"
    assert not result.isError
    assert result.structuredContent is not None
    assert result.structuredContent["path"] == ARTICLE
    assert "Understanding Rust Ownership" in (door.blog / ARTICLE).read_text(encoding="utf-8")


def _kill_stdio_servers() -> None:
    """``kill -9`` of the ``skillrt mcp`` children of this process (the stdio servers)."""
    import os
    import signal

    for proc in Path("/proc").iterdir():
        try:
            parent = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (proc / "cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue
        if parent == os.getpid() and b"skillrt" in command and b"mcp" in command:
            os.kill(int(proc.name), signal.SIGKILL)


async def test_a_plain_call_cut_off_by_a_dead_server_is_resumed_as_an_mcp_task(
    door: Door,
) -> None:
    """A ``tools/call`` made without ``task``, its server killed in the middle: the task was
    resumable (``skillrt resume`` resumed it) but the editor, given no task id, could neither
    see nor resume it. The next server lists it (``tasks/list``) and resumes it as an MCP
    task: ``tasks/result`` is the article, the outline not asked again."""
    reached = Path(str(door.gate) + ".reached")
    outcome: dict[str, Any] = {}
    with pytest.raises(BaseException):  # noqa: B017 - the connection dies with the server
        async with door.connect(gated=True) as session:

            async def call() -> None:
                try:
                    outcome["result"] = await session.call_tool(
                        "WriteArticle", {"topic": "Rust ownership"}
                    )
                except Exception as exc:
                    outcome["error"] = exc

            async with anyio.create_task_group() as group:
                group.start_soon(call)
                await wait_for(reached)  # the outline is journalled, section 2 is being written
                if door.kind == "http":
                    door.stop(kill=True)
                else:
                    _kill_stdio_servers()
                with anyio.fail_after(30):
                    while not outcome:
                        await anyio.sleep(0.05)
                raise RuntimeError("the server died")
    assert "result" not in outcome
    door.gate.write_text("open", encoding="utf-8")
    assert not (door.blog / ARTICLE).exists()
    async with door.connect() as session:
        tasks = experimental(session)
        listed = (await tasks.list_tasks()).tasks
        assert [t.status for t in listed] == ["working"], listed
        task_id = listed[0].taskId
        with anyio.fail_after(60):
            result = await tasks.get_task_result(task_id, types.CallToolResult)
            status = await tasks.get_task(task_id)
    assert status.status == "completed" and not result.isError, result
    assert result.structuredContent is not None
    assert result.structuredContent["path"] == ARTICLE
    assert "Understanding Rust Ownership" in (door.blog / ARTICLE).read_text(encoding="utf-8")


async def test_the_mcp_endpoint_wants_the_token(door: Door) -> None:
    if door.kind != "http":
        pytest.skip("the token guards HTTP only")
    door.start()
    assert door.http is not None
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream"}
    async with httpx.AsyncClient() as http:
        bare = await http.post(door.http.mcp_url, json=body, headers=headers)
        assert bare.status_code == 401
        wrong = await http.post(
            door.http.mcp_url, json=body, headers={**headers, "Authorization": "Bearer nope"}
        )
        assert wrong.status_code == 401
        evil = await http.post(
            door.http.mcp_url,
            json=body,
            headers={**headers, "Authorization": f"Bearer {TOKEN}", "Host": "evil.example"},
        )
        assert evil.status_code == 421
    await asyncio.sleep(0)
