"""A wrapped capture test server as a process: `python tests/support/capture_server.py KIND`.

KIND is `fastmcp` or `lowlevel` (see `capture_servers.py`). The wrap passes no options, so
capture is switched on and the sink chosen by the environment, as a deployed server would
be: `INTENT_CAPTURE=1` and `INTENT_CAPTURE_CONFIG=<file naming a jsonl sink>`. Serves
stdio, or streamable HTTP at http://127.0.0.1:PORT/mcp with `--http PORT`.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
from mcp.server.fastmcp import FastMCP
from mcp.server.lowlevel import Server

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from intent_ui.capture import with_intent_capture
from tests.support.capture_servers import SERVER_KINDS, build_server


async def _serve_lowlevel_stdio(server: Server) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def _serve_lowlevel_http(server: Server, port: int) -> None:
    import contextlib

    import uvicorn
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.routing import Mount

    manager = StreamableHTTPSessionManager(app=server)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    app = Starlette(routes=[Mount("/mcp", app=manager.handle_request)], lifespan=lifespan)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def main(argv: list[str]) -> None:
    kind = argv[0]
    if kind not in SERVER_KINDS:
        raise SystemExit(f"usage: capture_server.py {{{'|'.join(SERVER_KINDS)}}} [--http PORT]")
    server = with_intent_capture(build_server(kind))
    port = int(argv[2]) if len(argv) == 3 and argv[1] == "--http" else None
    if isinstance(server, FastMCP):
        if port is not None:
            server.settings.host = "127.0.0.1"
            server.settings.port = port
            server.run("streamable-http")
        else:
            server.run("stdio")
    elif port is not None:
        _serve_lowlevel_http(server, port)
    else:
        anyio.run(_serve_lowlevel_stdio, server)


if __name__ == "__main__":
    main(sys.argv[1:])
