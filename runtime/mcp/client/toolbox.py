"""``McpToolBox``: the configured MCP servers behind ``ctx.tools``, and their tools as skills.

``open_toolbox(config)`` connects to every server whose tools become skills and lists them; a
server that cannot be reached is logged and skipped (its tools come back at the next start;
``ctx.tools.call`` tries it again when called). What a tool does decides whether it is
guarded: a tool that is not read-only, or that reaches the open world, by its annotations
(MCP's defaults when it has none: it may write, and it reaches the world), unless
``read_only`` in its server's section says otherwise. Under ``llm.router_trust = "low"`` a
guarded tool asks the user first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp import types

from skillrt.exceptions import UserError
from skillrt.mcp.client.connection import ServerConnection
from skillrt.settings import McpConfig
from skillrt.skill.definition import Skill
from skillrt.skill.intent import Effect
from skillrt.skill.tools import MAX_OUTPUT_CHARS, ToolOutput

__all__ = ["McpToolBox", "output_of", "tool_effect"]


def tool_effect(tool: types.Tool | None, read_only: bool = False) -> Effect:
    """``read`` (neither writes nor goes online), ``web`` (reads, online) or ``write``."""
    if read_only:
        return "read"
    notes = tool.annotations if tool is not None else None
    if notes is None or notes.readOnlyHint is not True:
        return "write"
    return "read" if notes.openWorldHint is False else "web"


def output_of(
    server: str, tool: str, args: dict[str, Any], result: types.CallToolResult
) -> ToolOutput:
    """A tool's result as the ``ToolOutput`` a step journals: its text blocks (other blocks
    named), its structured content, cut to ``MAX_OUTPUT_CHARS``."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.EmbeddedResource):
            inner = block.resource
            text = getattr(inner, "text", None)
            parts.append(text if isinstance(text, str) else f"[resource {inner.uri}]")
        elif isinstance(block, types.ResourceLink):
            parts.append(f"[resource {block.uri}]")
        else:
            parts.append(f"[{block.type}]")
    text = "\n".join(parts)
    if len(text) > MAX_OUTPUT_CHARS:
        text = text[:MAX_OUTPUT_CHARS] + "\n[... cut]"
    return ToolOutput(
        server=server,
        tool=tool,
        text=text,
        structured=result.structuredContent,
        is_error=bool(result.isError),
        arguments=args,
    )


class McpToolBox:
    """The connections to the configured servers (implements ``skillrt.skill.tools.ToolBox``)."""

    def __init__(
        self,
        config: McpConfig,
        *,
        trust: Callable[[], str] = lambda: "high",
        log_dir: Path | None = None,
    ) -> None:
        self.config = config
        self.trust = trust
        self.connections = {
            name: ServerConnection(name, cfg, log_dir / f"mcp-{name}.log" if log_dir else None)
            for name, cfg in config.servers.items()
        }
        self.problems: dict[str, str] = {}  # server -> why it could not be reached at start

    def servers(self) -> list[str]:
        return list(self.connections)

    def _connection(self, server: str) -> ServerConnection:
        found = self.connections.get(server)
        if found is None:
            known = ", ".join(self.connections) or "none"
            raise UserError(
                f"no MCP server {server!r} (configured: {known}); add [mcp.servers.{server}]"
            )
        return found

    def allowed(self, server: str, tool: str) -> bool:
        allowed = self._connection(server).config.tools
        return allowed is None or tool in allowed

    def effect(self, server: str, tool: str) -> Effect:
        conn = self._connection(server)
        return tool_effect(conn.tools.get(tool), tool in conn.config.read_only)

    def asks_first(self, server: str, tool: str) -> bool:
        return self.trust() == "low" and self.effect(server, tool) != "read"

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> ToolOutput:
        conn = self._connection(server)
        if not self.allowed(server, tool):
            raise UserError(
                f"the tool {tool!r} of {server!r} is not allowed (allowed:"
                f" {', '.join(conn.config.tools or [])}; see [mcp.servers.{server}] tools)"
            )
        result = await conn.call(tool, arguments)
        return output_of(server, tool, arguments, result)

    async def list_tools(self, server: str) -> list[types.Tool]:
        """The allowed tools of ``server``."""
        conn = self._connection(server)
        return [t for t in await conn.list_tools() if self.allowed(server, t.name)]

    async def start(self, logger: Any = None) -> list[Skill[Any]]:
        """Reach every server whose tools become skills; their skills, in config order."""
        from skillrt.mcp.client.skills import tool_skill

        names = [n for n, c in self.config.servers.items() if c.skills]
        found = await asyncio.gather(*(self.list_tools(n) for n in names), return_exceptions=True)
        skills: list[Skill[Any]] = []
        for name, tools in zip(names, found, strict=True):
            if isinstance(tools, BaseException):
                self.problems[name] = str(tools)
                if logger is not None:
                    logger.warning("agent.mcp.unavailable", server=name, error=str(tools))
                continue
            cfg = self.config.servers[name]
            skills.extend(
                tool_skill(self, name, tool, cfg.examples.get(tool.name, [])) for tool in tools
            )
        return skills

    async def aclose(self) -> None:
        await asyncio.gather(*(c.close() for c in self.connections.values()))
