"""``skillrt.client``: the ``AgentRuntime`` calls over HTTP, for Python hosts in another process.

::

    async with SkillrtClient("http://127.0.0.1:8765", token=token, session_id="editor") as c:
        msg = await c.process_input("write an article about Rust ownership")
        async for event in c.stream_input("steps ..."):   # events, then the message
            ...

It talks to ``skillrt serve`` and needs only httpx. Errors the server reports come back as
``ServerError`` (status, code); calls that return a bool or None in the runtime do so here.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

import httpx

from skillrt.exceptions import ServerError, UnknownSkill
from skillrt.messages import ChatMessage, TaskSummary

__all__ = ["ServerError", "ServerEvent", "SkillrtClient"]


@dataclass(frozen=True, slots=True)
class ServerEvent:
    """One SSE event: ``id`` (to reattach from), ``type`` (``task:progress``... or
    ``message``), and its data (an event's ``{type, task_id, data, timestamp}``, or for
    ``message`` the ChatMessage's fields)."""

    id: int | None
    type: str
    data: dict[str, Any]

    @property
    def message(self) -> ChatMessage | None:
        return ChatMessage.model_validate(self.data) if self.type == "message" else None


async def _parse_sse(lines: AsyncIterator[str]) -> AsyncIterator[ServerEvent]:
    fields: dict[str, str] = {}
    async for line in lines:
        if line == "":
            if "data" in fields:
                ident = fields.get("id")
                yield ServerEvent(
                    int(ident) if ident and ident.isdigit() else None,
                    fields.get("event", "message"),
                    json.loads(fields["data"]),
                )
            fields = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            joined = name == "data" and "data" in fields
            fields[name] = f"{fields[name]}\n{value}" if joined else value


class SkillrtClient:
    """An async client of ``skillrt serve``; one ``session_id`` names its chat session."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8765",
        *,
        token: str | None = None,
        session_id: str | None = None,
        timeout: float = 600.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        token = token or os.environ.get("SKILLRT_SERVE__TOKEN")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.session_id = session_id
        self._http = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=10.0),
            transport=transport,
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    # --- plumbing ------------------------------------------------------------------------

    @staticmethod
    def _raise(response: httpx.Response) -> None:
        if response.is_success:
            return
        try:
            body = response.json()
        except ValueError:
            body = {}
        raise ServerError(
            response.status_code,
            str(body.get("code", "http-error")),
            str(body.get("detail", response.text[:500])),
        )

    async def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        response = await self._http.request(method, path, **kwargs)
        self._raise(response)
        return response.json()

    def _body(self, body: dict[str, Any]) -> dict[str, Any]:
        if self.session_id is not None:
            body.setdefault("session_id", self.session_id)
        return body

    async def _stream(
        self,
        method: str,
        path: str,
        *,
        headers: dict[str, str] | None = None,
        cancel_on_disconnect: bool = False,
        **kwargs: Any,
    ) -> AsyncIterator[ServerEvent]:
        params = {"cancel_on_disconnect": "true"} if cancel_on_disconnect else None
        sse = {"Accept": "text/event-stream", **(headers or {})}
        async with self._http.stream(
            method, path, headers=sse, params=params, timeout=None, **kwargs
        ) as response:
            if not response.is_success:
                await response.aread()
                self._raise(response)
            async for event in _parse_sse(response.aiter_lines()):
                yield event

    # --- the runtime's calls ---------------------------------------------------------------

    async def process_input(self, text: str, context: dict[str, Any] | None = None) -> ChatMessage:
        body = self._body({"text": text, "context": context or {}})
        return ChatMessage.model_validate(await self._request("POST", "/v1/input", json=body))

    def stream_input(
        self,
        text: str,
        context: dict[str, Any] | None = None,
        *,
        cancel_on_disconnect: bool = False,
    ) -> AsyncIterator[ServerEvent]:
        """The task's events as they happen; the last one is the ``message``."""
        body = self._body({"text": text, "context": context or {}})
        return self._stream(
            "POST", "/v1/input", json=body, cancel_on_disconnect=cancel_on_disconnect
        )

    async def run_skill(
        self, name: str, params: dict[str, Any], context: dict[str, Any] | None = None
    ) -> ChatMessage:
        body = self._body({"params": params, "context": context or {}})
        try:
            data = await self._request("POST", f"/v1/skills/{name}/run", json=body)
        except ServerError as exc:
            if exc.code == "unknown-skill":
                raise UnknownSkill(name, []) from exc
            raise
        return ChatMessage.model_validate(data)

    def stream_skill(
        self,
        name: str,
        params: dict[str, Any],
        context: dict[str, Any] | None = None,
        *,
        cancel_on_disconnect: bool = False,
    ) -> AsyncIterator[ServerEvent]:
        body = self._body({"params": params, "context": context or {}})
        return self._stream(
            "POST",
            f"/v1/skills/{name}/run",
            json=body,
            cancel_on_disconnect=cancel_on_disconnect,
        )

    async def skills(self) -> list[dict[str, Any]]:
        """Every skill: name, description, intents, params_schema."""
        result: list[dict[str, Any]] = await self._request("GET", "/v1/skills")
        return result

    async def info(self) -> dict[str, Any]:
        result: dict[str, Any] = await self._request("GET", "/v1/info")
        return result

    async def list_tasks(self, *, session_id: str | None = None) -> list[TaskSummary]:
        params = {"session_id": session_id} if session_id else None
        data = await self._request("GET", "/v1/tasks", params=params)
        return [TaskSummary.model_validate(t) for t in data]

    async def get_resumable_tasks(self) -> list[TaskSummary]:
        return [t for t in await self.list_tasks() if t.state in ("PAUSED", "ERROR")]

    async def get_task(self, task_id: str) -> TaskSummary | None:
        try:
            return TaskSummary.model_validate(await self._request("GET", f"/v1/tasks/{task_id}"))
        except ServerError as exc:
            if exc.status in (404, 409):  # 409: another process runs it (``get_task``: None)
                return None
            raise

    async def _control(self, method: str, path: str) -> bool:
        try:
            data = await self._request(method, path)
        except ServerError as exc:
            if exc.status in (404, 409):
                return False
            raise
        return bool(data.get("ok"))

    async def abort(self, task_id: str) -> bool:
        return await self._control("POST", f"/v1/tasks/{task_id}/abort")

    async def pause(self, task_id: str) -> bool:
        return await self._control("POST", f"/v1/tasks/{task_id}/pause")

    async def abandon_task(self, task_id: str) -> bool:
        return await self._control("DELETE", f"/v1/tasks/{task_id}")

    async def resume_task(self, task_id: str) -> ChatMessage | None:
        body = {"session_id": self.session_id} if self.session_id else None
        try:
            data = await self._request("POST", f"/v1/tasks/{task_id}/resume", json=body)
        except ServerError as exc:
            if exc.status in (404, 409):
                return None
            raise
        return ChatMessage.model_validate(data)

    async def answer_task(self, task_id: str, text: str) -> ChatMessage | None:
        try:
            data = await self._request("POST", f"/v1/tasks/{task_id}/answer", json={"text": text})
        except ServerError as exc:
            if exc.status in (404, 409):
                return None
            raise
        return ChatMessage.model_validate(data)

    def events(
        self, task_id: str, *, last_event_id: int | None = None
    ) -> AsyncIterator[ServerEvent]:
        """A task's events after ``last_event_id``, then live ones, ending with its reply."""
        headers = {"Last-Event-ID": str(last_event_id)} if last_event_id else None
        return self._stream("GET", f"/v1/tasks/{task_id}/events", headers=headers)
