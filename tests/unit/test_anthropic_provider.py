"""AnthropicProvider against a loopback replay server speaking the Messages stream."""

from __future__ import annotations

from typing import Any

import pytest

from intent_ui.agent.providers.anthropic import AnthropicProvider
from intent_ui.agent.providers.base import (
    ChatRequest,
    ProviderEvent,
    StreamEnd,
    TextChunk,
    ToolCallArgs,
    ToolCallBegin,
    ToolCallEnd,
    UsageReport,
)
from intent_ui.agent.providers.errors import (
    AuthenticationError,
    ProviderError,
    ProviderStreamError,
)
from tests.support.sse_server import ReplayServer, Script
from tests.support.wire import (
    anthropic_error_body,
    anthropic_error_event,
    anthropic_events,
    sse_event,
)

SEARCH_TOOL = {
    "name": "search_code",
    "description": "Search the code base.",
    "parameters": {
        "type": "object",
        "properties": {"intent": {"type": "string"}, "query": {"type": "string"}},
        "required": ["intent", "query"],
    },
}
REQUEST = ChatRequest(
    model="claude-sonnet-4-5",
    messages=[{"role": "user", "content": "Where is OAuth handled?"}],
    tools=[SEARCH_TOOL],
)
ARGS_A = '{"intent": "Searching for OAuth handling", "query": "oauth"}'
ARGS_B = '{"intent": "Searching for MCP wiring", "query": "mcp"}'


async def collect(
    server: ReplayServer, request: ChatRequest = REQUEST, **options: Any
) -> list[ProviderEvent]:
    async with AnthropicProvider(server.base_url, "sk-ant-test", **options) as provider:
        return [event async for event in provider.stream(request)]


async def collect_until_error(
    server: ReplayServer, request: ChatRequest = REQUEST
) -> tuple[list[ProviderEvent], ProviderError]:
    events: list[ProviderEvent] = []
    async with AnthropicProvider(server.base_url, "sk-ant-test") as provider:
        with pytest.raises(ProviderError) as caught:
            async for event in provider.stream(request):
                events.append(event)
    return events, caught.value


def arguments(events: list[ProviderEvent], call_id: str) -> str:
    return "".join(e.delta for e in events if isinstance(e, ToolCallArgs) and e.call_id == call_id)


def ends(events: list[ProviderEvent]) -> list[ToolCallEnd]:
    return [e for e in events if isinstance(e, ToolCallEnd)]


# -- streams -------------------------------------------------------------------------


async def test_single_call() -> None:
    script = Script.sse(anthropic_events(tool_uses=[("toolu_a", "search_code", ARGS_A)]))
    with ReplayServer([script]) as s:
        events = await collect(s)
    assert events[0] == ToolCallBegin(0, "toolu_a", "search_code")
    assert arguments(events, "toolu_a") == ARGS_A
    assert events[-3:] == [ToolCallEnd("toolu_a"), UsageReport(42, 17), StreamEnd("tool_use")]


async def test_text_then_call_uses_the_block_index() -> None:
    script = Script.sse(
        anthropic_events(text="Let me look.", tool_uses=[("toolu_a", "search_code", ARGS_A)])
    )
    with ReplayServer([script]) as s:
        events = await collect(s)
    assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "Let me look."
    assert ToolCallBegin(1, "toolu_a", "search_code") in events


async def test_text_reply() -> None:
    with ReplayServer([Script.sse(anthropic_events(text="Hi!", stop_reason="end_turn"))]) as s:
        events = await collect(s)
    assert events == [TextChunk("Hi!"), UsageReport(42, 17), StreamEnd("end_turn")]


async def test_parallel_calls_end_in_order_as_the_model_moves_on() -> None:
    calls = [("toolu_a", "search_code", ARGS_A), ("toolu_b", "search_code", ARGS_B)]
    with ReplayServer([Script.sse(anthropic_events(tool_uses=calls))]) as s:
        events = await collect(s)
    assert (arguments(events, "toolu_a"), arguments(events, "toolu_b")) == (ARGS_A, ARGS_B)
    assert ends(events) == [ToolCallEnd("toolu_a"), ToolCallEnd("toolu_b")]
    # The first call settles before the second one starts streaming.
    assert events.index(ToolCallEnd("toolu_a")) < events.index(
        ToolCallBegin(1, "toolu_b", "search_code")
    )


async def test_empty_first_partial_json_produces_no_event() -> None:
    script = Script.sse(anthropic_events(tool_uses=[("toolu_a", "search_code", ARGS_A)]))
    with ReplayServer([script]) as s:
        events = await collect(s)
    deltas = [e.delta for e in events if isinstance(e, ToolCallArgs)]
    assert "" not in deltas
    assert deltas[0] == ARGS_A[:4]


