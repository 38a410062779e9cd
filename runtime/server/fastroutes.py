"""The two calls that run tasks by the thousand, answered without FastAPI's request machinery.

``POST /v1/skills/{name}/run`` and ``POST /v1/input``, when well formed and authorised, are
answered here by the same functions as their routes (``skill_call`` / ``input_call``, then
``answer``), and their errors after the call started by the app's own ``error_response``.
Anything else goes to the FastAPI app unchanged (through the Host guard), its body replayed,
so every refusal reads as it always did: a Host header not allowed, a wrong or missing token,
a server that is stopping, a body that does not validate, a content type other than JSON, a
query other than ``cancel_on_disconnect``, an unknown skill, bad params, a store that does not
answer. The routes stay in the app (and in
``/openapi.json``): these are a shortcut to them, not another API.

Why: for a skill with no steps, FastAPI's routing, dependency solving and parameter machinery
took 40% of the server's loop time in the serve benchmark's profile, more than the task.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from pydantic_core import from_json

from skillrt.server.auth import HostGuard, token_matches
from skillrt.server.models import InputRequest, SkillRunRequest
from skillrt.server.problems import ProblemError

__all__ = ["FastRoutes"]

_SKILLS = "/v1/skills/"
_RUN = "/run"
# What FastAPI reads as a bool for ``cancel_on_disconnect`` and these take as it is; any other
# query goes to the app.
_CANCEL = {
    b"": False,
    b"cancel_on_disconnect=false": False,
    b"cancel_on_disconnect=0": False,
    b"cancel_on_disconnect=true": True,
    b"cancel_on_disconnect=1": True,
}


def _skill_name(path: str) -> str | None:
    """``name`` of ``/v1/skills/{name}/run`` (a path segment, as the route matches it)."""
    if not (path.startswith(_SKILLS) and path.endswith(_RUN)):
        return None
    name = path[len(_SKILLS) : -len(_RUN)]
    return name if name and "/" not in name else None


class FastRoutes:
    """ASGI: the shortcut to the two call routes in front of the FastAPI app (see above)."""

    def __init__(
        self,
        app: Any,
        server: Any,
        *,
        body_limit: int | None = None,
        hosts: HostGuard | None = None,
    ) -> None:
        from skillrt.server import app as routes  # made by it: the module is loaded by now

        self.app = app
        self.server = server  # the app's ServerState
        # The request body's limit when this stands in front of the app's ``BodyLimit`` (None:
        # one outside has read the body already): a call past it goes to the app, which
        # answers 413 as it always did; one layer and one replay of the body less per call.
        self.body_limit = body_limit
        # The Host guard when this stands in front of it (None: one outside checked the Host
        # already): a call goes on here when its one Host header is allowed, as the guard
        # judges it; any other goes to the guard, which refuses it as it always did. One
        # layer and one more walk of the headers less per call.
        self.hosts = hosts
        self._answer = routes.answer
        self._error = routes.error_response
        self._skill_call = routes.skill_call
        self._params_call = routes.params_call
        self._input_call = routes.input_call

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if (
            scope["type"] != "http"
            or scope["method"] != "POST"
            or scope.get("root_path")
            or not (path == "/v1/input" or path.startswith(_SKILLS))
        ):
            await self.app(scope, receive, send)
            return
        name = None if path == "/v1/input" else _skill_name(path)
        cancel = _CANCEL.get(scope.get("query_string", b""))
        auth = ctype = accept = host = None
        limit = self.body_limit
        within = True
        hosts = 0
        for key, value in scope["headers"]:
            if key == b"host":
                host = value
                hosts += 1
            elif key == b"authorization" and auth is None:
                auth = value.decode("latin-1")
            elif key == b"content-type" and ctype is None:
                ctype = value
            elif key == b"accept" and accept is None:
                accept = value
            elif key == b"content-length" and limit is not None:
                within = within and value.isdigit() and int(value) <= limit
        state = self.server
        guard = self.hosts
        usable = (
            (name is not None or path == "/v1/input")
            and within
            and (guard is None or (hosts == 1 and host is not None and guard.allows(host)))
            and ctype is not None
            and ctype.split(b";", 1)[0].strip().lower() == b"application/json"
            and not state.closing
            and token_matches(auth, state.token)
        )
        if cancel is None or not usable:
            await self.app(scope, receive, send)
            return
        body, ok = await _body(receive, limit)
        if ok is None:  # the client left before sending it all
            return
        if not ok:  # past the limit: the app's BodyLimit reads the rest and refuses it
            await self.app(scope, _replay(body, receive, more=True), send)
            return
        started = self._start(name, body)
        if started is None:  # the app says why
            await self.app(scope, _replay(body, receive), send)
            return
        call, session = started
        sse = accept is not None and b"text/event-stream" in accept
        try:
            response = await self._answer(state, call, session, cancel, sse, here=True)
        except Exception as exc:  # as the app's handlers answer it (the call logged it)
            response = self._error(state.runtime.redactor, exc)
        await response(scope, receive, send)

    def _start(self, name: str | None, body: bytes) -> tuple[Any, str | None] | None:
        """The call and its session, or None when the app must answer (nothing started)."""
        try:
            if name is None:
                return self._input_call(self.server, InputRequest.model_validate_json(body))
            params = _params_only(body)
            if params is not None:
                return self._params_call(self.server, name, params)
            return self._skill_call(self.server, name, SkillRunRequest.model_validate_json(body))
        except (ValidationError, ProblemError):
            return None


def _params_only(body: bytes) -> dict[str, Any] | None:
    """The params of a run's body that holds nothing else (``{"params": {...}}``, or ``{}``):
    what ``SkillRunRequest`` reads from it (the same JSON parser, pydantic-core's), without
    building the model and its empty context (most of a call's parsing). None for any other
    body, which the model reads, and refuses when it must."""
    try:
        data = from_json(body)
    except ValueError:
        return None
    if type(data) is not dict or len(data) > 1:
        return None
    if not data:  # ``{}``: the params' default
        return {}
    params = data.get("params")  # None when the one key is another (context, session_id)
    return params if type(params) is dict else None


async def _body(receive: Any, limit: int | None) -> tuple[bytes, bool | None]:
    """The body and True; what was read of it and False past ``limit`` (the rest unread);
    None when the client left before sending it all."""
    message = await receive()  # most bodies come in one message
    if message["type"] != "http.request":
        return b"", None
    body: bytes = message.get("body", b"")
    if not message.get("more_body", False):
        return body, limit is None or len(body) <= limit
    chunks, size = [body], len(body)
    while True:
        if limit is not None and size > limit:
            return b"".join(chunks), False
        message = await receive()
        if message["type"] != "http.request":
            return b"", None
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), limit is None or size <= limit


def _replay(body: bytes, receive: Any, *, more: bool = False) -> Any:
    """``receive`` giving ``body`` once more (``more``: the client sends the rest), then the
    client's messages."""
    replayed = False

    async def again() -> Any:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": more}
        return await receive()

    return again
