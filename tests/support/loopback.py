"""Loopback servers a test starts itself: a free port, an MCP server script over
streamable HTTP, and a site answering every GET with one body."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["LOCAL", "free_port", "mcp_over_http", "serve_get"]

LOCAL = "127.0.0.1"


def free_port() -> int:
    """A loopback port nothing listens on now: connecting to it is refused, and a server
    may listen on it later."""
    with socket.socket() as probe:
        probe.bind((LOCAL, 0))
        return int(probe.getsockname()[1])


async def _listening(port: int, attempts: int = 200) -> None:
    """Returns once the port accepts (bounded: 200 tries, about 10 s)."""
    for _ in range(attempts):
        try:
            with socket.create_connection((LOCAL, port), timeout=0.2):
                return
        except OSError:
            await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def mcp_over_http(script: Sequence[str], env: Mapping[str, str]) -> AsyncIterator[str]:
    """Runs `python *script --http PORT` (an MCP server script) on a free port and yields
    its streamable-HTTP URL once the port accepts; the process ends with the block."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, *script, "--http", str(port)],
        env=dict(env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        await _listening(port)
        yield f"http://{LOCAL}:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


@contextlib.contextmanager
def serve_get(
    body: bytes, content_type: str = "application/json", seen: list[str] | None = None
) -> Iterator[str]:
    """A site answering every GET with `body`; yields its address (`http://127.0.0.1:PORT`,
    no trailing slash). Each path asked for is appended to `seen` when given."""

    class Serve(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if seen is not None:
                seen.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            """Quiet: the test's output is not the server's log."""

    server = ThreadingHTTPServer((LOCAL, 0), Serve)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{LOCAL}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
