"""The ASGI app of ``skillrt serve``: the ``/v1`` API over one ``AgentRuntime``, and the page.

One runtime serves many chat sessions, each named by the ``session_id`` of its requests.
Calls that run a task answer with the ``ChatMessage`` as JSON, or, with ``Accept:
text/event-stream``, stream the task's events as SSE and end with a ``message`` event.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from importlib import resources
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Header, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import HTMLResponse
from starlette.staticfiles import StaticFiles

from skillrt._io.modeljson import model_data
from skillrt._io.redaction import Redactor
from skillrt._io.validation import problems
from skillrt._routing.inputs import clean_text
from skillrt.agent import ID_CHARS, AgentRuntime
from skillrt.exceptions import StoreUnavailable, UserError
from skillrt.messages import ChatMessage, TaskSummary
from skillrt.outcomes import exit_code
from skillrt.server.auth import BearerGuard, BodyLimit, HostGuard, token_matches
from skillrt.server.jobs import Call, Job, Jobs, OnLeft
from skillrt.server.models import (
    AnswerRequest,
    InfoResponse,
    InputRequest,
    RequestContext,
    ResumeRequest,
    SkillInfo,
    SkillRunRequest,
    TaskControl,
    UndoRequest,
)
from skillrt.server.problems import ProblemError, problem_body, problem_response
from skillrt.server.sse import Entry, EventLog, SSEResponse, restart_seq
from skillrt.settings import ServeConfig

__all__ = ["ServerState", "create_app"]

# The page loads only its own script and style, and no other site may frame it (clickjacking).
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self';"
    " img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none';"
    " frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
_ACTIVE = frozenset({"IDLE", "UNDERSTANDING", "PLANNING", "EXECUTING", "WAITING_INPUT"})


class ServerState:
    """What the routes share: the runtime, the event journal, the calls in flight."""

    def __init__(self, runtime: AgentRuntime, token: str, *, close_runtime: bool) -> None:
        self.runtime = runtime
        self.token = token
        self.close_runtime = close_runtime
        self.closing = False
        self._log: EventLog | None = None
        self._jobs: Jobs | None = None
        self._unsubscribe: Any = None
        self._closed: asyncio.Future[None] | None = None
        self.mcp: Any = None  # the MCP endpoint at /mcp, when the mcp extra is installed

    @property
    def log(self) -> EventLog:
        if self._log is None:
            raise RuntimeError("the server has not started")
        return self._log

    @property
    def jobs(self) -> Jobs:
        if self._jobs is None:
            raise RuntimeError("the server has not started")
        return self._jobs

    async def start(self) -> None:
        self._log = EventLog(self.runtime.redactor, first_seq=restart_seq())
        self._jobs = Jobs(self._log)
        # Unredacted: the journal redacts an event when it encodes it (most are never read);
        # by its fields: no ``Event`` is built for it.
        self._unsubscribe = self.runtime.events.on_fields(self._log.keep_event)
        self.runtime.keep_loop_free()  # its loop answers every client: no commit on it
        await self.runtime.initialize()
        self.runtime.warm_up()  # routing's tables, built in a thread before the first request
        if self.mcp is not None:
            await self.mcp.start()

    def begin_shutdown(self) -> None:
        """SIGTERM: refuse new calls, stop running tasks (they stay resumable, as ``close()``
        leaves them), let every stream end with its reply."""
        if self._closed is None:
            self._closed = asyncio.ensure_future(self._shutdown())

    async def _shutdown(self) -> None:
        self.closing = True
        if self.close_runtime:
            await self.runtime.close()
        if self._jobs is not None:
            await self._jobs.wait_all()
        if self._log is not None:
            self._log.close()
        if self._unsubscribe is not None:
            self._unsubscribe()

    async def stop(self) -> None:
        self.begin_shutdown()
        if self._closed is not None:
            await self._closed
        if self.mcp is not None:  # here, in the lifespan's task, which started it
            await self.mcp.stop()

    def task_running(self, task_id: str) -> bool:
        if self.jobs.running_for(task_id):
            return True
        state = self.runtime.task_state(task_id)  # a task of this worker: no store call
        return state is not None and state.value in _ACTIVE


def _state(request: Request) -> ServerState:
    state: ServerState = request.app.state.skillrt
    return state


async def require_token(request: Request) -> ServerState:
    # async: FastAPI runs a plain ``def`` dependency in its thread pool, a thread hand-off per
    # request (half the route's time for a skill with no steps). The header is read here, not
    # as a ``Header()`` parameter: FastAPI's parameter machinery costs more than the check.
    state = _state(request)
    if not token_matches(request.headers.get("authorization"), state.token):
        raise ProblemError(401, "unauthorized", "send Authorization: Bearer <token>")
    if state.closing:
        raise ProblemError(503, "shutting-down", "the server is stopping")
    return state


Server = Annotated[ServerState, Depends(require_token)]
# A task id of the path, bounded as every id a client sends: a 10,000-character one came back
# whole in the 404 that no such task is running ("no task 'xxxx…' is running or resumable").
TaskId = Annotated[str, Path(max_length=ID_CHARS)]
CancelOnDisconnect = Annotated[
    bool,
    Query(description="With SSE: cancel the task when the client goes away (default: keep it)."),
]
LastEventId = Annotated[str | None, Header(alias="Last-Event-ID")]


def _wants_sse(request: Request) -> bool:
    return "text/event-stream" in request.headers.get("accept", "")


def _context(ctx: RequestContext | None, session_id: str | None) -> dict[str, Any]:
    # A request without a context (most calls) has nothing to dump. (The attributes that
    # ``model_fields_set`` and ``model_extra`` read: two Python calls fewer per call.)
    empty = ctx is None or (not ctx.__pydantic_fields_set__ and not ctx.__pydantic_extra__)
    context = {} if empty or ctx is None else ctx.model_dump(exclude_none=True)
    session = session_id or context.pop("session_id", None)
    if session:
        context["session_id"] = session
    return context


class JSONReply(Response):
    """A call's reply as JSON with its ``X-Skillrt-Exit-Code``: the headers Starlette's
    ``Response`` would send, built directly (a third of its cost, at every call)."""

    media_type = "application/json"

    def __init__(self, text: str, exit_status: int) -> None:
        self.status_code = 200
        self.background = None
        self.body = text.encode()
        self.raw_headers = [
            (b"content-length", str(len(self.body)).encode()),
            (b"content-type", b"application/json"),
            (b"x-skillrt-exit-code", str(exit_status).encode()),
        ]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        await send({"type": "http.response.body", "body": self.body})
        if self.background is not None:
            await self.background()


def _message_response(
    state: ServerState, message: ChatMessage, journaled: Entry | None = None
) -> Response:
    """The reply as JSON, redacted (an echoing model may repeat a key or the token); the text
    the journal already holds for it when given (encoded and redacted once)."""
    if journaled is not None and journaled.event == "message":
        body = journaled.data
    else:
        body = state.runtime.redactor.dump(message)[0]
    return JSONReply(body, exit_code(message))


Conflict = Callable[[], Awaitable[str]] | None


async def _job_entries(
    state: ServerState, job: Job, conflict: Conflict = None
) -> AsyncIterator[Entry | None]:
    """The call's events, then its reply; or an ``error`` event holding a problem when the
    call ended without one (a bad answer, a task that could not be resumed: ``conflict``)."""
    await job.wait_bound()
    if job.task_id is not None:
        async for entry in state.log.follow_task(
            job.task_id, job.start, running=lambda: not job.finished
        ):
            yield entry
    while not job.finished:
        await state.log.wait(1.0)
    if job.entry is not None:
        if job.entry.task_id is None:
            yield job.entry
        return
    yield state.log.add(
        "error", None, _failure(job, None if conflict is None else await conflict())
    )


def _failure(job: Job, conflict: str | None = None) -> dict[str, Any]:
    future = job.future
    error = None if future is None or future.cancelled() else future.exception()
    if isinstance(error, UserError):
        return problem_body(422, "invalid-request", str(error))
    if isinstance(error, StoreUnavailable):
        return problem_body(503, "store-unavailable", str(error), retry_after_s=RETRY_AFTER_S)
    if error is not None:
        return problem_body(500, "internal", f"{type(error).__name__}: {error}")
    return problem_body(409, "task-conflict", conflict or "the task cannot do that now")


async def answer(
    state: ServerState,
    call: Call,
    session: str | None,
    cancel: bool,
    sse: bool,
    *,
    here: bool = False,
    conflict: Conflict = None,
) -> Response | SSEResponse:
    """The call's reply: as SSE, the call in a task of its own that the stream follows; as
    JSON, awaited, and with ``here`` (a call that takes ``on_left``) in the request's own
    task (``Jobs.run_here``). ``conflict``: the 409's detail when the call ends with no reply
    (the task could not do it), worked out then."""
    if sse:
        job = state.jobs.start(call, session)

        def gone() -> None:
            if cancel and job.task_id is not None and not job.finished:
                state.runtime.abort(job.task_id)

        return SSEResponse(_job_entries(state, job, conflict), on_disconnect=gone)
    if here:
        message, entry = await state.jobs.run_here(call, session)
    else:
        job = state.jobs.start(call, session)
        message, entry = await job.result(), job.entry
    if message is None:
        why = "the task cannot be resumed now" if conflict is None else await conflict()
        raise ProblemError(409, "task-conflict", why)
    return _message_response(state, message, entry)


async def _known_task(state: ServerState, task_id: str) -> TaskSummary:
    """The task, from this worker or (in its true state) from the shared store."""
    summary = await state.runtime.get_task_async(task_id)
    if summary is None:
        if await state.runtime.runs_elsewhere(task_id):
            raise ProblemError(409, "task-conflict", _ELSEWHERE.format(task=task_id))
        raise ProblemError(404, "unknown-task", f"no task {task_id!r} is running or resumable")
    return summary


# A task that another process on the same state folder (a REPL, another ``serve``) runs now:
# it was answered 404 "no task is running or resumable", and its client took it for lost.
_ELSEWHERE = (
    "task {task} runs in another process on this state folder: ask that process (its copy"
    " here is not the task), or again once it ends"
)


_SETTLE_S = 5.0  # a paused task's call returns once its end is durable: a commit away
RETRY_AFTER_S = 5  # what a 503 for a store that does not answer tells the client to wait


async def _stopped_task(state: ServerState, task_id: str) -> TaskSummary:
    """The task; when it is paused or failed, once the call that ran it has returned."""
    summary = await _known_task(state, task_id)
    if summary.state in ("PAUSED", "ERROR") and state.jobs.running_for(task_id):
        await state.jobs.settle(task_id, _SETTLE_S)
        summary = await _known_task(state, task_id)
    return summary


def _store_ready(state: ServerState) -> None:
    """New work is refused at once while the task store does not answer."""
    if not state.runtime.store_available:
        raise ProblemError(
            503,
            "store-unavailable",
            "the task store does not answer; new tasks are refused until it does",
            retry_after_s=RETRY_AFTER_S,
        )


def _control_ready(state: ServerState, what: str) -> None:
    """An abort or pause is refused at once while the task store does not answer, as an answer
    is: it could not be recorded. An abort of a task waiting for an answer in an outage said
    ``{"ok": true, "state": "WAITING_INPUT"}``, and once the store was back the task was
    PAUSED, resumable, never cancelled (a running one was resumed by failover and ran on)."""
    if not state.runtime.store_available:
        raise ProblemError(
            503,
            "store-unavailable",
            f"the task store does not answer; {what} could not be recorded (the task would go"
            " on once it does): send it again then",
            retry_after_s=RETRY_AFTER_S,
        )


def _skill_info(state: ServerState) -> list[SkillInfo]:
    return [
        SkillInfo(
            name=s.name,
            description=s.description,
            intents=list(s.intents),
            params_schema=s.params.model_json_schema(),
        )
        for s in state.runtime.skills.values()
    ]


v1 = APIRouter(prefix="/v1")
SSE_DOC: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The ChatMessage as JSON, or with Accept: text/event-stream the task's"
        " events as SSE ending with a `message` event holding it.",
        "content": {"text/event-stream": {}},
    }
}


@v1.post("/input", response_model=ChatMessage, responses=SSE_DOC)
async def post_input(
    body: InputRequest,
    request: Request,
    state: Server,
    cancel_on_disconnect: CancelOnDisconnect = False,
) -> Any:
    """Chat input, as ``process_input(text, context)``: a request, or the answer to a question."""
    call, session = input_call(state, body)
    sse = _wants_sse(request)
    return await answer(state, call, session, cancel_on_disconnect, sse, here=True)


def input_call(state: ServerState, body: InputRequest) -> tuple[Call, str | None]:
    """``POST /v1/input``'s call and session, or a ``ProblemError`` (nothing started)."""
    _store_ready(state)
    context = _context(body.context, body.session_id)

    def call(on_task: Any, on_left: OnLeft | None) -> Coroutine[Any, Any, ChatMessage | None]:
        return state.runtime.process_input(body.text, context, on_task=on_task, on_left=on_left)

    return call, context.get("session_id")


