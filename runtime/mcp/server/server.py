"""``build_server(runtime)``: the MCP server over one ``AgentRuntime`` (the SDK's low-level
``Server``, which lets the tools be the skills registered at run time).

A call runs as the HTTP API runs it: ``run_skill`` for a skill's tool, ``process_input`` for
``ask``, ``answer_task`` for ``answer``; each MCP session is a chat session of its own. While
it runs, its task's progress and streamed text come as progress notifications; a client that
cancels the request aborts the task (``process_input``'s caller going away does that), which
stops the model's stream and leaves nothing half-written. A task that asks a question asks the
client through elicitation when it can, else the result is the question (state
``WAITING_INPUT``) and the ``answer`` tool takes the reply. A call made as an MCP task returns
at once and goes on in the background (``tasks.py``).
"""

from __future__ import annotations

import asyncio
import warnings
from typing import Any
from weakref import WeakKeyDictionary

from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.session import ServerSession

from skillrt.agent import AgentRuntime
from skillrt.exceptions import UserError
from skillrt.mcp.server.blog import get_prompt, list_posts, list_prompts, read_post
from skillrt.mcp.server.relay import ProgressRelay
from skillrt.mcp.server.results import error_result, is_waiting, message_result, redacted_result
from skillrt.mcp.server.tasks import TaskBook
from skillrt.mcp.server.tools import Call, Refused, list_tools, parse_call
from skillrt.messages import ChatMessage, new_id

__all__ = ["McpServer", "build_server"]

INSTRUCTIONS = (
    "skillrt writes, edits, summarises and answers from a Markdown blog, and researches the web."
    " Each skill is a tool; `ask` takes a request in free text. The blog's posts are resources"
    " (post://<path>). Long calls can run as tasks."
)
_RECENT = 500  # the history's latest tasks, where ``answer`` looks for a task that is over
_QUESTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string", "title": "Your answer"}},
    "required": ["answer"],
}


def _client_cancelled(session: ServerSession, request_id: str | int | None) -> bool:
    """Whether the client cancelled the request ``request_id`` (``notifications/cancelled``),
    as opposed to the session ending under it: the SDK cancels the request's own scope for
    the first (``RequestResponder.cancel``), the session's for the second. (The SDK keeps its
    requests in flight in ``_in_flight``; pinned below 2.)"""
    in_flight = getattr(session, "_in_flight", None)
    responder = in_flight.get(request_id) if isinstance(in_flight, dict) else None
    return bool(responder is not None and getattr(responder, "cancelled", False))


