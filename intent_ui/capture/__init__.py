"""Intent capture for Python MCP servers built with the official `mcp` package.

    from intent_ui.capture import JsonlSink, with_intent_capture

    mcp = FastMCP("bookings")            # or a low-level mcp.server.lowlevel.Server
    with_intent_capture(mcp, intent=True, sink=JsonlSink("capture.jsonl"))

Each eligible tool then advertises a `context` string ("why are you calling this
tool?"); the model's answer is read and removed before the tool's own validation,
PII-stripped, clamped to 500 characters and recorded with the call. Imports no Reflex.
"""

from __future__ import annotations

from intent_ui.capture.events import CallEvent, CallStatus
from intent_ui.capture.options import (
    CONFIG_ENV,
    SWITCH_ENV,
    CaptureConfigError,
    IntentOptions,
)
from intent_ui.capture.sinks import BatchingSink, HttpSink, JsonlSink, Sink, StoreSink
from intent_ui.capture.wrapper import with_intent_capture

__all__ = [
    "CONFIG_ENV",
    "SWITCH_ENV",
    "BatchingSink",
    "CallEvent",
    "CallStatus",
    "CaptureConfigError",
    "HttpSink",
    "IntentOptions",
    "JsonlSink",
    "Sink",
    "StoreSink",
    "with_intent_capture",
]