@v1.post("/undo", response_model=ChatMessage)
async def post_undo(state: Server, body: UndoRequest | None = None) -> Any:
    """Restore the version kept before the last write (of ``path``) byte for byte, as
    ``undo(path)``: an edit undone, a new post to the trash, a deleted post back. The body is
    optional, as its fields are: ``curl -X POST .../v1/undo`` with none was refused (422
    "body: Field required") though it asks for the plainest undo there is."""
    body = body or UndoRequest()
    message = await state.runtime.undo(body.path, language=body.language)
    return _message_response(state, message)


@v1.get("/skills", response_model=list[SkillInfo])
async def get_skills(state: Server) -> Any:
    """Every skill with its params JSON Schema, so a tool can build its buttons and forms."""
    return _skill_info(state)


@v1.post("/skills/{name}/run", response_model=ChatMessage, responses=SSE_DOC)
async def run_skill(
    name: str,
    body: SkillRunRequest,
    request: Request,
    state: Server,
    cancel_on_disconnect: CancelOnDisconnect = False,
) -> Any:
    """A skill by name with explicit params, as ``run_skill(name, params, context)``."""
    call, session = skill_call(state, name, body)
    sse = _wants_sse(request)
    return await answer(state, call, session, cancel_on_disconnect, sse, here=True)


