"""The MCP client: the servers of ``[mcp.servers.NAME]`` in skillrt.toml, their tools as
skills, and ``ctx.tools.call(server, tool, args)`` (extra ``mcp``).

``open_toolbox(config.mcp, trust=...)`` gives the ``McpToolBox`` behind ``ctx.tools`` and the
skills of the tools it reached (``skills.py``); ``AgentRuntime.initialize`` calls it when any
server is configured. ``check_servers`` is what ``skillrt doctor`` shows.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillrt.mcp import require_mcp
from skillrt.settings import McpConfig

if TYPE_CHECKING:
    from skillrt.mcp.client.toolbox import McpToolBox
    from skillrt.skill.definition import Skill

__all__ = ["check_servers", "open_toolbox"]


async def open_toolbox(
    config: McpConfig,
    *,
    trust: Callable[[], str],
    logger: Any = None,
    log_dir: Path | None = None,
) -> tuple[McpToolBox, list[Skill[Any]]]:
    """The toolbox for ``[mcp.servers]`` and the skills of the tools it reached (a server it
    could not reach is logged and left out until the next start). A stdio server's stderr
    goes to ``log_dir/mcp-NAME.log``."""
    require_mcp("[mcp.servers] in the config")
    from skillrt.mcp.client.toolbox import McpToolBox

    box = McpToolBox(config, trust=trust, log_dir=log_dir)
    return box, await box.start(logger)


async def check_servers(config: McpConfig) -> list[tuple[str, bool, str]]:
    """Each configured server: (name, reachable, what was found or why not)."""
    require_mcp("[mcp.servers] in the config")
    from skillrt.mcp.client.toolbox import McpToolBox

    box = McpToolBox(config)
    found: list[tuple[str, bool, str]] = []
    try:
        for name in box.servers():
            cfg = config.servers[name]
            where = cfg.url or " ".join([cfg.command or "", *cfg.args])
            try:
                tools = await box.list_tools(name)
            except Exception as exc:
                found.append((name, False, f"{where}: {exc}"))
                continue
            shown = ", ".join(t.name for t in tools[:8]) + (" …" if len(tools) > 8 else "")
            found.append((name, True, f"{where}: {len(tools)} tools ({shown})"))
    finally:
        await box.aclose()
    return found
