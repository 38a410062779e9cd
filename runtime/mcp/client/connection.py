"""One MCP server skillrt uses: started (stdio) or reached (streamable HTTP) on first use, and
held open by a task of its own, since the SDK's transports must close in the task that opened
them. A connection that breaks (the program died, the network dropped) is opened again by the
next call.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from mcp import ClientSession, types

from skillrt.exceptions import ProviderUnavailable
from skillrt.settings import McpServerConfig

__all__ = ["ServerConnection"]


class ServerConnection:
    """The session with one configured server (``[mcp.servers.NAME]``)."""

    def __init__(self, name: str, config: McpServerConfig, errlog: Path | None = None) -> None:
        self.name = name
        self.config = config
        self.errlog = errlog  # where a stdio server's stderr goes (None: this stderr)
        self._session: ClientSession | None = None
        self._holder: asyncio.Task[None] | None = None
        self._closing = asyncio.Event()
        self._lock = asyncio.Lock()
        self.tools: dict[str, types.Tool] = {}  # as last listed

    def _unavailable(self, why: object) -> ProviderUnavailable:
        where = self.config.url or " ".join([self.config.command or "", *self.config.args])
        return ProviderUnavailable(
            f"MCP server {self.name!r} ({where.strip()}) is unavailable: {why}",
            provider=f"mcp:{self.name}",
        )

    @contextlib.asynccontextmanager
    async def _open(self) -> AsyncIterator[ClientSession]:
        cfg = self.config
        timeout = timedelta(seconds=cfg.timeout_s)
        async with contextlib.AsyncExitStack() as stack:
            if cfg.command is not None:
                from mcp import StdioServerParameters
                from mcp.client.stdio import stdio_client

                params = StdioServerParameters(
                    command=cfg.command, args=cfg.args, env=cfg.env or None, cwd=cfg.cwd
                )
                errlog: Any = sys.stderr
                if self.errlog is not None:
                    self.errlog.parent.mkdir(parents=True, exist_ok=True)
                    errlog = stack.enter_context(self.errlog.open("a", encoding="utf-8"))
                read, write = await stack.enter_async_context(stdio_client(params, errlog))
            else:
                import httpx
                from mcp.client.streamable_http import streamable_http_client

                http = await stack.enter_async_context(
                    httpx.AsyncClient(
                        headers=cfg.headers, timeout=httpx.Timeout(cfg.timeout_s, read=None)
                    )
                )
                url = cfg.url or ""
                read, write, _ = await stack.enter_async_context(
                    streamable_http_client(url, http_client=http)
                )
            session = await stack.enter_async_context(
                ClientSession(read, write, read_timeout_seconds=timeout)
            )
            await session.initialize()
            yield session

    async def _hold(self, ready: asyncio.Future[ClientSession]) -> None:
        try:
            async with self._open() as session:
                self._session = session
                ready.set_result(session)
                await self._closing.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else self._unavailable(exc))
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self._session = None

    async def session(self) -> ClientSession:
        """The open session, opened now if need be (``ProviderUnavailable`` if it cannot be)."""
        async with self._lock:
            holder = self._holder
            if self._session is not None and holder is not None and not holder.done():
                return self._session
            self._closing = asyncio.Event()
            ready: asyncio.Future[ClientSession] = asyncio.get_running_loop().create_future()
            self._holder = asyncio.ensure_future(self._hold(ready))
            try:
                return await asyncio.wait_for(asyncio.shield(ready), self.config.timeout_s)
            except TimeoutError:
                await self.close()
                raise self._unavailable(f"no answer in {self.config.timeout_s:g} s") from None
            except ProviderUnavailable:
                raise
            except Exception as exc:
                await self.close()
                raise self._unavailable(_reason(exc)) from exc

    async def list_tools(self) -> list[types.Tool]:
        """Every tool the server offers (all pages), remembered for ``tools``."""
        session = await self.session()
        found: list[types.Tool] = []
        cursor: str | None = None
        try:
            while True:
                page = await session.list_tools(
                    params=types.PaginatedRequestParams(cursor=cursor) if cursor else None
                )
                found.extend(page.tools)
                cursor = page.nextCursor
                if not cursor:
                    break
        except Exception as exc:
            await self.close()
            raise self._unavailable(_reason(exc)) from exc
        self.tools = {t.name: t for t in found}
        return found

    async def call(self, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """Call ``tool``. A protocol error (an unknown tool, bad arguments) comes back as an
        error result; a broken connection raises ``ProviderUnavailable`` (the task can be
        resumed once the server is back)."""
        from mcp.shared.exceptions import McpError

        session = await self.session()
        request_id = getattr(session, "_request_id", None)  # the id this call will have
        try:
            return await session.call_tool(
                tool, arguments, read_timeout_seconds=timedelta(seconds=self.config.timeout_s)
            )
        except asyncio.CancelledError:  # the task was aborted: tell the server to stop too
            if isinstance(request_id, int):
                await asyncio.shield(self._cancelled(session, request_id))
            raise
        except McpError as exc:
            if exc.error.code == types.CONNECTION_CLOSED:
                await self.close()
                raise self._unavailable(exc.error.message) from exc
            text = f"error {exc.error.code}: {exc.error.message}"
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=text)], isError=True
            )
        except (OSError, EOFError, asyncio.IncompleteReadError) as exc:
            await self.close()
            raise self._unavailable(_reason(exc)) from exc
        except Exception as exc:
            if type(exc).__module__.startswith("anyio"):  # the streams closed under it
                await self.close()
                raise self._unavailable(_reason(exc)) from exc
            raise

    @staticmethod
    async def _cancelled(session: ClientSession, request_id: int) -> None:
        notice = types.CancelledNotification(
            params=types.CancelledNotificationParams(requestId=request_id, reason="task aborted")
        )
        with contextlib.suppress(Exception):
            await asyncio.wait_for(session.send_notification(types.ClientNotification(notice)), 5)

    async def close(self) -> None:
        """Close the session (a stdio server's process ends)."""
        holder, self._holder = self._holder, None
        self._closing.set()
        if holder is not None and not holder.done():
            try:
                await asyncio.wait_for(asyncio.shield(holder), 10)
            except (TimeoutError, Exception):
                holder.cancel()
                with contextlib.suppress(BaseException):
                    await holder
        self._session = None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _reason(exc.exceptions[0])
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