def skill_call(state: ServerState, name: str, body: SkillRunRequest) -> tuple[Call, str | None]:
    """``POST /v1/skills/{name}/run``'s call and session, or a ``ProblemError`` (nothing
    started)."""
    return params_call(state, name, body.params, body.context, body.session_id)


def params_call(
    state: ServerState,
    name: str,
    raw: dict[str, Any],
    ctx: RequestContext | None = None,
    session_id: str | None = None,
) -> tuple[Call, str | None]:
    """``skill_call`` of a body's parts: its params, and its context and session (None and
    None: a body without them, which the fast routes read without building the model)."""
    _store_ready(state)
    skill = state.runtime.skills.get(name)
    if skill is None:
        known = ", ".join(sorted(state.runtime.skills))
        raise ProblemError(404, "unknown-skill", f"no skill {name!r} (known: {known})")
    try:
        params = model_data(skill.parse_params(raw))
    except Exception as exc:
        raise _params_error(exc) from None
    context = {} if ctx is None and session_id is None else _context(ctx, session_id)

    def call(on_task: Any, on_left: OnLeft | None) -> Coroutine[Any, Any, ChatMessage | None]:
        # The runtime's coroutine itself: the task that runs it has no frame of ours.
        return state.runtime.run_skill(name, params, context, on_task=on_task, on_left=on_left)

    return call, context.get("session_id")


