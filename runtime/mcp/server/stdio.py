"""``skillrt mcp``: the MCP server on stdin and stdout, for editors and agent hosts.

Nothing else may write to stdout: it carries the protocol. Logs go to the log file or stderr.
"""

from __future__ import annotations

import asyncio

from skillrt.agent import AgentRuntime
from skillrt.mcp.server.server import build_server

__all__ = ["serve_stdio"]


async def _open(runtime: AgentRuntime) -> None:
    """Open the runtime, then build routing's tables in a thread (``warm_up``) while the
    editor has yet to ask: its first request is not the one that waits for them."""
    await runtime.initialize()
    runtime.warm_up()


def _seen(opening: asyncio.Future[None]) -> None:
    if not opening.cancelled():
        opening.exception()  # a handler that needs the runtime meets the error again


async def serve_stdio(runtime: AgentRuntime) -> None:
    """Serve ``runtime`` over stdio until the client closes stdin; then close the runtime
    (running tasks stay resumable, and an MCP task among them is resumed when asked for).

    The runtime opens (the model, the stores, the MCP servers it uses) while the client
    initialises: a slow model to load does not keep the handshake waiting."""
    from mcp.server.stdio import stdio_server

    mcp = build_server(runtime)
    opening = asyncio.ensure_future(_open(runtime))
    opening.add_done_callback(_seen)
    try:
        async with stdio_server() as (read, write):
            options = mcp.server.create_initialization_options()
            await mcp.server.run(read, write, options)
    finally:
        if not opening.done():
            await asyncio.wait([opening])
        await runtime.close()
