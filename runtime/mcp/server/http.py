"""The MCP server over streamable HTTP, as an ASGI endpoint ``skillrt serve`` mounts at ``/mcp``.

The server puts its own guards in front (the Host allow-list, the bearer token, the body
limit), so the SDK's DNS-rebinding check is not repeated here. ``start`` and ``stop`` run the
SDK's session manager; call them from the same task (the app's lifespan).
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from skillrt.agent import AgentRuntime
from skillrt.mcp.server.server import McpServer, build_server

__all__ = ["McpEndpoint"]


class McpEndpoint:
    """An ASGI app serving MCP for ``runtime``."""

    def __init__(self, runtime: AgentRuntime) -> None:
        self.mcp: McpServer = build_server(runtime)
        self.manager = StreamableHTTPSessionManager(
            self.mcp.server,
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        self._stack: AsyncExitStack | None = None

    async def start(self) -> None:
        stack = AsyncExitStack()
        await stack.enter_async_context(self.manager.run())
        self._stack = stack

    async def stop(self) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await self.manager.handle_request(scope, receive, send)