def _params_error(exc: Exception) -> ProblemError:
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError):
        return ProblemError(422, "invalid-request", str(exc))
    found = problems(exc.errors(), prefix=("body", "params"))
    return ProblemError(422, "invalid-request", found.line, errors=found.rows)


@v1.get("/tasks", response_model=list[TaskSummary])
async def get_tasks(state: Server, session_id: str | None = None) -> Any:
    """The running, waiting and resumable tasks (of one session, if given)."""
    # The store is read in a thread (bounded); the task table is changed on the loop.
    tasks = await state.runtime.list_tasks_async()
    return [t for t in tasks if session_id is None or t.session_id == session_id]


@v1.get("/tasks/{task_id}", response_model=TaskSummary)
async def get_task(task_id: TaskId, state: Server) -> Any:
    return await _known_task(state, task_id)


async def _control(state: ServerState, task_id: str, done: bool, verb: str) -> TaskControl:
    if not done:
        summary = await _known_task(state, task_id)
        working = summary.state in _ACTIVE and (
            verb != "paused" or summary.state != "WAITING_INPUT"
        )
        if working and not state.task_running(task_id):  # another worker's, which did not act
            detail = f"task {task_id} cannot be {verb} now: {_SILENT.format(state=summary.state)}"
            raise ProblemError(409, "task-conflict", detail)
        raise ProblemError(
            409, "task-conflict", f"task {task_id} cannot be {verb} now (it is {summary.state})"
        )
    if verb == "cancelled":
        # Cancelled (here, or by the worker that runs it). Read again, the task said what a
        # copy held a moment before: ``"state": null`` for a paused one (ended, no longer
        # held), PAUSED for one restored from the store after an outage, next to "ok": true.
        return TaskControl(task_id=task_id, ok=True, state="CANCELLED")
    now = await state.runtime.get_task_async(task_id)
    return TaskControl(task_id=task_id, ok=True, state=now.state if now else None)


@v1.post("/tasks/{task_id}/abort", response_model=TaskControl)
async def abort_task(task_id: TaskId, state: Server) -> Any:
    """Cancel the task now, on whichever worker runs it: its model stream and requests stop,
    its locks are released."""
    _control_ready(state, "a cancel")
    mark = state.log.seq
    here = state.task_running(task_id)
    done = await state.runtime.abort_task(task_id)
    if done and here and not state.jobs.running_for(task_id):
        await _ended_here(state, task_id)  # waiting for an answer: its call has returned
    if done and state.jobs.running_for(task_id):
        # Its call here ends at once, cancelled: the reply says so. It said ``"state":
        # "EXECUTING"`` next to ``"ok": true``, the task's state a moment before it stopped.
        await state.jobs.settle(task_id, _SETTLE_S)
        ended = state.log.reply_state(task_id, mark)
        # (PAUSED: the reply of a pause that was settling when the abort came; the abort then
        # cancelled the paused task, and the reply said PAUSED next to "ok": true)
        if ended is not None and ended != "PAUSED":
            return TaskControl(task_id=task_id, ok=True, state=ended)
    return await _control(state, task_id, done, "cancelled")


