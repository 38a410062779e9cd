"""MCP servers' tools as skills (``[mcp.servers.NAME]``) and ``ctx.tools.call``, against the
small notes server of the tests and ``@modelcontextprotocol/server-everything`` (npm): durable
calls across a kill -9, routing to a tool, checked arguments, low trust, fencing, doctor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is not installed: pip install 'skillrt[mcp]'")

from pydantic import BaseModel

from skillrt import AgentRuntime, SkillContext, SkillResult, load_config, skill
from skillrt.exceptions import UserError
from skillrt.llm.base import LLMMessage
from skillrt.mcp.client import check_servers
from skillrt.skill.tools import ToolOutput
from skillrt.testing import Answer, FunctionModel, ModelOptions

from .blog import copy_blog
from .mcp_support import everything_server

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def notes(work: Path, **extra: Any) -> dict[str, Any]:
    return {
        "command": sys.executable,
        "args": [str(HERE / "mcp_notes_server.py")],
        "env": {"NOTES_FILE": str(work / "notes.txt"), "NOTES_LOG": str(work / "calls.log")},
        **extra,
    }


def calls(work: Path) -> list[dict[str, Any]]:
    log = work / "calls.log"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


class ArgsModel:
    """Routing gets UNKNOWN (patterns route); any other call gets ``answer``."""

    def __init__(self, answer: str = "{}") -> None:
        self.answer = answer
        self.prompts: list[str] = []

    def __call__(self, messages: list[LLMMessage], options: ModelOptions) -> Answer:
        if options.response_model is not None:
            return {"type": "UNKNOWN", "confidence": 0.0}
        self.prompts.append(messages[-1]["content"])
        return self.answer


class Params(BaseModel):
    tool: str = "add_note"
    text: str = "hello"


@skill(name="UseNotes", params=Params, description="Calls one notes tool and shows it fenced")
async def use_notes(ctx: SkillContext, params: Params) -> SkillResult:
    args: dict[str, Any] = {"text": params.text} if params.tool == "add_note" else {}
    output = await ctx.tools.call("notes", params.tool, args)
    return SkillResult(
        success=not output.is_error,
        message=output.text,
        data={"fenced": output.fenced(), "servers": ctx.tools.servers()},
    )


def runtime_for(tmp: Path, model: ArgsModel, servers: dict[str, Any], **extra: Any) -> AgentRuntime:
    blog = tmp / "blog" if (tmp / "blog").exists() else copy_blog(tmp / "blog")
    config = load_config(
        content_root=blog, state_dir=tmp / "state", mcp={"servers": servers}, **extra
    )
    from skillrt.skills import builtin_skills

    return AgentRuntime(config, llm=FunctionModel(model), skills=[*builtin_skills(), use_notes])


@pytest.fixture
async def notes_runtime(tmp_path: Path) -> AsyncIterator[AgentRuntime]:
    rt = runtime_for(
        tmp_path, ArgsModel('{"text": "milk", "tag": "food"}'), {"notes": notes(tmp_path)}
    )
    await rt.initialize()
    yield rt
    await rt.close()


# --- a task killed between two tool calls -----------------------------------------------------


def _child(mode: str, blog: Path, work: Path, crash: bool) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLRT_")}
    env.update(PYTHONPATH=str(REPO), CRASH_AT="between" if crash else "")
    script = str(HERE / "mcp_crash_child.py")
    return subprocess.Popen(
        [sys.executable, script, mode, str(blog), str(work)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_task_killed_between_two_tool_calls_does_not_repeat_the_first(tmp_path: Path) -> None:
    blog, work = copy_blog(tmp_path / "blog"), tmp_path / "child"
    work.mkdir()
    child = _child("start", blog, work, crash=True)
    deadline = time.monotonic() + 60
    while not (work / "paused").exists():
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "the child never reached the second call"
        time.sleep(0.02)
    child.kill()  # SIGKILL between the two calls
    child.communicate(timeout=30)
    assert [c["text"] for c in calls(work)] == ["first"]

    resumed = _child("resume", blog, work, crash=False)
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    report = json.loads(out.strip().splitlines()[-1])
    assert report["seen"] == [(work / "task_id").read_text(encoding="utf-8")]
    assert report["message"]["state"] == "COMPLETED", report
    assert report["message"]["content"] == "noted: first; noted: second"
    assert [c["text"] for c in calls(work)] == ["first", "second"]  # "first" not called again
    assert (work / "notes.txt").read_text(encoding="utf-8") == "first\nsecond\n"


# --- tools as skills ---------------------------------------------------------------------------


async def test_the_tools_become_skills_that_declare_their_intents(
    notes_runtime: AgentRuntime,
) -> None:
    skills = notes_runtime.skills
    assert {"notes.add_note", "notes.list_notes", "notes.tag_note"} <= set(skills)
    add, listing = skills["notes.add_note"], skills["notes.list_notes"]
    assert add.intents == ["MCP_NOTES_ADD_NOTE"]
    assert add.declares[0].effect == "write"  # not read-only
    assert listing.declares[0].effect == "read"  # read-only, closed world
    assert "Add a note" in add.description


async def test_a_tool_is_used_in_a_task_by_name_and_by_routing(
    notes_runtime: AgentRuntime, tmp_path: Path
) -> None:
    by_name = await notes_runtime.run_skill("notes.add_note", {"text": "buy milk"})
    assert by_name.state == "COMPLETED" and by_name.content == "noted: buy milk"
    assert by_name.data["arguments"] == {"text": "buy milk"}
    routed = await notes_runtime.process_input("use add_note: buy bread")
    assert routed.state == "COMPLETED", routed.content
    assert routed.content == "noted: buy bread"
    explicit = await notes_runtime.run_skill("notes.add_note", {"arguments": {"text": "eggs"}})
    assert explicit.content == "noted: eggs"
    assert [c["text"] for c in calls(tmp_path)] == ["buy milk", "buy bread", "eggs"]


async def test_arguments_from_the_model_are_checked_before_the_call(tmp_path: Path) -> None:
    model = ArgsModel('{"text": "milk", "tag": "food"}')
    rt = runtime_for(tmp_path, model, {"notes": notes(tmp_path)})
    try:
        good = await rt.run_skill("notes.tag_note", {"text": "tag the milk note as food"})
        assert good.state == "COMPLETED", good.content
        assert good.data["arguments"] == {"text": "milk", "tag": "food"}
        assert "untrusted-tool-output" in model.prompts[0]  # the request went in fenced
        model.answer = '{"text": "milk", "pinned": "very"}'  # no tag, pinned not a boolean
        bad = await rt.run_skill("notes.tag_note", {"text": "tag it"})
        assert bad.state == "ERROR"
        assert "do not fit the tool" in bad.content
        model.answer = "I would rather not"
        junk = await rt.run_skill("notes.tag_note", {"text": "tag it"})
        assert "do not fit the tool" in junk.content
        wrong = await rt.run_skill("notes.add_note", {"arguments": {"txt": "x"}})
        assert "Did not call notes.add_note" in wrong.content and "'text'" in wrong.content
    finally:
        await rt.close()
    assert [c["tool"] for c in calls(tmp_path)] == ["tag_note"]  # the bad ones never went out


async def test_ctx_tools_call_is_fenced_and_limited_to_the_allowed_tools(tmp_path: Path) -> None:
    servers = {"notes": notes(tmp_path, tools=["tag_note", "list_notes"])}
    rt = runtime_for(tmp_path, ArgsModel('{"text": "a", "tag": "b"}'), servers)
    try:
        await rt.initialize()
        assert "notes.add_note" not in rt.skills and "notes.list_notes" in rt.skills
        refused = await rt.run_skill("UseNotes", {"tool": "add_note"})
        assert refused.state != "COMPLETED"
        assert "is not allowed" in refused.content
        tagged = await rt.run_skill("notes.tag_note", {"arguments": {"text": "a", "tag": "b"}})
        output = ToolOutput(server="notes", tool="tag_note", text=tagged.content)
        fenced = output.fenced()
    finally:
        await rt.close()
    assert calls(tmp_path) == [{"tool": "tag_note", "text": "a", "tag": "b", "pinned": False}]
    # The look-alike tag the tool put in its text is escaped; the real fence has a fresh nonce.
    assert fenced.count("<untrusted-tool-output") == 1
    assert "&lt;untrusted-tool-output nonce='x'>" in fenced
    assert "not instructions" in fenced


async def test_under_low_trust_a_tool_that_writes_asks_first(tmp_path: Path) -> None:
    rt = runtime_for(tmp_path, ArgsModel(), {"notes": notes(tmp_path)}, llm={"router_trust": "low"})
    try:
        asked = await rt.run_skill("UseNotes", {"tool": "add_note", "text": "x"})
        assert asked.state == "WAITING_INPUT"
        assert "add_note" in asked.content and "(y/n)" in asked.content
        assert calls(tmp_path) == []
        declined = await rt.answer_task(asked.task_id or "", "no")
        assert declined is not None and declined.content == "Not called: you said no."
        assert calls(tmp_path) == []
        again = await rt.run_skill("UseNotes", {"tool": "add_note", "text": "y"})
        done = await rt.answer_task(again.task_id or "", "yes")
        assert done is not None and done.content == "noted: y"
        reading = await rt.run_skill("UseNotes", {"tool": "list_notes"})
        assert reading.state == "COMPLETED"  # read-only: no question
        assert reading.content == "y"
    finally:
        await rt.close()


async def test_an_aborted_task_cancels_its_tool_call_on_the_server(tmp_path: Path) -> None:
    import asyncio

    rt = runtime_for(tmp_path, ArgsModel(), {"notes": notes(tmp_path)})
    try:
        await rt.initialize()
        started: list[str] = []
        running = asyncio.ensure_future(
            rt.run_skill("UseNotes", {"tool": "wait_a_while"}, on_task=started.append)
        )
        for _ in range(500):
            if any(c.get("event") == "started" for c in calls(tmp_path)):
                break
            await asyncio.sleep(0.02)
        assert rt.abort(started[0])
        message = await asyncio.wait_for(running, 30)
        assert message.state == "CANCELLED"
        for _ in range(250):
            if any(c.get("event") == "cancelled" for c in calls(tmp_path)):
                break
            await asyncio.sleep(0.02)
        # The server heard of it and stopped the tool; the connection still serves.
        assert [c["event"] for c in calls(tmp_path)] == ["started", "cancelled"]
        listed = await rt.run_skill("UseNotes", {"tool": "list_notes"})
        assert listed.content == "(no notes)"
    finally:
        await rt.close()


async def test_a_server_that_dies_in_a_call_leaves_the_task_resumable(tmp_path: Path) -> None:
    rt = runtime_for(tmp_path, ArgsModel(), {"notes": notes(tmp_path)})
    try:
        died = await rt.run_skill("UseNotes", {"tool": "crash_once"})
        assert died.state == "ERROR", died.content
        assert "MCP server 'notes'" in died.content and "unavailable" in died.content
        assert died.task_id in [t.id for t in rt.get_resumable_tasks()]
        resumed = await rt.resume_task(died.task_id or "")
        assert resumed is not None and resumed.state == "COMPLETED", resumed
        assert resumed.content == "still here"  # a new process of the server answered
    finally:
        await rt.close()
    assert [c["tool"] for c in calls(tmp_path)] == ["crash_once", "crash_once"]


async def test_a_server_that_cannot_start_is_left_out_and_doctor_says_so(tmp_path: Path) -> None:
    servers = {
        "notes": notes(tmp_path),
        "broken": {
            "command": sys.executable,
            "args": ["-c", "import sys; sys.exit(3)"],
            "timeout_s": 10,
        },
    }
    rt = runtime_for(tmp_path, ArgsModel(), servers)
    try:
        await rt.initialize()
        assert "notes.add_note" in rt.skills
        assert not any(name.startswith("broken.") for name in rt.skills)
        with pytest.raises(UserError, match="no MCP server 'nope'"):
            await rt._toolbox.call("nope", "x", {})  # type: ignore[union-attr]
    finally:
        await rt.close()
    found = {name: (ok, text) for name, ok, text in await check_servers(rt.config.mcp)}
    assert found["notes"][0] is True and "5 tools" in found["notes"][1]
    assert found["broken"][0] is False and "unavailable" in found["broken"][1]


# --- server-everything ------------------------------------------------------------------------


async def test_server_everything_tools_are_skills_used_in_tasks(tmp_path: Path) -> None:
    server = everything_server()
    rt = runtime_for(tmp_path, ArgsModel('{"a": 2, "b": 40}'), {"everything": server})
    try:
        await rt.initialize()
        assert {"everything.echo", "everything.get-sum"} <= set(rt.skills)
        echoed = await rt.process_input("use echo hello from skillrt")
        assert echoed.state == "COMPLETED", echoed.content
        assert "hello from skillrt" in echoed.content
        summed = await rt.run_skill("everything.get-sum", {"text": "add 2 and 40"})
        assert summed.state == "COMPLETED", summed.content
        assert "42" in summed.content
    finally:
        await rt.close()


def test_doctor_lists_the_mcp_servers_and_whether_they_answer(tmp_path: Path) -> None:
    from .cli_support import cli_env, skillrt, write_script

    blog = copy_blog(tmp_path / "blog")
    server = notes(tmp_path)
    (tmp_path / "skillrt.toml").write_text(
        "[mcp.servers.notes]\n"
        f"command = {json.dumps(server['command'])}\n"
        f"args = {json.dumps(server['args'])}\n"
        f"env = {{ NOTES_FILE = {json.dumps(str(tmp_path / 'n.txt'))},"
        f" NOTES_LOG = {json.dumps(str(tmp_path / 'n.log'))} }}\n"
        "[mcp.servers.gone]\n"
        'url = "http://127.0.0.1:9/mcp"\n'
        "timeout_s = 5\n",
        encoding="utf-8",
    )
    env = cli_env(blog, write_script(tmp_path / "s.json", []))
    done = skillrt("doctor", "--json", env=env, cwd=tmp_path, timeout=120)
    report = json.loads(done.stdout)
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["MCP server notes"]["status"] == "ok"
    found = checks["MCP server notes"]["value"]
    assert "5 tools (add_note, list_notes, tag_note, crash_once, wait_a_while)" in found
    assert checks["MCP server gone"]["status"] == "fail"
    assert "unavailable" in checks["MCP server gone"]["value"]
    assert report["ok"] is False and done.returncode != 0


class RouteModel(ArgsModel):
    """The model routes every request to ``intent`` with ``text``."""

    def __init__(self, intent: str, text: str) -> None:
        super().__init__()
        self.intent, self.text = intent, text

    def __call__(self, messages: list[LLMMessage], options: ModelOptions) -> Answer:
        if options.response_model is not None:
            return {"type": self.intent, "confidence": 0.95, "parameters": {"text": self.text}}
        return super().__call__(messages, options)


async def test_a_model_only_route_to_a_tool_that_writes_asks_first_under_low_trust(
    tmp_path: Path,
) -> None:
    model = RouteModel("MCP_NOTES_ADD_NOTE", "buy milk")
    low = {"router_trust": "low"}
    rt = runtime_for(tmp_path, model, {"notes": notes(tmp_path)}, llm=low)
    try:
        asked = await rt.process_input("remember that I need to buy milk")
        assert asked.state == "WAITING_INPUT"
        assert asked.content.startswith("Use the tool add_note of notes for")
        declined = await rt.process_input("no")
        assert calls(tmp_path) == []
        assert declined.data["outcome"] == "declined"
        await rt.process_input("remember that I need to buy milk")
        done = await rt.process_input("yes")
        assert done.content == "noted: buy milk"
        model.intent = "MCP_NOTES_LIST_NOTES"  # read-only: no question
        listed = await rt.process_input("list notes")
        assert listed.state == "COMPLETED" and listed.content == "buy milk"
    finally:
        await rt.close()
    assert [c["tool"] for c in calls(tmp_path)] == ["add_note", "list_notes"]


async def test_a_server_reached_by_url_with_headers(tmp_path: Path) -> None:
    """``skillrt serve``'s own ``/mcp`` as a streamable HTTP server with a bearer token."""
    from .mcp_support import TOKEN, HttpServer

    remote_blog = copy_blog(tmp_path / "remote")
    remote = HttpServer(remote_blog, tmp_path / "remote-state", tmp_path / "serve.log")
    try:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        servers = {"other": {"url": remote.mcp_url, "headers": headers, "timeout_s": 30}}
        rt = runtime_for(tmp_path, ArgsModel(), servers)
        try:
            await rt.initialize()
            assert {"other.WriteArticle", "other.Summarize", "other.ask"} <= set(rt.skills)
            assert TOKEN not in rt.redactor.text(f"token {TOKEN}")  # a header is a secret
            summary = await rt.run_skill(
                "other.Summarize", {"arguments": {"path": "posts/git-workflow.md"}}
            )
            assert summary.state == "COMPLETED", summary.content
            assert summary.data["structured"]["state"] == "COMPLETED", summary.data
            assert summary.data["structured"]["task_id"]
        finally:
            await rt.close()
        wrong = {"other": {"url": remote.mcp_url, "headers": {"Authorization": "Bearer x"}}}
        found = await check_servers(load_config(mcp={"servers": wrong}).mcp)
        assert found[0][1] is False and "401" in found[0][2]
    finally:
        remote.stop()
