"""The MCP client: the servers of ``[mcp.servers.NAME]`` in skillrt.toml, their tools as
skills, and ``ctx.tools.call(server, tool, args)`` (extra ``mcp``)."""