async def _ended_here(state: ServerState, task_id: str) -> None:
    """Until the task this worker runs is no longer working or waiting (``_SETTLE_S`` at
    most). An abort of a task waiting for an answer, whose call had returned its question,
    replied ``"state": "WAITING_INPUT"`` next to ``"ok": true``: the state a moment before its
    run, cancelled, ended."""
    deadline = asyncio.get_running_loop().time() + _SETTLE_S
    while state.task_running(task_id) and asyncio.get_running_loop().time() < deadline:
        await state.log.wait(0.05)  # (its ending adds its events)


@v1.post("/tasks/{task_id}/pause", response_model=TaskControl)
async def pause_task(task_id: TaskId, state: Server) -> Any:
    """Pause at the next step boundary (on whichever worker runs the task); the running call
    then replies ``paused``."""
    _control_ready(state, "a pause")
    return await _control(state, task_id, await state.runtime.pause_task(task_id), "paused")


@v1.post("/tasks/{task_id}/resume", response_model=ChatMessage, responses=SSE_DOC)
async def resume_task(
    task_id: TaskId,
    request: Request,
    state: Server,
    body: ResumeRequest | None = None,
    cancel_on_disconnect: CancelOnDisconnect = False,
) -> Any:
    """Continue a paused or interrupted task from its last completed step."""
    summary = await _stopped_task(state, task_id)
    if summary.state not in ("PAUSED", "ERROR") or state.jobs.running_for(task_id):
        raise ProblemError(409, "task-conflict", f"task {task_id} is {summary.state}, not paused")
    session = body.session_id if body is not None else None

    def call(on_task: Any, _: OnLeft | None) -> Coroutine[Any, Any, ChatMessage | None]:
        return state.runtime.resume_task(task_id, session_id=session, on_task=on_task)

    return await answer(state, call, session, cancel_on_disconnect, _wants_sse(request))


@v1.post("/tasks/{task_id}/answer", response_model=ChatMessage, responses=SSE_DOC)
async def answer_task(
    task_id: TaskId,
    body: AnswerRequest,
    request: Request,
    state: Server,
    cancel_on_disconnect: CancelOnDisconnect = False,
) -> Any:
    """Answer the question the task is waiting on (on whichever worker runs it); replies with
    its next outcome. A task that waited for an answer when the server stopped (PAUSED, its
    question kept) is resumed, asks again, and takes this answer."""
    summary = await _stopped_task(state, task_id)
    if _asked_when_stopped(state, summary):

        def resumed(on_task: Any, _: OnLeft | None) -> Coroutine[Any, Any, ChatMessage | None]:
            return _resumed_and_answered(state, summary, body.text, on_task)

        sse = _wants_sse(request)
        return await answer(state, resumed, summary.session_id, cancel_on_disconnect, sse)
    if summary.state != "WAITING_INPUT":
        raise ProblemError(409, "task-conflict", f"task {task_id} is not waiting for an answer")

    def call(on_task: Any, _: OnLeft | None) -> Coroutine[Any, Any, ChatMessage | None]:
        return state.runtime.answer_task(task_id, body.text, on_task=on_task)

    sse = _wants_sse(request)
    return await answer(state, call, summary.session_id, cancel_on_disconnect, sse,
                        conflict=lambda: _not_answered(state, task_id))  # fmt: skip


async def _not_answered(state: ServerState, task_id: str) -> str:
    """Why the task took no answer. The reply said "the task cannot be resumed now", though
    nothing was resumed: its question was answered meanwhile (a plain input of its session),
    or it ended; or the worker that runs it did not take the answer (killed: its lease has not
    run out yet)."""
    now = await state.runtime.get_task_async(task_id)
    if now is not None and now.state == "WAITING_INPUT" and not state.task_running(task_id):
        return f"task {task_id} took no answer: {_SILENT.format(state=now.state)}"
    return f"task {task_id} is not waiting for an answer (answered, or ended, meanwhile)"


