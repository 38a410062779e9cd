"""``skillrt mcp``: the MCP server on stdin and stdout, for editors and agent hosts.

Nothing else may write to stdout: it carries the protocol. Logs go to the log file or stderr.
"""

from __future__ import annotations

from skillrt.agent import AgentRuntime
from skillrt.mcp.server.server import build_server

__all__ = ["serve_stdio"]


async def serve_stdio(runtime: AgentRuntime) -> None:
    """Serve ``runtime`` over stdio until the client closes stdin; then close the runtime
    (running tasks stay resumable, and an MCP task among them is resumed when asked for)."""
    from mcp.server.stdio import stdio_server

    mcp = build_server(runtime)
    try:
        await runtime.initialize()
        async with stdio_server() as (read, write):
            options = mcp.server.create_initialization_options()
            await mcp.server.run(read, write, options)
    finally:
        await runtime.close()