async def test_usage_adds_message_start_input_and_final_output() -> None:
    script = Script.sse(
        anthropic_events(text="ok", stop_reason="end_turn", input_tokens=9, output_tokens=3)
    )
    with ReplayServer([script]) as s:
        events = await collect(s)
    assert UsageReport(9, 3) in events


async def test_max_tokens_cut_leaves_the_last_call_open() -> None:
    cut = '{"intent": "Searching for MC'
    calls = [("toolu_a", "search_code", ARGS_A), ("toolu_b", "search_code", cut)]
    script = Script.sse(anthropic_events(tool_uses=calls, stop_reason="max_tokens"))
    with ReplayServer([script]) as s:
        events = await collect(s)
    assert ends(events) == [ToolCallEnd("toolu_a")]
    assert arguments(events, "toolu_b") == cut
    assert events[-1] == StreamEnd("max_tokens")


# -- failures ------------------------------------------------------------------------


async def test_mid_stream_disconnect_is_a_partial_stream_error_and_not_replayed() -> None:
    chunks = anthropic_events(tool_uses=[("toolu_a", "search_code", ARGS_A)])
    with ReplayServer([Script.sse(chunks, disconnect_after=6), Script.sse(chunks)]) as s:
        events, error = await collect_until_error(s)
        assert len(s.requests) == 1
    assert isinstance(error, ProviderStreamError) and error.partial is True
    assert "/v1/messages" in str(error)
    assert ToolCallBegin(0, "toolu_a", "search_code") in events
    assert ends(events) == []


async def test_body_ending_before_message_stop_is_a_partial_stream_error() -> None:
    chunks = anthropic_events(text="partial answer", stop_reason=None, message_stop=False)
    with ReplayServer([Script.sse(chunks, framing="close")]) as s:
        _, error = await collect_until_error(s)
    assert isinstance(error, ProviderStreamError) and error.partial is True
    assert "message_stop" in str(error)


async def test_malformed_line_names_the_event_and_line() -> None:
    chunks = [*anthropic_events(text="hi")[:4], "event: content_block_delta\ndata: {oops\n\n"]
    with ReplayServer([Script.sse(chunks)]) as s:
        events, error = await collect_until_error(s)
    assert events == [TextChunk("hi")]
    assert isinstance(error, ProviderStreamError) and error.partial is True
    assert "content_block_delta" in str(error) and "{oops" in str(error)


async def test_overloaded_error_event() -> None:
    chunks = [
        *anthropic_events(text="hi")[:4],
        anthropic_error_event("overloaded_error", "Overloaded"),
    ]
    with ReplayServer([Script.sse(chunks)]) as s:
        events, error = await collect_until_error(s)
    assert events == [TextChunk("hi")]
    assert isinstance(error, ProviderStreamError)
    assert error.error_type == "overloaded_error"
    assert error.partial is True
    assert "Overloaded" in str(error) and "retry" in str(error)


async def test_error_event_before_any_output_is_not_partial() -> None:
    chunks = [anthropic_events()[0], anthropic_error_event("api_error", "Internal server error")]
    with ReplayServer([Script.sse(chunks)]) as s:
        _, error = await collect_until_error(s)
    assert isinstance(error, ProviderStreamError) and error.partial is False


async def test_429_with_retry_after_ms_then_success() -> None:
    scripts = [
        Script.json(
            429,
            anthropic_error_body("rate_limit_error", "Too many requests"),
            headers={"retry-after-ms": "10"},
        ),
        Script.sse(anthropic_events(text="ok", stop_reason="end_turn")),
    ]
    with ReplayServer(scripts) as s:
        events = await collect(s)
        assert len(s.requests) == 2
    assert events[-1] == StreamEnd("end_turn")


async def test_overloaded_529_then_success() -> None:
    scripts = [
        Script.json(
            529,
            anthropic_error_body("overloaded_error", "Overloaded"),
            headers={"retry-after": "0.01"},
        ),
        Script.sse(anthropic_events(text="ok", stop_reason="end_turn")),
    ]
    with ReplayServer(scripts) as s:
        await collect(s)
        assert len(s.requests) == 2


async def test_500_then_success() -> None:
    scripts = [
        Script.json(
            500, anthropic_error_body("api_error", "Internal"), headers={"retry-after-ms": "5"}
        ),
        Script.sse(anthropic_events(tool_uses=[("toolu_a", "search_code", ARGS_A)])),
    ]
    with ReplayServer(scripts) as s:
        events = await collect(s)
        assert len(s.requests) == 2
    assert events[-1] == StreamEnd("tool_use")