# A task another worker runs, which did not act on a request about it: killed, it keeps its
# lease until that runs out. An abort of it said only "cannot be cancelled now (it is
# EXECUTING)", an answer "the task cannot be resumed now".
_SILENT = (
    "it is {state} on another worker, which did not act on the request (a worker that"
    " stopped has its tasks taken over once their lease runs out: try again then)"
)


def _asked_when_stopped(state: ServerState, summary: TaskSummary) -> bool:
    """A task stopped (a restart, an outage) while it waited for an answer: it rests with its
    question. Its answer got 409 "not waiting for an answer" until a resume had it ask again,
    though ``skillrt resume ID --answer TEXT`` and MCP's ``answer`` take it at once."""
    stopped = summary.state in ("PAUSED", "ERROR") and not state.jobs.running_for(summary.id)
    return stopped and bool(summary.question)


async def _resumed_and_answered(
    state: ServerState, summary: TaskSummary, text: str, on_task: Any
) -> ChatMessage | None:
    """Resume the task (in its own session); once it asks its question again, ``text`` is
    the answer. What it said instead when it did not ask again (it failed, or ran elsewhere)."""
    if not clean_text(text):  # refused before it runs, as ``answer_task`` refuses it
        raise UserError("the answer is empty")
    rt, task_id = state.runtime, summary.id
    asked = await rt.resume_task(task_id, session_id=summary.session_id, on_task=on_task)
    if asked is None or asked.state != "WAITING_INPUT" or asked.task_id != task_id:
        return asked
    return await rt.answer_task(task_id, text, on_task=on_task)


@v1.delete("/tasks/{task_id}", response_model=TaskControl)
async def abandon_task(task_id: TaskId, state: Server) -> Any:
    """Give up a paused or failed task for good (its journal is deleted)."""
    await _stopped_task(state, task_id)
    done = await state.runtime.abandon_task(task_id)
    if not done:
        raise ProblemError(409, "task-conflict", f"task {task_id} is running; abort it first")
    return TaskControl(task_id=task_id, ok=True, state="ABANDONED")


def _after(last_event_id: str | None) -> int:
    if last_event_id is None or not last_event_id.strip():
        return 0
    try:
        return max(0, int(last_event_id.strip()))
    except ValueError:
        raise ProblemError(
            422, "invalid-request", "Last-Event-ID must be an event id (a number)"
        ) from None


@v1.get("/tasks/{task_id}/events", responses={200: {"content": {"text/event-stream": {}}}})
async def task_events(
    task_id: TaskId,
    state: Server,
    last_event_id: LastEventId = None,
    cancel_on_disconnect: CancelOnDisconnect = False,
) -> Any:
    """The task's events after ``Last-Event-ID``, then live ones, ending with its reply."""
    after = _after(last_event_id)
    known = state.log.knows(task_id) or state.runtime.task_state(task_id) is not None
    # A task another worker runs: its events are sent here while this stream follows it.
    elsewhere = None if state.task_running(task_id) else await state.runtime.follow_task(task_id)
    # Another process on this state folder runs it: the stream said "no task", or "task has
    # ended; no reply of it is kept" of its copy here.
    local = elsewhere is None and not state.task_running(task_id)
    if local and await state.runtime.runs_elsewhere(task_id):
        raise ProblemError(409, "task-conflict", _ELSEWHERE.format(task=task_id))
    if not known and elsewhere is None and await state.runtime.get_task_async(task_id) is None:
        raise ProblemError(404, "unknown-task", f"no task {task_id!r}")

    def gone() -> None:
        if cancel_on_disconnect:
            state.runtime.abort(task_id)  # records the request; the other worker acts on it

    if elsewhere is not None:
        state.log.bind(task_id, None)
        return SSEResponse(_remote_entries(state, task_id, after, elsewhere), on_disconnect=gone)
    entries = state.log.follow_task(task_id, after, running=lambda: state.task_running(task_id))
    return SSEResponse(_ending_told(state, task_id, entries), on_disconnect=gone)


async def _ending_told(
    state: ServerState, task_id: str, entries: AsyncIterator[Entry | None]
) -> AsyncIterator[Entry | None]:
    """The task's entries; when they end with no reply in the journal (a task paused before
    the server restarted, one whose events are no longer kept), an ``error`` event saying why
    nothing more comes. A plugin that reattached after a restart to its paused task got
    ``: stream`` and the end, no reply and no reason, and retried."""
    async for entry in entries:
        yield entry
        if entry is not None and entry.event == "message":
            return
    if state.log.closed or state.log.replied(task_id):  # stopping; or the reply was sent
        return
    summary = await state.runtime.get_task_async(task_id)
    if summary is None:
        problem = problem_body(
            404, "unknown-task", f"task {task_id} has ended; no reply of it is kept"
        )
    else:
        problem = problem_body(
            409,
            "task-conflict",
            f"task {task_id} is {summary.state}: no event comes until it is resumed",
        )
    yield state.log.add("error", None, problem)


