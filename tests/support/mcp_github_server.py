"""A real stdio MCP server named `github`, for tests: `python tests/support/mcp_github_server.py`.

Tools: `search_code` (deterministic fake hits), `create_issue` (has a BUSINESS parameter
named `intent` that must reach it untouched), `crash` (kills the process mid-call) and
`slow` (sleeps, or waits for a file the test creates). When `MCP_CALL_LOG` names a file,
every call's arguments are appended to it as one JSON line `{"tool": ..., "args": {...}}`,
so tests can see exactly what the server received.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from mcp.server.fastmcp import FastMCP

server = FastMCP("github", log_level="WARNING")


def _record(tool: str, args: dict[str, object]) -> None:
    path = os.environ.get("MCP_CALL_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(json.dumps({"tool": tool, "args": args}) + "\n")


@server.tool()
def search_code(query: str, repo: str = "acme/app") -> str:
    """Search code in a repository."""
    _record("search_code", {"query": query, "repo": repo})
    return f"3 matches for {query} in {repo}\nsrc/auth.py:12\nsrc/router.py:40\nREADME.md:3"


@server.tool()
def create_issue(title: str, intent: str) -> str:
    """Open an issue. `intent` is the issue's category, e.g. billing_inquiry."""
    _record("create_issue", {"title": title, "intent": intent})
    return f"Created issue '{title}' with intent {intent}"


@server.tool()
def crash(reason: str) -> str:
    """Exit the server process immediately (simulates a crash mid-call)."""
    _record("crash", {"reason": reason})
    print(f"crashing: {reason}", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
async def slow(seconds: float, until: str = "") -> str:
    """Wait, then answer. Given `until` (a file path), answer as soon as that file exists,
    waiting `seconds` at most: a test holds the call running until it creates the file."""
    _record("slow", {"seconds": seconds, **({"until": until} if until else {})})
    if not until:
        await asyncio.sleep(seconds)
    deadline = asyncio.get_running_loop().time() + seconds
    while until and not os.path.exists(until) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.02)
    return f"waited {seconds} s"


if __name__ == "__main__":
    # `--http PORT` serves streamable HTTP at http://127.0.0.1:PORT/mcp instead of stdio.
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.settings.host = "127.0.0.1"
        server.settings.port = int(sys.argv[2])
        server.run("streamable-http")
    else:
        server.run("stdio")
