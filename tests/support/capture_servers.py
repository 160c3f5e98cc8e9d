"""The same small MCP server built two ways, for the intent capture tests.

`build_server("fastmcp")` uses FastMCP decorators; `build_server("lowlevel")` registers
handlers on a low-level `Server` with strict schemas (`additionalProperties: false`) and
the SDK's jsonschema input validation on, so a `context` that leaked past the capture
layer would fail the call. Every tool answers with the JSON of the arguments it received.

Tools: `book_car(city, days)`; `annotate(text, context)` owns a `context` parameter;
`refresh_map(area)` is widget-accessible; `send_message(to, body)`; `explode()` raises;
`meet(tag)` returns only once two `meet` calls are in flight (for concurrency tests).
"""

from __future__ import annotations

import json
from typing import Any, Literal

import anyio
from mcp import types
from mcp.server.fastmcp import FastMCP
from mcp.server.lowlevel import Server

ServerKind = Literal["fastmcp", "lowlevel"]
SERVER_KINDS: tuple[ServerKind, ...] = ("fastmcp", "lowlevel")
WIDGET_META: dict[str, Any] = {"openai/widgetAccessible": True}


class _Rendezvous:
    """Lets `meet` calls return only when two of them are running at once."""

    def __init__(self) -> None:
        self.arrived = 0
        self.both = anyio.Event()

    async def meet(self) -> None:
        self.arrived += 1
        if self.arrived % 2 == 0:
            self.both.set()
        await self.both.wait()


def _echo(tool: str, args: dict[str, Any]) -> str:
    return json.dumps({"tool": tool, "args": args}, sort_keys=True)


def build_fastmcp(name: str = "capture-test") -> FastMCP:
    server = FastMCP(name, log_level="WARNING")
    rendezvous = _Rendezvous()

    @server.tool()
    def book_car(city: str, days: int) -> str:
        """Book a rental car."""
        return _echo("book_car", {"city": city, "days": days})

    @server.tool()
    def annotate(text: str, context: str) -> str:
        """Annotate text; `context` is this tool's own parameter."""
        return _echo("annotate", {"text": text, "context": context})

    @server.tool(meta=WIDGET_META)
    def refresh_map(area: str) -> str:
        """Refresh the map widget."""
        return _echo("refresh_map", {"area": area})

    @server.tool()
    def send_message(to: str, body: str) -> str:
        """Send a support message."""
        return _echo("send_message", {"to": to, "body": body})

    @server.tool()
    def explode() -> str:
        """Always fails."""
        raise ValueError("boom")

    @server.tool()
    async def meet(tag: str) -> str:
        """Returns once two meet calls are in flight."""
        await rendezvous.meet()
        return _echo("meet", {"tag": tag})

    return server


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


_STRING = {"type": "string"}
_LOWLEVEL_TOOLS = [
    types.Tool(
        name="book_car",
        description="Book a rental car.",
        inputSchema=_object({"city": _STRING, "days": {"type": "integer"}}, ["city", "days"]),
    ),
    types.Tool(
        name="annotate",
        description="Annotate text; `context` is this tool's own parameter.",
        inputSchema=_object({"text": _STRING, "context": _STRING}, ["text", "context"]),
    ),
    types.Tool(
        name="refresh_map",
        description="Refresh the map widget.",
        inputSchema=_object({"area": _STRING}, ["area"]),
        _meta=WIDGET_META,
    ),
    types.Tool(
        name="send_message",
        description="Send a support message.",
        inputSchema=_object({"to": _STRING, "body": _STRING}, ["to", "body"]),
    ),
    types.Tool(name="explode", description="Always fails.", inputSchema=_object({}, [])),
    types.Tool(
        name="meet",
        description="Returns once two meet calls are in flight.",
        inputSchema=_object({"tag": _STRING}, ["tag"]),
    ),
]


def build_lowlevel(name: str = "capture-test") -> Server:
    server: Server = Server(name)
    rendezvous = _Rendezvous()

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return list(_LOWLEVEL_TOOLS)

    @server.call_tool()
    async def call_tool(tool: str, arguments: dict[str, Any]) -> list[types.TextContent]:
        if tool == "explode":
            raise ValueError("boom")
        if tool == "meet":
            await rendezvous.meet()
        return [types.TextContent(type="text", text=_echo(tool, arguments))]

    return server


def build_server(kind: ServerKind, name: str = "capture-test") -> FastMCP | Server:
    return build_fastmcp(name) if kind == "fastmcp" else build_lowlevel(name)


def lowlevel_of(server: FastMCP | Server) -> Server:
    """The low-level server that answers requests (FastMCP keeps one inside)."""
    return server._mcp_server if isinstance(server, FastMCP) else server