async def _remote_entries(
    state: ServerState, task_id: str, after: int, reply: asyncio.Future[ChatMessage | None]
) -> AsyncIterator[Entry | None]:
    """The events another worker sends of its task, then its reply as a ``message`` event."""
    async for entry in state.log.follow_task(task_id, after, running=lambda: not reply.done()):
        yield entry
        if entry is not None and entry.event == "message":
            return
    message = reply.result() if reply.done() and not reply.cancelled() else None
    if message is not None:
        yield state.log.add_message(message)


@v1.get("/events", responses={200: {"content": {"text/event-stream": {}}}})
async def all_events(
    state: Server, session_id: str | None = None, last_event_id: LastEventId = None
) -> Any:
    """Every event (of one session, if given), live, after ``Last-Event-ID`` if sent."""
    after = _after(last_event_id) if last_event_id else state.log.seq
    return SSEResponse(state.log.follow_all(after, session_id))


@v1.get("/info", response_model=InfoResponse)
async def info(state: Server) -> Any:
    from skillrt import __version__

    rt = state.runtime
    return InfoResponse(
        version=__version__,
        model=rt.llm.model,
        model_reason=rt.llm_reason,
        content_root=str(rt.config.root),
        posts_dir=rt.config.posts_dir,
        session_id=rt.session_id,
        skills=sorted(rt.skills),
    )


def _page() -> str:
    return resources.files("skillrt.server").joinpath("static/index.html").read_text("utf-8")


def create_app(
    runtime: AgentRuntime,
    *,
    token: str,
    serve: ServeConfig | None = None,
    hosts: list[str] | None = None,
    close_runtime: bool = True,
) -> Any:
    """The ASGI app (guards included) and, as ``app.state.skillrt``, its ``ServerState``."""
    cfg = serve or runtime.config.serve
    runtime.redactor.add(token)  # the active token is a secret: no reply, event or log shows it
    state = ServerState(runtime, token, close_runtime=close_runtime)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await state.start()
        try:
            yield
        finally:
            await state.stop()

    api = FastAPI(
        title="skillrt",
        version=_version(),
        docs_url=None,  # the docs pages load scripts from a CDN: none here
        redoc_url=None,
        openapi_url=None,  # served below, behind the token
        lifespan=lifespan,
    )
    api.state.skillrt = state
    # The routes themselves, not include_router: recent FastAPI keeps an included router behind
    # a wrapper that rebuilds and walks its candidates at every request (5% of a request).
    api.router.routes.extend(v1.routes)
    _handlers(api)

    @api.get("/healthz", include_in_schema=False)
    async def healthz() -> Response:
        if not state.closing and not runtime.store_available:  # no store call: a flag
            return JSONResponse(
                {"status": "degraded", "store": "unavailable"},
                status_code=503,
                headers={"Retry-After": str(RETRY_AFTER_S)},
            )
        return JSONResponse({"status": "stopping" if state.closing else "ok"})

    @api.get("/openapi.json", include_in_schema=False)
    async def openapi(_: Server) -> dict[str, Any]:
        return api.openapi()

    @api.get("/", include_in_schema=False)
    async def page() -> HTMLResponse:
        return HTMLResponse(_page(), headers={"Cache-Control": "no-store", **PAGE_HEADERS})

    api.mount("/static", StaticFiles(packages=[("skillrt.server", "static")]), name="static")
    _mount_mcp(api, state)
    from skillrt.server.fastroutes import FastRoutes  # here: it calls back into this module

    app: Any
    allowed = [*(hosts or []), *cfg.allowed_hosts]
    if cfg.cors_origins:  # CORS headers on every reply, the fast routes' too
        fast: Any = FastRoutes(api, state)
        app = CORSMiddleware(
            fast,
            allow_origins=cfg.cors_origins,
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "Content-Type", "Last-Event-ID", "Accept"],
            expose_headers=["X-Skillrt-Exit-Code"],
            max_age=600,
        )
        app = BodyLimit(app, limit=cfg.max_body_bytes, problem=problem_response)
        app = HostGuard(app, hosts=allowed, problem=problem_response)
    else:  # the fast routes hold their calls to the limit and the Host guard's list; the
        # rest goes through the guard and BodyLimit
        limited = BodyLimit(api, limit=cfg.max_body_bytes, problem=problem_response)
        guard = HostGuard(limited, hosts=allowed, problem=problem_response)
        app = FastRoutes(guard, state, body_limit=cfg.max_body_bytes, hosts=guard)
    app.state = api.state  # so app.state.skillrt reaches the state through the guards
    return app


