"""skillrt and the Model Context Protocol (extra ``mcp``, on the official ``mcp`` SDK).

Two sides, in two rooms of their own layers:

- ``skillrt.mcp.server``: ``skillrt mcp`` (stdio) and ``/mcp`` in ``skillrt serve`` (streamable
  HTTP): the skills as tools, the posts as resources, a few prompts, long calls as MCP tasks.
- ``skillrt.mcp.client``: the MCP servers of ``[mcp.servers.NAME]`` in skillrt.toml: their
  tools become skills, and a skill calls one with ``ctx.tools.call(server, tool, args)``.
"""

from __future__ import annotations

from skillrt.exceptions import MissingDependency

__all__ = ["require_mcp"]


def require_mcp(feature: str = "MCP") -> None:
    """Fail with the install command when the MCP SDK is missing."""
    try:
        import mcp  # noqa: F401
    except ImportError as exc:
        raise MissingDependency(feature, "mcp") from exc
