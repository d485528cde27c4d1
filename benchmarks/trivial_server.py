"""A trivial MCP server (one tool), the reference for bench_startup.py."""

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("trivial")


@mcp.tool()
def ping() -> str:
    """Answer pong."""
    return "pong"


if __name__ == "__main__":
    mcp.run("stdio")