def _mount_mcp(api: FastAPI, state: ServerState) -> None:
    """MCP over streamable HTTP at ``/mcp`` behind the same token (and, outside, the same Host
    guard and body limit), when the ``mcp`` extra is installed."""
    from importlib.util import find_spec

    if find_spec("mcp") is None:
        return
    from skillrt.mcp.server.http import McpEndpoint

    state.mcp = McpEndpoint(state.runtime)
    guarded = BearerGuard(state.mcp, token=lambda: state.token, problem=problem_response)
    endpoint: Any = guarded  # an ASGI app: Starlette routes to it as it is
    api.add_route("/mcp", endpoint, methods=["GET", "POST", "DELETE"], include_in_schema=False)


def _version() -> str:
    from skillrt import __version__

    return __version__


def _redacted(redactor: Redactor, response: JSONResponse) -> JSONResponse:
    """An error reply with its body redacted: a message may name a path or echo input that
    holds a secret."""
    text = bytes(response.body).decode("utf-8")
    if redactor.is_clean(text):
        return response
    body = redactor(json.loads(text))
    return JSONResponse(
        body,
        status_code=response.status_code,
        media_type=response.media_type,
        headers={
            k: v
            for k, v in response.headers.items()
            if k.lower() in ("www-authenticate", "retry-after")
        },
    )


def error_response(redactor: Redactor, exc: Exception) -> JSONResponse:
    """The problem reply, redacted, for an error a route raised: what the app's handlers
    answer, and the fast routes (``fastroutes``) with them."""
    if isinstance(exc, ProblemError):
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        if "retry_after_s" in exc.extra:
            headers = {"Retry-After": str(exc.extra["retry_after_s"])}
        response = problem_response(exc.status, exc.code, exc.detail, headers, **exc.extra)
    elif isinstance(exc, StoreUnavailable):
        headers = {"Retry-After": str(RETRY_AFTER_S)}
        response = problem_response(503, "store-unavailable", str(exc), headers,
                                    retry_after_s=RETRY_AFTER_S)  # fmt: skip
    elif isinstance(exc, UserError):
        response = problem_response(422, "invalid-request", str(exc))
    else:
        response = problem_response(500, "internal", f"{type(exc).__name__}: {exc}")
    return _redacted(redactor, response)


def _handlers(api: FastAPI) -> None:
    def redactor(request: Request) -> Redactor:
        return _state(request).runtime.redactor

    @api.exception_handler(ProblemError)
    async def on_problem(request: Request, exc: ProblemError) -> Response:
        return error_response(redactor(request), exc)

    @api.exception_handler(RequestValidationError)
    async def on_invalid(request: Request, exc: RequestValidationError) -> Response:
        found = problems(exc.errors())
        detail = _not_json(request, found.rows) or found.line
        return _redacted(
            redactor(request),
            problem_response(422, "invalid-request", detail, errors=found.rows),
        )

    @api.exception_handler(UserError)
    async def on_user_error(request: Request, exc: UserError) -> Response:
        return error_response(redactor(request), exc)

    @api.exception_handler(StoreUnavailable)
    async def on_store(request: Request, exc: StoreUnavailable) -> Response:
        return error_response(redactor(request), exc)

    @api.exception_handler(StarletteHTTPException)
    async def on_http(_: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 405:
            return problem_response(405, "method-not-allowed", str(exc.detail))
        if exc.status_code == 404:
            return problem_response(404, "not-found", "no such endpoint")
        return problem_response(exc.status_code, "invalid-request", str(exc.detail))

    @api.exception_handler(Exception)
    async def on_error(request: Request, exc: Exception) -> Response:
        return error_response(redactor(request), exc)


def _not_json(request: Request, rows: list[dict[str, Any]]) -> str | None:
    """What to tell a client whose body was refused whole because it was not sent as JSON:
    ``fetch(url, {method: "POST", body: JSON.stringify(...)})`` sends ``text/plain``, and the
    reply said only "body: Input should be a valid dictionary or object to extract fields
    from". None when the body came as JSON or the errors are about its fields."""
    sent = request.headers.get("content-type")
    media = (sent or "").split(";", 1)[0].strip().lower()
    if media == "application/json" or media.endswith("+json"):
        return None
    if not any(tuple(row.get("loc", ())) == ("body",) for row in rows):
        return None
    came = f"Content-Type {media}" if media else "no Content-Type"
    return f"body: send it as JSON with Content-Type: application/json (it came with {came})"
