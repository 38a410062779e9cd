"""The MCP server in process, through the official SDK's client on its in-memory transport:
questions by elicitation or through the ``answer`` tool, ``tasks/cancel``, resources, prompts."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is not installed: pip install 'skillrt[mcp]'")

from mcp import ClientSession, types
from mcp.shared.exceptions import McpError
from mcp.shared.memory import create_connected_server_and_client_session

from skillrt import AgentRuntime
from skillrt.llm.base import LLMMessage
from skillrt.mcp.server import build_server
from skillrt.testing import Answer, FunctionModel, ModelOptions

from .mcp_support import experimental
from .server_support import StepModel, make_runtime


class HeldModel(StepModel):
    """``StepModel`` whose step 2 waits until ``release`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.reached = asyncio.Event()
        self.release = asyncio.Event()

    async def __call__(self, messages: list[LLMMessage], options: ModelOptions) -> Answer:  # type: ignore[override]
        answer = super().__call__(messages, options)
        if "step 2" in messages[-1]["content"]:
            self.reached.set()
            await self.release.wait()
        return answer


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[AgentRuntime]:
    model = HeldModel()
    rt = make_runtime(tmp_path, FunctionModel(model))
    rt.model = model  # type: ignore[attr-defined]
    await rt.initialize()
    yield rt
    model.release.set()
    await rt.close()


@asynccontextmanager
async def connect(runtime: AgentRuntime, **kwargs: Any) -> AsyncIterator[ClientSession]:
    server = build_server(runtime)
    async with create_connected_server_and_client_session(server.server, **kwargs) as session:
        yield session


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def test_a_question_goes_to_the_client_by_elicitation(runtime: AgentRuntime) -> None:
    asked: list[str] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"answer": "blue"})

    async with connect(runtime, elicitation_callback=elicit) as session:
        result = await session.call_tool("Ask", {"question": "Which colour?"})
    assert asked == ["Which colour?"]
    assert not result.isError
    assert _text(result) == "you said blue"
    assert result.structuredContent is not None
    assert result.structuredContent["answer"] == "blue"


async def test_a_reply_echoing_a_secret_is_redacted_as_the_http_api_redacts_it(
    runtime: AgentRuntime,
) -> None:
    secret = "tok-0123456789abcdef"
    runtime.redactor.add(secret)  # as ``skillrt serve`` adds its bearer token

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"answer": secret})

    async with connect(runtime, elicitation_callback=elicit) as session:
        result = await session.call_tool("Ask", {"question": "Which token?"})
    assert not result.isError
    assert _text(result) == "you said ***"
    assert result.structuredContent is not None
    assert result.structuredContent["answer"] == "***"
    assert secret not in result.model_dump_json()


async def test_a_declined_question_cancels_the_task(runtime: AgentRuntime) -> None:
    async def decline(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    async with connect(runtime, elicitation_callback=decline) as session:
        result = await session.call_tool("Ask", {})
    assert result.isError
    assert result.structuredContent is not None
    task_id = result.structuredContent["task_id"]
    assert result.structuredContent["state"] == "CANCELLED"
    for _ in range(100):
        if runtime.get_task(task_id) is None:
            break
        await asyncio.sleep(0.02)
    assert runtime.get_task(task_id) is None  # ended, not waiting


async def test_without_elicitation_the_question_is_returned_and_answered(
    runtime: AgentRuntime,
) -> None:
    async with connect(runtime) as session:
        asked = await session.call_tool("Ask", {"question": "Which colour?"})
        assert not asked.isError
        assert _text(asked) == "Which colour?"
        data = asked.structuredContent
        assert data is not None and data["state"] == "WAITING_INPUT"
        answered = await session.call_tool("answer", {"task_id": data["task_id"], "text": "red"})
        assert _text(answered) == "you said red"
        again = await session.call_tool("answer", {"task_id": data["task_id"], "text": "green"})
    assert again.isError
    assert "is not waiting for an answer" in _text(again)


async def test_tasks_cancel_stops_the_task(runtime: AgentRuntime) -> None:
    model: HeldModel = runtime.model  # type: ignore[attr-defined]
    async with connect(runtime) as session:
        tasks = experimental(session)
        created = await tasks.call_tool_as_task("Steps", {"topic": "frogs"})
        task_id = created.task.taskId
        await asyncio.wait_for(model.reached.wait(), 10)
        assert (await tasks.get_task(task_id)).status == "working"
        cancelled = await tasks.cancel_task(task_id)
        assert cancelled.status == "cancelled"
        result = await tasks.get_task_result(task_id, types.CallToolResult)
        assert result.isError
        listed = await tasks.list_tasks()
        with pytest.raises(McpError):
            await tasks.cancel_task(task_id)  # over already
        with pytest.raises(McpError, match="Task not found"):
            await tasks.get_task("no-such-task")
    assert [t.taskId for t in listed.tasks] == [task_id]
    assert runtime.get_task(task_id) is None
    assert model.calls == ["step 1 of frogs", "step 2 of frogs"]  # step 3 never ran


async def test_posts_are_resources_and_prompts_ask_for_the_work(
    runtime: AgentRuntime, tmp_path: Path
) -> None:
    async with connect(runtime) as session:
        listed = (await session.list_resources()).resources
        by_uri = {str(r.uri): r for r in listed}
        post = by_uri["post://posts/git-workflow.md"]
        assert post.title == "A Practical Git Branching Workflow"
        assert post.mimeType == "text/markdown"
        read = await session.read_resource(post.uri)
        with pytest.raises(McpError, match="no post"):
            await session.read_resource("post://posts/../../etc/passwd")  # type: ignore[arg-type]
        prompts = {p.name for p in (await session.list_prompts()).prompts}
        written = await session.get_prompt("write", {"topic": "tide pools"})
        with pytest.raises(McpError, match="needs: path"):
            await session.get_prompt("summarise", {})
    content = read.contents[0]
    assert isinstance(content, types.TextResourceContents)
    assert content.mimeType == "text/markdown"
    on_disk = (tmp_path / "blog" / "posts" / "git-workflow.md").read_text(encoding="utf-8")
    assert content.text == on_disk
    assert prompts == {"write", "summarise", "translate"}
    message = written.messages[0].content
    assert isinstance(message, types.TextContent)
    assert "write an article about tide pools" in message.text


async def test_tools_say_what_they_do_and_that_they_run_as_tasks(runtime: AgentRuntime) -> None:
    async with connect(runtime) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
    assert all(t.execution and t.execution.taskSupport == "optional" for t in tools.values())
    write, summary, delete = tools["WriteArticle"], tools["Summarize"], tools["DeleteArticle"]
    assert write.annotations is not None and write.annotations.readOnlyHint is False
    assert summary.annotations is not None and summary.annotations.readOnlyHint is True
    assert delete.annotations is not None and delete.annotations.destructiveHint is True
    research = tools["ResearchWeb"].annotations
    assert research is not None and research.openWorldHint is True


async def test_ended_mcp_tasks_are_forgotten_after_their_ttl(runtime: AgentRuntime) -> None:
    model: HeldModel = runtime.model  # type: ignore[attr-defined]
    model.release.set()
    async with connect(runtime) as session:
        tasks = experimental(session)
        created = await tasks.call_tool_as_task("Steps", {"topic": "newts"}, ttl=1000)
        task_id = created.task.taskId
        result = await tasks.get_task_result(task_id, types.CallToolResult)
        assert not result.isError
        book = build_server(runtime).book  # a second server over the same state
        assert (await book.get(task_id)).status == "completed"
        assert book.prune() == 0  # within its ttl
        assert book.prune(now=time.time() + 5) == 1
        with pytest.raises(McpError, match="Task not found"):
            await tasks.get_task(task_id)


async def test_an_mcp_task_asked_with_no_ttl_is_read_by_the_sdks_client(
    runtime: AgentRuntime,
) -> None:
    """``task: {}`` (the ttl is the client's to give, or not): the record's ttl was null, the
    SDK sent no ``ttl`` at all, and its own client refused the reply ("task.ttl Field
    required"), the CreateTaskResult and every tasks/get and tasks/list after it."""
    model: HeldModel = runtime.model  # type: ignore[attr-defined]
    model.release.set()
    async with connect(runtime) as session:
        request = types.ClientRequest(
            types.CallToolRequest(
                params=types.CallToolRequestParams(
                    name="Steps", arguments={"topic": "frogs"}, task=types.TaskMetadata()
                )
            )
        )
        created = await session.send_request(request, types.CreateTaskResult)
        assert isinstance(created.task.ttl, int) and created.task.ttl > 0
        tasks = experimental(session)
        result = await tasks.get_task_result(created.task.taskId, types.CallToolResult)
        assert not result.isError
        assert (await tasks.get_task(created.task.taskId)).ttl == created.task.ttl
        listed = (await tasks.list_tasks()).tasks
        assert [t.taskId for t in listed] == [created.task.taskId]


async def test_an_mcp_task_reports_progress_when_asked(runtime: AgentRuntime) -> None:
    model: HeldModel = runtime.model  # type: ignore[attr-defined]
    model.release.set()
    seen: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification) and isinstance(
            message.root, types.ProgressNotification
        ):
            seen.append(message.root.params.message or "")

    async with connect(runtime, message_handler=on_message) as session:
        request = types.ClientRequest(
            types.CallToolRequest(
                params=types.CallToolRequestParams(
                    name="Steps",
                    arguments={"topic": "toads"},
                    task=types.TaskMetadata(ttl=60000),
                    _meta=types.RequestParams.Meta(progressToken="p1"),  # type: ignore[call-arg]
                )
            )
        )
        created = await session.send_request(request, types.CreateTaskResult)
        result = await experimental(session).get_task_result(
            created.task.taskId, types.CallToolResult
        )
        await asyncio.sleep(0.1)  # the last notifications
    assert not result.isError
    assert "step 1" in seen and "step 3" in seen


async def test_a_call_cancelled_while_its_question_is_out_cancels_the_task(
    runtime: AgentRuntime, tmp_path: Path
) -> None:
    """The client cancels the call while the confirmation is out as an elicitation: the task
    ends CANCELLED, and the session's next "yes" is no answer to it (the post stays)."""
    post = tmp_path / "blog" / "posts" / "git-workflow.md"
    asked = asyncio.Event()
    release = asyncio.Event()

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.set()
        await release.wait()  # the user has not answered yet when the call is cancelled
        return types.ElicitResult(action="accept", content={"answer": "yes"})

    async with connect(runtime, elicitation_callback=elicit) as session:
        request_id = session._request_id  # the id the next request gets
        call = asyncio.ensure_future(
            session.call_tool("ask", {"text": "delete posts/git-workflow.md"})
        )
        await asyncio.wait_for(asked.wait(), 10)
        [waiting] = [t for t in runtime.list_tasks() if t.state == "WAITING_INPUT"]
        await session.send_notification(
            types.ClientNotification(
                types.CancelledNotification(
                    params=types.CancelledNotificationParams(requestId=request_id, reason="stop")
                )
            )
        )
        for _ in range(250):
            if runtime.get_task(waiting.id) is None:
                break
            await asyncio.sleep(0.02)
        release.set()  # (the client reads the call's answer once its callback returns)
        with pytest.raises(McpError):
            await asyncio.wait_for(call, 10)
        later = await session.call_tool("ask", {"text": "yes"})
    assert runtime.get_task(waiting.id) is None  # ended, not waiting
    assert runtime.history is not None
    [entry] = [e for e in runtime.history.tasks(limit=20) if e["task_id"] == waiting.id]
    assert entry["state"] == "CANCELLED"
    assert (later.structuredContent or {}).get("task_id") != waiting.id
    assert post.exists()


async def test_tasks_cancel_while_the_question_is_out_does_not_wait_for_the_client(
    runtime: AgentRuntime, tmp_path: Path
) -> None:
    """``tasks/cancel`` of a task whose confirmation is out as an elicitation: the call
    waited on the client's answer up to 30 s, and an answer given later recorded the task
    "failed" over "cancelled"."""
    post = tmp_path / "blog" / "posts" / "git-workflow.md"
    asked = asyncio.Event()
    release = asyncio.Event()

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.set()
        await release.wait()  # the user answers only after the cancel
        return types.ElicitResult(action="accept", content={"answer": "yes"})

    async with connect(runtime, elicitation_callback=elicit) as session:
        tasks = experimental(session)
        created = await tasks.call_tool_as_task("ask", {"text": "delete posts/git-workflow.md"})
        task_id = created.task.taskId
        await asyncio.wait_for(asked.wait(), 10)
        cancel = asyncio.ensure_future(tasks.cancel_task(task_id))
        await asyncio.sleep(0.5)  # (the server cancels; this client reads replies only once
        release.set()  # its callback has returned)
        assert (await asyncio.wait_for(cancel, 10)).status == "cancelled"
        await asyncio.sleep(0.2)  # (the late answer reaches the server)
        assert (await tasks.get_task(task_id)).status == "cancelled"
        result = await tasks.get_task_result(task_id, types.CallToolResult)
    assert result.isError and "cancel" in _text(result).lower(), _text(result)
    assert post.exists()
    assert runtime.history is not None
    states = [e["state"] for e in runtime.history.tasks(limit=20)]
    assert "CANCELLED" in states and "COMPLETED" not in states, states


async def test_posts_with_spaces_or_other_scripts_in_their_names_are_read_by_their_uris(
    runtime: AgentRuntime, tmp_path: Path
) -> None:
    """A post's URI is its path percent-encoded; reading that URI reads the post (decoded, it
    is still only a post of the blog that is read)."""
    posts = tmp_path / "blog" / "posts"
    names = {
        "my post.md": "Spaced",
        "中文笔记.md": "中文",
        "Caps#1.md": "Hash",
        "100% sure.md": "Pct",
    }
    for name, title in names.items():
        (posts / name).write_text(f"---\ntitle: {title}\n---\n\n{title} body.\n", encoding="utf-8")
    (tmp_path / "secret.md").write_text("---\ntitle: Secret\n---\n\nkey\n", encoding="utf-8")
    read: dict[str, str] = {}
    async with connect(runtime) as session:
        listed = {r.title: r for r in (await session.list_resources()).resources}
        for title in names.values():
            contents = (await session.read_resource(listed[title].uri)).contents[0]
            assert isinstance(contents, types.TextResourceContents)
            read[str(listed[title].uri)] = contents.text
        for outside in (
            "post://..%2F..%2Fetc%2Fpasswd",
            "post://..%2Fsecret.md",
            "post://posts%2F..%2F..%2Fsecret.md",
            "post://posts/%2E%2E/%2E%2E/secret.md",
        ):
            with pytest.raises(McpError, match="no post"):
                await session.read_resource(outside)  # type: ignore[arg-type]
    uris = {
        "post://posts/my%20post.md": "Spaced",
        "post://posts/%E4%B8%AD%E6%96%87%E7%AC%94%E8%AE%B0.md": "中文",
        "post://posts/Caps%231.md": "Hash",
        "post://posts/100%25%20sure.md": "Pct",
    }
    assert read == {uri: f"---\ntitle: {t}\n---\n\n{t} body.\n" for uri, t in uris.items()}


async def _waiting_then_restarted(tmp_path: Path, *, as_task: bool) -> tuple[AgentRuntime, str]:
    """A task that asked its question through MCP, and the runtime (the server) stopped
    while it waited; a new runtime over the same blog and state."""
    first = make_runtime(tmp_path, FunctionModel(StepModel()))
    async with connect(first) as session:
        if as_task:
            tasks = experimental(session)
            created = await tasks.call_tool_as_task("Ask", {"question": "Which colour?"})
            task_id = created.task.taskId
            for _ in range(250):
                if (await tasks.get_task(task_id)).status == "input_required":
                    break
                await asyncio.sleep(0.02)
        else:
            asked = await session.call_tool("Ask", {"question": "Which colour?"})
            assert asked.structuredContent is not None
            task_id = asked.structuredContent["task_id"]
    await first.close()  # the server stops; the waiting task stays resumable
    second = make_runtime(tmp_path, FunctionModel(StepModel()))
    await second.initialize()
    summary = second.get_task(task_id)
    assert summary is not None and summary.question == "Which colour?"
    return second, task_id


async def test_answer_after_a_restart_resumes_the_task_that_waits(tmp_path: Path) -> None:
    runtime, task_id = await _waiting_then_restarted(tmp_path, as_task=False)
    try:
        async with connect(runtime) as session:
            answered = await session.call_tool("answer", {"task_id": task_id, "text": "red"})
            again = await session.call_tool("answer", {"task_id": task_id, "text": "green"})
            unknown = await session.call_tool("answer", {"task_id": "no-such-task", "text": "x"})
    finally:
        await runtime.close()
    assert not answered.isError, answered.content
    assert _text(answered) == "you said red"
    assert answered.structuredContent is not None
    assert answered.structuredContent["state"] == "COMPLETED"
    assert again.isError
    assert _text(again) == f"task {task_id} is not waiting for an answer"
    assert unknown.isError
    assert _text(unknown) == "no task 'no-such-task' is running or resumable"
    assert unknown.structuredContent == {"error": _text(unknown), "task_id": "no-such-task"}


async def test_answer_after_a_restart_answers_an_mcp_task_that_waits(tmp_path: Path) -> None:
    """A call made as an MCP task asked its question, and the server started again: ``answer``
    takes the reply at once (``tasks/get`` first resumes the task in the background: the
    answer waits for that), and the MCP task's result is the answered run's."""
    runtime, task_id = await _waiting_then_restarted(tmp_path, as_task=True)
    try:
        async with connect(runtime) as session:
            tasks = experimental(session)
            assert (await tasks.get_task(task_id)).status == "input_required"
            answered = await session.call_tool("answer", {"task_id": task_id, "text": "red"})
            status = await tasks.get_task(task_id)
            result = await tasks.get_task_result(task_id, types.CallToolResult)
    finally:
        await runtime.close()
    assert not answered.isError, answered.content
    assert _text(answered) == "you said red"
    assert status.status == "completed"
    assert _text(result) == "you said red"


async def test_an_answer_made_as_a_task_keeps_the_record_of_the_task_it_answers(
    runtime: AgentRuntime,
) -> None:
    """``answer`` made as an MCP task goes on with the task it answers (one id): that task's
    record keeps its creation time and ttl, and its result becomes the answered run's. (The
    answer's call wrote its own record over it: created anew, the answer's ttl.)"""
    async with connect(runtime) as session:
        tasks = experimental(session)
        created = await tasks.call_tool_as_task("Ask", {"question": "Which colour?"}, ttl=120000)
        task_id = created.task.taskId
        for _ in range(250):
            asked = await tasks.get_task(task_id)
            if asked.status == "input_required":
                break
            await asyncio.sleep(0.02)
        answer = await tasks.call_tool_as_task("answer", {"task_id": task_id, "text": "red"}, ttl=5)
        result = await tasks.get_task_result(answer.task.taskId, types.CallToolResult)
        after = await tasks.get_task(task_id)
    assert answer.task.taskId == task_id
    assert _text(result) == "you said red"
    assert after.status == "completed"
    assert (after.createdAt, after.ttl) == (asked.createdAt, 120000)


async def test_a_refused_call_made_as_a_task_is_a_task_that_failed(runtime: AgentRuntime) -> None:
    """Bad params, an unknown tool or an unknown task, in a call made as an MCP task: the
    client gets the task it asked for (not a plain result, which the SDK cannot read as
    one), failed, with the refusal as its result."""
    async with connect(runtime) as session:
        tasks = experimental(session)
        refused: dict[str, tuple[str, types.CallToolResult]] = {}
        for name, arguments in [
            ("WriteArticle", {}),
            ("NoSuchTool", {}),
            ("answer", {"task_id": "no-such-task", "text": "yes"}),
        ]:
            created = await tasks.call_tool_as_task(name, arguments)
            result = await tasks.get_task_result(created.task.taskId, types.CallToolResult)
            refused[name] = (created.task.status, result)
        listed = {t.taskId: t.status for t in (await tasks.list_tasks()).tasks}
    assert {name: status for name, (status, _) in refused.items()} == dict.fromkeys(
        refused, "failed"
    )
    assert all(result.isError for _, result in refused.values())
    assert _text(refused["WriteArticle"][1]) == "params.topic: Field required"
    assert _text(refused["NoSuchTool"][1]).startswith("no tool 'NoSuchTool'")
    assert _text(refused["answer"][1]) == "no task 'no-such-task' is running or resumable"
    assert sorted(listed.values()) == ["failed"] * 3


async def test_an_argument_ask_or_answer_does_not_take_is_refused(runtime: AgentRuntime) -> None:
    """``{"text": "shorten the intro", "currentFile": "posts/a.md"}`` ran without the file (on
    the session's focus, or a post the model picked), as if the editor had named none."""
    model: HeldModel = runtime.model  # type: ignore[attr-defined]
    model.release.set()
    async with connect(runtime) as session:
        asked = await session.call_tool(
            "ask", {"text": "summarize it", "currentFile": "posts/docker-basics.md"}
        )
        answered = await session.call_tool("answer", {"task_id": "t", "text": "x", "txt": "y"})
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert asked.isError and answered.isError
    assert _text(asked) == (
        "ask: unknown argument 'currentFile' (it takes: text, current_file, selected_text)"
    )
    assert _text(answered).startswith("answer: unknown argument 'txt'")
    assert tools["ask"].inputSchema["additionalProperties"] is False
    assert tools["answer"].inputSchema["additionalProperties"] is False
    assert await runtime.list_tasks_async() == []  # nothing ran


async def test_a_session_that_ends_while_its_question_is_out_leaves_the_task_waiting(
    runtime: AgentRuntime, tmp_path: Path
) -> None:
    """The session ends (an editor restarting the server) while the confirmation is out as
    an elicitation: unlike a client's cancel, the task is not cancelled, it waits to be
    answered later, and the post stays."""
    post = tmp_path / "blog" / "posts" / "git-workflow.md"
    asked = asyncio.Event()

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.set()
        await asyncio.Event().wait()  # never answered: the session ends first
        raise AssertionError("unreachable")

    call: asyncio.Future[Any] | None = None
    with contextlib.suppress(Exception):
        async with connect(runtime, elicitation_callback=elicit) as session:
            call = asyncio.ensure_future(
                session.call_tool("ask", {"text": "delete posts/git-workflow.md"})
            )
            await asyncio.wait_for(asked.wait(), 10)
            [waiting] = [t for t in runtime.list_tasks() if t.state == "WAITING_INPUT"]
    if call is not None:
        call.cancel()
    await asyncio.sleep(0.1)
    assert runtime.get_task(waiting.id) is not None, "the task was ended"
    assert runtime.history is not None
    ended = [e for e in runtime.history.tasks(limit=20) if e["task_id"] == waiting.id]
    assert not ended or ended[0]["state"] != "CANCELLED"
    assert post.exists()


async def test_every_text_a_client_sends_is_bounded_without_echoing_it(
    runtime: AgentRuntime,
) -> None:
    """``ask`` took a ``selected_text`` of 300,000 characters (only ``text`` had a limit), and
    a 10,000-character ``task_id`` sent to ``answer`` came back whole in its error: each is
    now refused in one line that names the field and its limit, not the value."""
    async with connect(runtime) as session:
        selected = await session.call_tool(
            "ask", {"text": "shorten this", "selected_text": "y" * 300_000}
        )
        task_id = await session.call_tool("answer", {"task_id": "x" * 10_000, "text": "red"})
        asked = await session.call_tool("Ask", {"question": "Which colour?"})
        waiting = asked.structuredContent
        assert waiting is not None and waiting["state"] == "WAITING_INPUT"
        answer = await session.call_tool(
            "answer", {"task_id": waiting["task_id"], "text": "z" * 300_000}
        )
        answered = await session.call_tool("answer", {"task_id": waiting["task_id"], "text": "red"})
        assert _text(answered) == "you said red"  # the question stayed open
    for result, name in ((selected, "selected_text"), (task_id, "task_id"), (answer, "answer")):
        assert result.isError
        text = _text(result)
        assert name in text and "too long" in text, text
        assert "\n" not in text.strip() and len(text) < 300, text
    assert "max_input_chars" in _text(selected) and "100000" in _text(selected)
