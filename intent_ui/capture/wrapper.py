"""`with_intent_capture`: the protocol-layer hook for `mcp` FastMCP and low-level servers.

Both kinds answer requests through the low-level `Server.request_handlers` table
(`FastMCP._mcp_server` is a low-level server). The wrapper swaps that table for one that
wraps the `tools/list` and `tools/call` handlers whenever they are registered, before or
after the wrap:

- `tools/list`: each eligible tool's `inputSchema` gets `context` (`advertise_context`);
  the handler's own `Tool` objects are copied, never changed, so the low-level server's
  tool cache keeps the tool's real schema.
- `tools/call`: `context` is read and removed from the arguments (`capture_context`) and
  the handler runs on a new request without it, so the low-level jsonschema check and
  FastMCP's pydantic argument model never see it. The call is timed and one `CallEvent`
  goes to the sink.

Each call's intent lives in that call's own frame, so concurrent calls keep theirs apart.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mcp import types
from mcp.server.fastmcp import FastMCP
from mcp.server.lowlevel import Server

from intent_ui.capture.events import CallEvent, CallStatus
from intent_ui.capture.options import IntentOptions, resolve_intent
from intent_ui.capture.sinks import Sink, sink_from_config
from intent_ui.core.capture import (
    IntentContextMode,
    advertise_context,
    capture_context,
)

__all__ = ["with_intent_capture"]

logger = logging.getLogger("intent_ui.capture")

Handler = Callable[[Any], Awaitable[types.ServerResult]]
# Bound, not constrained: a caller holding either kind of server (typed as the union) may
# wrap it too, and gets back the type it passed.
ServerT = TypeVar("ServerT", bound=FastMCP | Server)


@dataclass
class _Capture:
    """The live settings of one wrapped server, and what its tool list said last."""

    options: IntentOptions | None
    sink: Sink | None
    server_name: str | None
    modes: dict[str, IntentContextMode] = field(default_factory=dict)
    downgrades_logged: set[str] = field(default_factory=set)

    def advertise(self, tool: types.Tool) -> types.Tool:
        mode: IntentContextMode = "none"
        schema: Mapping[str, Any] = tool.inputSchema
        if self.options is not None and tool.name not in self.options.exclude:
            schema, mode = advertise_context(
                tool.inputSchema,
                required=self.options.required,
                meta=tool.meta,
                description=self.options.description,
            )
            if mode == "optional" and self.options.required:
                self._log_downgrade(tool.name)
        self.modes[tool.name] = mode
        if schema is tool.inputSchema:
            return tool
        return tool.model_copy(update={"inputSchema": dict(schema)})

    def _log_downgrade(self, name: str) -> None:
        if name in self.downgrades_logged:
            return
        self.downgrades_logged.add(name)
        logger.warning(
            "[intent_ui] Intent context advertised as OPTIONAL for tool %r: its _meta marks it "
            "widget-invoked, and a widget cannot send `context`. Declare "
            'ui.visibility: ["model"] on it to keep context required.',
            name,
        )

    def emit(self, event: CallEvent) -> None:
        if self.sink is None:
            return
        try:
            self.sink.emit(event)
        except Exception:
            # A sink is analytics: its failure must never become the tool call's failure.
            logger.exception("[intent_ui] The intent capture sink failed to take a call event")


def _wrap_list(handler: Handler, capture: _Capture) -> Handler:
    async def list_tools(req: Any) -> types.ServerResult:
        result = await handler(req)
        listed = result.root
        if capture.options is None or not isinstance(listed, types.ListToolsResult):
            for tool in getattr(listed, "tools", ()):
                capture.modes[tool.name] = "none"
            return result
        tools = [capture.advertise(tool) for tool in listed.tools]
        return types.ServerResult(listed.model_copy(update={"tools": tools}))

    list_tools.__intent_capture__ = True  # type: ignore[attr-defined]
    return list_tools


def _status(result: types.ServerResult) -> CallStatus:
    root = result.root
    return "error" if isinstance(root, types.CallToolResult) and root.isError else "ok"


def _wrap_call(handler: Handler, capture: _Capture, handlers: dict[type, Handler]) -> Handler:
    async def call_tool(req: types.CallToolRequest) -> types.ServerResult:
        name = req.params.name
        if capture.options is not None and name not in capture.modes:
            # Called before any tools/list in this process: list once to learn its schema.
            lister = handlers.get(types.ListToolsRequest)
            if lister is not None:
                try:
                    await lister(None)
                except Exception:
                    logger.exception("[intent_ui] Listing tools to learn %r failed", name)
        mode = capture.modes.get(name, "none")
        fallback = capture.options.fallback if capture.options is not None else None
        arguments, captured = capture_context(
            req.params.arguments, mode, fallback=fallback, tool_name=name
        )
        if arguments is not req.params.arguments:
            params = req.params.model_copy(update={"arguments": dict(arguments or {})})
            req = req.model_copy(update={"params": params})
        timestamp = time.time()
        started = time.perf_counter()
        status: CallStatus = "error"
        try:
            result = await handler(req)
            status = _status(result)
            return result
        finally:
            capture.emit(
                CallEvent.of(
                    name,
                    mode,
                    captured,
                    status=status,
                    duration_ms=(time.perf_counter() - started) * 1000,
                    timestamp=timestamp,
                    server=capture.server_name,
                )
            )

    call_tool.__intent_capture__ = True  # type: ignore[attr-defined]
    return call_tool


class _CaptureHandlers(dict[type, Handler]):
    """A request-handler table that wraps the tool handlers as they are registered."""

    def __init__(self, handlers: Mapping[type, Handler], capture: _Capture) -> None:
        super().__init__()
        self.capture = capture
        for key, handler in handlers.items():
            self[key] = handler

    def __setitem__(self, key: type, handler: Handler) -> None:
        if not getattr(handler, "__intent_capture__", False):
            if key is types.ListToolsRequest:
                handler = _wrap_list(handler, self.capture)
            elif key is types.CallToolRequest:
                handler = _wrap_call(handler, self.capture, self)
        super().__setitem__(key, handler)


def _lowlevel(server: FastMCP | Server) -> Server:
    if isinstance(server, FastMCP):
        return server._mcp_server
    if isinstance(server, Server):
        return server
    raise TypeError(
        f"with_intent_capture() wraps an mcp FastMCP or low-level Server, not "
        f"{type(server).__name__}. Pass the server object you call .run() on."
    )


def with_intent_capture(
    server: ServerT,
    intent: bool | IntentOptions | None = None,
    sink: Sink | None = None,
) -> ServerT:
    """Switch intent capture on for `server` in place and return it.

    `intent`: True, False or `IntentOptions(...)`; None (the default) leaves the choice to
    `INTENT_CAPTURE` and the `INTENT_CAPTURE_CONFIG` file, and is off when neither says on.
    `sink` receives one `CallEvent` per tool call (also when capture is off, with
    `intent_context` `none`); None takes the config file's sink, if any. Wrapping a server
    again replaces its settings; the handlers are never wrapped twice.
    """
    lowlevel = _lowlevel(server)
    resolved = resolve_intent(intent)
    chosen = sink if sink is not None else sink_from_config(resolved.sink)
    handlers = lowlevel.request_handlers
    if isinstance(handlers, _CaptureHandlers):
        handlers.capture.options = resolved.options
        handlers.capture.sink = chosen
        handlers.capture.modes.clear()
        return server
    capture = _Capture(resolved.options, chosen, lowlevel.name)
    table = _CaptureHandlers(handlers, capture)
    lowlevel.request_handlers = table
    experimental = getattr(lowlevel, "_experimental_handlers", None)
    if experimental is not None:
        # Task support keeps its own reference to the table to register handlers into.
        experimental._request_handlers = table
    return server
