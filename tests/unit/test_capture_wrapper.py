"""`with_intent_capture` on FastMCP and low-level servers, through the SDK's in-memory client."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import pytest
from mcp import ClientSession, types
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.lowlevel import Server
from mcp.shared.memory import create_connected_server_and_client_session

from intent_ui.capture import CaptureConfigError, IntentOptions, with_intent_capture
from intent_ui.core.capture import CONTEXT_ARG, CONTEXT_DESCRIPTION, INTENT_CAPTURE_LIMIT
from tests.support.capture_servers import lowlevel_of
from tests.support.capture_sink import RecordingSink

MakeServer = Callable[[], FastMCP | Server]


async def _tools(session: ClientSession) -> dict[str, types.Tool]:
    return {tool.name: tool for tool in (await session.list_tools()).tools}


def _received(result: types.CallToolResult) -> dict[str, Any]:
    """The arguments the tool handler saw (every test tool echoes them)."""
    assert not result.isError, result.content
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return json.loads(block.text)["args"]


def _wrapped(
    make_server: MakeServer, sink: RecordingSink, intent: bool | IntentOptions | None = True
) -> FastMCP | Server:
    return with_intent_capture(make_server(), intent=intent, sink=sink)


# --- advertising -----------------------------------------------------------------------


async def test_off_by_default_tools_are_untouched(make_server: MakeServer) -> None:
    plain = make_server()
    async with create_connected_server_and_client_session(plain) as session:
        before = await _tools(session)
    wrapped = with_intent_capture(make_server())
    async with create_connected_server_and_client_session(wrapped) as session:
        after = await _tools(session)
    assert {n: t.inputSchema for n, t in after.items()} == {
        n: t.inputSchema for n, t in before.items()
    }


async def test_context_is_advertised_required_on_every_eligible_tool(
    make_server: MakeServer, sink: RecordingSink
) -> None:
    async with create_connected_server_and_client_session(_wrapped(make_server, sink)) as session:
        tools = await _tools(session)
    for name in ("book_car", "send_message", "explode", "meet"):
        schema = tools[name].inputSchema
        assert schema["properties"][CONTEXT_ARG] == {
            "type": "string",
            "description": CONTEXT_DESCRIPTION,
        }, name
        assert schema["required"][-1] == CONTEXT_ARG, name


async def test_tool_with_its_own_context_is_left_alone(
    make_server: MakeServer, sink: RecordingSink
) -> None:
    async with create_connected_server_and_client_session(_wrapped(make_server, sink)) as session:
        schema = (await _tools(session))["annotate"].inputSchema
        result = await session.call_tool("annotate", {"text": "hi", "context": "the tool's own"})
    assert schema["properties"][CONTEXT_ARG].get("description") != CONTEXT_DESCRIPTION
    assert schema["required"].count(CONTEXT_ARG) == 1
    assert _received(result) == {"text": "hi", "context": "the tool's own"}
    [event] = sink.events
    assert (event.intent, event.intent_context, event.intent_source) == (None, "none", None)


async def test_widget_tool_gets_optional_context_and_one_log_line(
    make_server: MakeServer, sink: RecordingSink, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="intent_ui.capture")
    async with create_connected_server_and_client_session(_wrapped(make_server, sink)) as session:
        first = (await _tools(session))["refresh_map"].inputSchema
        await session.list_tools()
    assert CONTEXT_ARG in first["properties"]
    assert CONTEXT_ARG not in first["required"]
    lines = [r.getMessage() for r in caplog.records if "OPTIONAL" in r.getMessage()]
    assert len(lines) == 1
    assert "refresh_map" in lines[0]


async def test_required_false_advertises_optional_everywhere_without_log_lines(
    make_server: MakeServer, sink: RecordingSink, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="intent_ui.capture")
    server = _wrapped(make_server, sink, IntentOptions(required=False))
    async with create_connected_server_and_client_session(server) as session:
        tools = await _tools(session)
        await session.call_tool("book_car", {"city": "Munich", "days": 2})
    assert CONTEXT_ARG in tools["book_car"].inputSchema["properties"]
    assert CONTEXT_ARG not in tools["book_car"].inputSchema["required"]
    assert not [r for r in caplog.records if "OPTIONAL" in r.getMessage()]
    assert sink.events[0].intent_context == "optional"


async def test_custom_description_is_advertised(
    make_server: MakeServer, sink: RecordingSink
) -> None:
    text = "Explain the user's goal for this call in one sentence."
    server = _wrapped(make_server, sink, IntentOptions(description=text))
    async with create_connected_server_and_client_session(server) as session:
        tools = await _tools(session)
    assert tools["book_car"].inputSchema["properties"][CONTEXT_ARG]["description"] == text


async def test_excluded_tool_gets_no_context_and_keeps_a_stray_one(
    make_server: MakeServer, sink: RecordingSink
) -> None:
    server = _wrapped(make_server, sink, IntentOptions(exclude=frozenset({"send_message"})))
    async with create_connected_server_and_client_session(server) as session:
        tools = await _tools(session)
        await session.call_tool("send_message", {"to": "Ana", "body": "Hi"})
    assert CONTEXT_ARG not in tools["send_message"].inputSchema["properties"]
    assert CONTEXT_ARG in tools["book_car"].inputSchema["properties"]
    [event] = sink.events
    assert (event.tool, event.intent_context, event.intent) == ("send_message", "none", None)


async def test_the_servers_own_tool_cache_keeps_the_real_schema(
    make_server: MakeServer, sink: RecordingSink
) -> None:
    server = _wrapped(make_server, sink)
    async with create_connected_server_and_client_session(server) as session:
        await session.list_tools()
    cached = lowlevel_of(server)._tool_cache["book_car"].inputSchema
    assert CONTEXT_ARG not in cached["properties"]


# --- capturing -------------------------------------------------------------------------


async def test_context_is_captured_and_never_reaches_the_handler(
    make_server: MakeServer, sink: RecordingSink
) -> None:
    intent = "User wants a compact rental car in Munich for a weekend trip"
    async with create_connected_server_and_client_session(_wrapped(make_server, sink)) as session:
        await session.list_tools()
        result = await session.call_tool(
            "book_car", {"city": "Munich", "days": 2, CONTEXT_ARG: intent}
        )
    assert _received(result) == {"city": "Munich", "days": 2}
    [event] = sink.events
    assert event.tool == "book_car"
    assert event.intent == intent
    assert (event.intent_context, event.intent_source, event.status) == (
        "required",
        "context_parameter",
        "ok",
    )
    assert event.duration_ms >= 0
    assert event.server == "capture-test"


async def test_first_call_before_any_list_is_still_captured(
    make_server: MakeServer, sink: RecordingSink
) -> None:
    async with create_connected_server_and_client_session(_wrapped(make_server, sink)) as session:
        result = await session.call_tool(
            "book_car", {"city": "Oslo", "days": 1, CONTEXT_ARG: "Trip to Oslo"}
        )
    assert _received(result) == {"city": "Oslo", "days": 1}
    assert sink.events[0].intent == "Trip to Oslo"


async def test_call_without_context_never_fails(
    make_server: MakeServer, sink: RecordingSink
) -> None:
    async with create_connected_server_and_client_session(_wrapped(make_server, sink)) as session:
        await session.list_tools()
        result = await session.call_tool("book_car", {"city": "Rome", "days": 3})
    assert _received(result) == {"city": "Rome", "days": 3}
    [event] = sink.events
    assert (event.intent, event.intent_context, event.intent_source) == (None, "required", None)


async def test_intent_is_pii_stripped_and_clamped(
    make_server: MakeServer, sink: RecordingSink
) -> None:
    raw = "Email ana@example.com about the car " + "x" * 2000
    async with create_connected_server_and_client_session(_wrapped(make_server, sink)) as session:
        await session.call_tool("book_car", {"city": "Rome", "days": 3, CONTEXT_ARG: raw})
    intent = sink.events[0].intent
    assert intent is not None
    assert intent.startswith("Email [email] about the car ")
    assert "ana@example.com" not in intent
    assert len(intent) == INTENT_CAPTURE_LIMIT


async def test_fallback_infers_intent_for_context_less_required_calls(
    make_server: MakeServer, sink: RecordingSink
) -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    def fallback(tool: str, args: Mapping[str, Any]) -> str:
        seen.append((tool, dict(args)))
        return f"Called {tool}"

    server = _wrapped(make_server, sink, IntentOptions(fallback=fallback))
    async with create_connected_server_and_client_session(server) as session:
        await session.call_tool("book_car", {"city": "Rome", "days": 3})
        await session.call_tool("refresh_map", {"area": "centre"})
    book, refresh = sink.events
    assert (book.intent, book.intent_source) == ("Called book_car", "inferred")
    # Widget tools: context-less calls are presumptively the widget's own traffic.
    assert (refresh.intent, refresh.intent_context) == (None, "optional")
    assert seen == [("book_car", {"city": "Rome", "days": 3})]


async def test_fallback_that_raises_is_contained(
    make_server: MakeServer, sink: RecordingSink
) -> None:
    def fallback(tool: str, args: Mapping[str, Any]) -> str:
        raise RuntimeError("bug in the fallback")

    server = _wrapped(make_server, sink, IntentOptions(fallback=fallback))
    async with create_connected_server_and_client_session(server) as session:
        result = await session.call_tool("book_car", {"city": "Rome", "days": 3})
    assert _received(result) == {"city": "Rome", "days": 3}
    assert (sink.events[0].intent, sink.events[0].status) == (None, "ok")


async def test_widget_tool_still_captures_when_the_model_fills_context(
    make_server: MakeServer, sink: RecordingSink
) -> None:
    async with create_connected_server_and_client_session(_wrapped(make_server, sink)) as session:
        await session.list_tools()
        result = await session.call_tool(
            "refresh_map", {"area": "north", CONTEXT_ARG: "User looks for parking up north"}
        )
    assert _received(result) == {"area": "north"}
    assert (sink.events[0].intent, sink.events[0].intent_context) == (
        "User looks for parking up north",
        "optional",
    )


async def test_failing_tool_is_recorded_as_error(
    make_server: MakeServer, sink: RecordingSink
) -> None:
    async with create_connected_server_and_client_session(_wrapped(make_server, sink)) as session:
        result = await session.call_tool("explode", {CONTEXT_ARG: "Testing failure"})
    assert result.isError
    [event] = sink.events
    assert (event.status, event.intent) == ("error", "Testing failure")


async def test_concurrent_calls_keep_their_intents_apart(
    make_server: MakeServer, sink: RecordingSink
) -> None:
    results: dict[str, dict[str, Any]] = {}
    async with create_connected_server_and_client_session(_wrapped(make_server, sink)) as session:
        await session.list_tools()

        async def call(tag: str) -> None:
            result = await session.call_tool("meet", {"tag": tag, CONTEXT_ARG: f"intent of {tag}"})
            results[tag] = _received(result)

        async with anyio.create_task_group() as group:
            group.start_soon(call, "a")
            group.start_soon(call, "b")
    assert results == {"a": {"tag": "a"}, "b": {"tag": "b"}}
    assert sorted((e.intent or "") for e in sink.events) == ["intent of a", "intent of b"]


async def test_a_failing_sink_never_fails_the_call(make_server: MakeServer) -> None:
    class BrokenSink:
        def emit(self, event: object) -> None:
            raise OSError("disk full")

        def close(self) -> None:
            """Nothing to release."""

    server = with_intent_capture(make_server(), intent=True, sink=BrokenSink())
    async with create_connected_server_and_client_session(server) as session:
        result = await session.call_tool("book_car", {"city": "Rome", "days": 3})
    assert _received(result) == {"city": "Rome", "days": 3}


async def test_wrapping_twice_replaces_settings_without_double_wrapping(
    make_server: MakeServer, sink: RecordingSink
) -> None:
    server = _wrapped(make_server, sink)
    again = with_intent_capture(server, intent=IntentOptions(required=False), sink=sink)
    assert again is server
    async with create_connected_server_and_client_session(server) as session:
        tools = await _tools(session)
        await session.call_tool("book_car", {"city": "Rome", "days": 3, CONTEXT_ARG: "Trip"})
    assert CONTEXT_ARG not in tools["book_car"].inputSchema["required"]
    assert len(sink.events) == 1


async def test_handlers_registered_after_the_wrap_are_captured(sink: RecordingSink) -> None:
    server: Server = with_intent_capture(Server("late"), intent=True, sink=sink)

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return [types.Tool(name="ping", inputSchema={"type": "object", "properties": {}})]

    @server.call_tool()
    async def call_tool(tool: str, arguments: dict[str, Any]) -> list[types.TextContent]:
        return [types.TextContent(type="text", text=json.dumps({"args": arguments}))]

    async with create_connected_server_and_client_session(server) as session:
        tools = await _tools(session)
        result = await session.call_tool("ping", {CONTEXT_ARG: "Checking liveness"})
    assert CONTEXT_ARG in tools["ping"].inputSchema["properties"]
    assert _received(result) == {}
    assert sink.events[0].intent == "Checking liveness"


# --- switching on ----------------------------------------------------------------------


async def test_environment_variable_switches_capture_on(
    make_server: MakeServer, sink: RecordingSink, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INTENT_CAPTURE", "1")
    server = with_intent_capture(make_server(), sink=sink)
    async with create_connected_server_and_client_session(server) as session:
        tools = await _tools(session)
    assert CONTEXT_ARG in tools["book_car"].inputSchema["properties"]


async def test_code_option_wins_over_the_environment(
    make_server: MakeServer, sink: RecordingSink, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INTENT_CAPTURE", "1")
    server = with_intent_capture(make_server(), intent=False, sink=sink)
    async with create_connected_server_and_client_session(server) as session:
        tools = await _tools(session)
        await session.call_tool("book_car", {"city": "Rome", "days": 3})
    assert CONTEXT_ARG not in tools["book_car"].inputSchema["properties"]
    assert sink.events[0].intent_context == "none"


def test_wrapping_something_else_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match="FastMCP or low-level Server"):
        with_intent_capture(object())  # type: ignore[type-var]


def test_invalid_switch_value_is_a_clear_error(
    make_server: MakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INTENT_CAPTURE", "maybe")
    with pytest.raises(CaptureConfigError, match="INTENT_CAPTURE='maybe'"):
        with_intent_capture(make_server())


async def test_fastmcp_tool_taking_the_request_context_as_context_still_gets_capture(
    sink: RecordingSink,
) -> None:
    # FastMCP injects its Context object by the parameter's type and keeps it out of the
    # schema, so a handler parameter named `context` is not an argument the model sends.
    server = FastMCP("ctx")

    @server.tool()
    async def whoami(name: str, context: Context) -> str:
        return json.dumps({"args": {"name": name, "context": type(context).__name__}})

    with_intent_capture(server, intent=True, sink=sink)
    async with create_connected_server_and_client_session(server) as session:
        schema = (await _tools(session))["whoami"].inputSchema
        result = await session.call_tool("whoami", {"name": "Ana", CONTEXT_ARG: "Greeting Ana"})
    assert schema["required"] == ["name", CONTEXT_ARG]
    assert _received(result) == {"name": "Ana", "context": "Context"}
    assert sink.events[0].intent == "Greeting Ana"