class McpServer:
    """The SDK server, its runtime and the MCP tasks it keeps."""

    def __init__(self, runtime: AgentRuntime, *, name: str = "skillrt") -> None:
        from skillrt import __version__

        self.runtime = runtime
        self.book = TaskBook(runtime)
        self.server: Server[Any, Any] = Server(name, version=__version__, instructions=INSTRUCTIONS)
        self._sessions: WeakKeyDictionary[ServerSession, str] = WeakKeyDictionary()
        self._handlers()

    def session_id(self, session: ServerSession) -> str:
        """The chat session an MCP session stands for (one each)."""
        found = self._sessions.get(session)
        if found is None:
            found = self._sessions[session] = "mcp-" + new_id()
        return found

    # --- calls -----------------------------------------------------------------------------------

    async def run(self, call: Call, session_id: str, on_task: Any) -> ChatMessage | None:
        rt = self.runtime
        if call.kind == "skill":
            context = {"session_id": session_id}
            return await rt.run_skill(call.name, call.params, context, on_task=on_task)
        if call.kind == "ask":
            context = {**call.params["context"], "session_id": session_id}
            return await rt.process_input(call.params["text"], context, on_task=on_task)
        task_id, text = call.params["task_id"], call.params["text"]
        message = await rt.answer_task(task_id, text, on_task=on_task)
        if message is not None:
            return message
        # Not waiting here: it may wait in the store (this server started again since it
        # asked). Resumed, it asks again, and this is the answer (``skillrt resume ID
        # --answer TEXT``).
        asked = await self.book.asked_again(task_id, session_id)
        if asked is None or not is_waiting(asked) or asked.task_id != task_id:
            return asked  # None: not waiting; else what the resumed task said instead
        return await rt.answer_task(task_id, text, on_task=on_task)

    async def unknown(self, call: Call) -> Refused | None:
        """``answer`` to a task this runtime does not hold (neither running, waiting nor
        resumable) nor ran lately: refused as the HTTP API refuses it (``unknown-task``)."""
        if call.kind != "answer":
            return None
        task_id = call.params["task_id"]
        rt = self.runtime
        if task_id in self.book.jobs or await rt.get_task_async(task_id) is not None:
            return None
        history = rt.history
        if history is not None:  # it ran here, and is over: "not waiting for an answer"
            ended = await asyncio.to_thread(history.tasks, None, _RECENT)
            if any(entry.get("task_id") == task_id for entry in ended):
                return None
        return Refused(f"no task {task_id!r} is running or resumable", task_id=task_id)

    async def run_asking(
        self,
        call: Call,
        session: ServerSession,
        on_task: Any,
        request_id: str | int | None,
    ) -> ChatMessage | None:
        """The call; each question it asks goes to the client by elicitation when it can."""
        message = await self.run(call, self.session_id(session), on_task)
        while message is not None and is_waiting(message) and _can_elicit(session):
            task_id = message.task_id or ""
            self.book.eliciting.add(task_id)
            try:
                answer = await session.elicit_form(message.content, _QUESTION_SCHEMA, request_id)
            except asyncio.CancelledError:
                # The client cancelled the call while its question was out: the task ends
                # (CANCELLED), as a call cancelled mid-stream does; left waiting, the session's
                # next input ("yes") would have been taken as its answer. The session ending
                # (the editor restarts the server, the server stops) cancels the call too: then
                # the task waits, resumable, and ``answer`` takes its reply later.
                if task_id and _client_cancelled(session, request_id):
                    self.runtime.abort(task_id)  # (abort("") would stop the foreground task)
                raise
            except Exception:  # the client went away or refused the request: the task waits
                return message
            finally:
                self.book.eliciting.discard(task_id)
            text = (answer.content or {}).get("answer") if answer.action == "accept" else None
            if not isinstance(text, str) or not text.strip():
                self.runtime.abort(task_id)
                return ChatMessage(
                    content=f"Task {task_id} cancelled: the question was not answered.",
                    task_id=task_id,
                    state="CANCELLED",
                    data={"outcome": "cancelled", "declined": answer.action},
                )
            self.book.record(task_id, message)
            message = await self.runtime.answer_task(task_id, text, on_task=on_task)
        return message

    async def call_tool(self, name: str, arguments: dict[str, Any] | None) -> Any:
        """A tool call's answer, redacted as the HTTP API's replies are (an MCP task's result
        is redacted when the book records it)."""
        result = await self._call_tool(name, arguments)
        if isinstance(result, types.CallToolResult):
            return redacted_result(self.runtime.redactor, result)
        return result

    async def _call_tool(self, name: str, arguments: dict[str, Any] | None) -> Any:
        rt = self.runtime
        await rt.initialize()
        ctx = self.server.request_context
        is_task = ctx.experimental.is_task
        ttl = ctx.experimental.task_metadata.ttl if ctx.experimental.task_metadata else None
        try:
            call = parse_call(rt.skills, name, arguments)
            if (unknown := await self.unknown(call)) is not None:
                raise unknown
        except Refused as refused:
            result = error_result(refused.reason, **refused.data)
            if is_task:  # the client waits for a task: one that failed, the refusal its result
                return await self.book.refused(redacted_result(rt.redactor, result), ttl)
            return result
        session = ctx.session
        token = ctx.meta.progressToken if ctx.meta is not None else None
        if is_task:

            async def background(on_task: Any) -> ChatMessage | None:
                # The request has its answer (the task): progress goes out on its own.
                async with ProgressRelay(rt, session, token, None) as relay:

                    def bound(task_id: str) -> None:
                        relay.bind(task_id)
                        on_task(task_id)

                    return await self.run_asking(call, session, bound, None)

            return await self.book.start(background, ttl)
        try:
            async with ProgressRelay(rt, session, token, ctx.request_id) as relay:
                message = await self.run_asking(call, session, relay.bind, ctx.request_id)
        except UserError as exc:
            return error_result(str(exc))
        if message is None:
            task_id = call.params.get("task_id", "")
            return error_result(f"task {task_id} is not waiting for an answer", task_id=task_id)
        if message.task_id:
            self.book.record(message.task_id, message)
        return message_result(message)

    # --- the handlers ----------------------------------------------------------------------------

    def _handlers(self) -> None:
        rt, book = self.runtime, self.book
        server: Any = self.server  # its decorators are untyped

        async def tools() -> list[types.Tool]:
            await rt.initialize()
            effects = {name: spec.effect for name, spec in rt.router.specs.items()}
            return list_tools(rt.skills, effects)

        async def resources() -> list[types.Resource]:
            return await list_posts(rt)

        async def read(uri: Any) -> list[Any]:
            from mcp.server.lowlevel.helper_types import ReadResourceContents

            text, mime = await read_post(rt, str(uri))
            return [ReadResourceContents(content=text, mime_type=mime)]

        async def prompts() -> list[types.Prompt]:
            return list_prompts()

        async def prompt(name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
            return get_prompt(name, arguments)

        server.list_tools()(tools)
        server.call_tool(validate_input=False)(self.call_tool)
        server.list_resources()(resources)
        server.read_resource()(read)
        server.list_prompts()(prompts)
        server.get_prompt()(prompt)

        with warnings.catch_warnings():  # tasks are experimental in the SDK: it warns of that
            warnings.simplefilter("ignore", DeprecationWarning)
            experimental: Any = server.experimental

        async def get_task(req: types.GetTaskRequest) -> types.GetTaskResult:
            task = await book.get(req.params.taskId)
            return types.GetTaskResult(**task.model_dump())

        async def task_result(req: types.GetTaskPayloadRequest) -> types.GetTaskPayloadResult:
            result = await book.result(req.params.taskId)
            return types.GetTaskPayloadResult.model_validate(result.model_dump(exclude_none=True))

        async def cancel_task(req: types.CancelTaskRequest) -> types.CancelTaskResult:
            task = await book.cancel(req.params.taskId)
            return types.CancelTaskResult(**task.model_dump())

        async def list_tasks(req: types.ListTasksRequest) -> types.ListTasksResult:
            await rt.initialize()
            return types.ListTasksResult(tasks=book.list())

        experimental.get_task()(get_task)
        experimental.get_task_result()(task_result)
        experimental.cancel_task()(cancel_task)
        experimental.list_tasks()(list_tasks)


def _can_elicit(session: ServerSession) -> bool:
    params = session.client_params
    return params is not None and params.capabilities.elicitation is not None


def build_server(runtime: AgentRuntime) -> McpServer:
    """The MCP server for ``runtime`` (run it with ``run_stdio`` or mount ``McpEndpoint``)."""
    return McpServer(runtime)
