"""A real stdio MCP server named `index`, for tests of a tool that fails and recovers.

Its one tool, `lookup`, raises (so the MCP client gets an error result) until the file
named by the `INDEX_READY` environment variable exists: a test creates the file to take
the cause of the failure away, then retries.
"""

from __future__ import annotations

import os

from mcp.server.fastmcp import FastMCP

server = FastMCP("index", log_level="WARNING")


@server.tool()
def lookup(key: str) -> str:
    """Look a key up in the search index."""
    ready = os.environ.get("INDEX_READY", "")
    if not ready or not os.path.exists(ready):
        raise RuntimeError("the search index is still being rebuilt")
    return f"{key}: defined in src/auth.py"


if __name__ == "__main__":
    server.run("stdio")