async def test_401_surfaces_the_providers_message() -> None:
    body = anthropic_error_body("authentication_error", "invalid x-api-key")
    with ReplayServer([Script.json(401, body)]) as s:
        _, error = await collect_until_error(s)
        assert len(s.requests) == 1
        assert isinstance(error, AuthenticationError)
        assert error.provider_message == "invalid x-api-key"
        assert "invalid x-api-key" in str(error)
        assert f"Check api_key for endpoint {s.base_url}" in str(error)


# -- the request ---------------------------------------------------------------------


async def sent(
    request: ChatRequest, base_suffix: str = "", **options: Any
) -> tuple[dict[str, Any], dict[str, str], str]:
    with ReplayServer([Script.sse(anthropic_events(text="ok", stop_reason="end_turn"))]) as s:
        async with AnthropicProvider(
            s.base_url + base_suffix, "sk-ant-test", **options
        ) as provider:
            _ = [event async for event in provider.stream(request)]
        received = s.requests[0]
    return received.json, dict(received.headers), received.path


async def test_request_headers_and_path() -> None:
    body, headers, path = await sent(REQUEST)
    assert path == "/v1/messages"
    assert headers["x-api-key"] == "sk-ant-test"
    assert headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in headers
    assert (body["model"], body["max_tokens"], body["stream"]) == ("claude-sonnet-4-5", 4096, True)


async def test_request_base_url_ending_in_v1_is_not_doubled() -> None:
    _, _, path = await sent(REQUEST, base_suffix="/v1/")
    assert path == "/v1/messages"


async def test_request_tools_stream_eagerly() -> None:
    body, _, _ = await sent(REQUEST)
    assert body["tools"] == [
        {
            "name": "search_code",
            "description": "Search the code base.",
            "input_schema": SEARCH_TOOL["parameters"],
            "eager_input_streaming": True,
        }
    ]


async def test_request_strict_marks_every_tool() -> None:
    request = ChatRequest(model="m", messages=REQUEST.messages, tools=[SEARCH_TOOL], strict=True)
    body, _, _ = await sent(request)
    assert body["tools"][0]["strict"] is True
    assert body["tools"][0]["eager_input_streaming"] is True


async def test_request_converts_the_conversation() -> None:
    request = ChatRequest(
        model="m",
        system="You are terse.",
        messages=[
            {"role": "user", "content": "Find OAuth and MCP"},
            {
                "role": "assistant",
                "content": "Searching.",
                "tool_calls": [
                    {"id": "toolu_a", "name": "search_code", "arguments": ARGS_A},
                    {"id": "toolu_b", "name": "search_code", "arguments": '{"intent": "cut'},
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "toolu_a",
                "name": "search_code",
                "content": "3 hits",
                "is_error": False,
            },
            {
                "role": "tool",
                "tool_call_id": "toolu_b",
                "name": "search_code",
                "content": "bad args",
                "is_error": True,
            },
            {"role": "user", "content": "Thanks"},
        ],
    )
    body, _, _ = await sent(request)
    assert body["system"] == "You are terse."
    assert body["messages"] == [
        {"role": "user", "content": "Find OAuth and MCP"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Searching."},
                {
                    "type": "tool_use",
                    "id": "toolu_a",
                    "name": "search_code",
                    "input": {"intent": "Searching for OAuth handling", "query": "oauth"},
                },
                {"type": "tool_use", "id": "toolu_b", "name": "search_code", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_a",
                    "content": "3 hits",
                    "is_error": False,
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_b",
                    "content": "bad args",
                    "is_error": True,
                },
            ],
        },
        {"role": "user", "content": "Thanks"},
    ]


async def test_unknown_role_is_refused_before_sending() -> None:
    request = ChatRequest(model="m", messages=[{"role": "robot", "content": "x"}])
    with ReplayServer() as s:
        _, error = await collect_until_error(s, request)
        assert s.requests == []
    assert "Message 0 has role 'robot'" in str(error)


async def test_events_without_event_field_use_the_data_type() -> None:
    chunks = [
        sse_event({"type": "message_start", "message": {"usage": {"input_tokens": 2}}}),
        sse_event(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            }
        ),
        sse_event(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "x"},
            }
        ),
        sse_event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 1},
            }
        ),
        sse_event({"type": "message_stop"}),
    ]
    with ReplayServer([Script.sse(chunks)]) as s:
        events = await collect(s)
    assert events == [TextChunk("x"), UsageReport(2, 1), StreamEnd("end_turn")]


async def test_the_connection_is_reused_after_message_stop() -> None:
    script = Script.sse(anthropic_events(text="a", stop_reason="end_turn"))
    with ReplayServer([script] * 2) as s:
        async with AnthropicProvider(s.base_url, "k") as provider:
            for _ in range(2):
                _ = [event async for event in provider.stream(REQUEST)]
        first, second = s.requests
    assert first.client_port == second.client_port
