"""The MCP server: skillrt's skills as tools for editors and agents (extra ``mcp``).

``build_server(runtime)`` gives the server; ``serve_stdio(runtime)`` runs it as ``skillrt mcp``
does; ``McpEndpoint(runtime)`` is the streamable HTTP endpoint ``skillrt serve`` mounts at
``/mcp``. See docs/mcp.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skillrt.mcp import require_mcp

if TYPE_CHECKING:
    from skillrt.mcp.server.http import McpEndpoint
    from skillrt.mcp.server.server import McpServer, build_server
    from skillrt.mcp.server.stdio import serve_stdio

__all__ = ["McpEndpoint", "McpServer", "build_server", "serve_stdio"]

_WHERE = {
    "McpEndpoint": "skillrt.mcp.server.http",
    "McpServer": "skillrt.mcp.server.server",
    "build_server": "skillrt.mcp.server.server",
    "serve_stdio": "skillrt.mcp.server.stdio",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(name)
    require_mcp("skillrt's MCP server")
    import importlib

    return getattr(importlib.import_module(module), name)
