"""OpenAIProvider against a loopback replay server speaking the Chat Completions stream."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

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
from intent_ui.agent.providers.openai import OpenAIProvider
from tests.support.sse_server import ReplayServer, Script
from tests.support.wire import openai_chunks, openai_error_body

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
    model="gpt-4o-mini",
    messages=[{"role": "user", "content": "Where is OAuth handled?"}],
    tools=[SEARCH_TOOL],
)
ARGS_A = '{"intent": "Searching for OAuth handling", "query": "oauth"}'
ARGS_B = '{"intent": "Searching for MCP wiring", "query": "mcp"}'


async def collect(
    server: ReplayServer, request: ChatRequest = REQUEST, **options: Any
) -> list[ProviderEvent]:
    async with OpenAIProvider(f"{server.base_url}/v1", "sk-test", **options) as provider:
        return [event async for event in provider.stream(request)]


async def collect_until_error(
    server: ReplayServer, request: ChatRequest = REQUEST
) -> tuple[list[ProviderEvent], ProviderError]:
    events: list[ProviderEvent] = []
    async with OpenAIProvider(f"{server.base_url}/v1", "sk-test") as provider:
        with pytest.raises(ProviderError) as caught:
            async for event in provider.stream(request):
                events.append(event)
    return events, caught.value


def arguments(events: list[ProviderEvent], call_id: str) -> str:
    return "".join(e.delta for e in events if isinstance(e, ToolCallArgs) and e.call_id == call_id)


def kinds(events: list[ProviderEvent]) -> list[str]:
    return [type(e).__name__ for e in events]


# -- streams -------------------------------------------------------------------------


async def test_single_call() -> None:
    with ReplayServer(
        [Script.sse(openai_chunks(tool_calls=[("call_a", "search_code", ARGS_A)]))]
    ) as s:
        events = await collect(s)
    assert events[0] == ToolCallBegin(0, "call_a", "search_code")
    assert arguments(events, "call_a") == ARGS_A
    assert events[-3:] == [ToolCallEnd("call_a"), UsageReport(21, 13), StreamEnd("tool_use")]


async def test_text_reply() -> None:
    script = Script.sse(openai_chunks(text="Hello there!", finish_reason="stop"))
    with ReplayServer([script]) as s:
        events = await collect(s)
    assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "Hello there!"
    assert events[-1] == StreamEnd("end_turn")


async def test_parallel_calls() -> None:
    calls = [("call_a", "search_code", ARGS_A), ("call_b", "search_code", ARGS_B)]
    with ReplayServer([Script.sse(openai_chunks(tool_calls=calls))]) as s:
        events = await collect(s)
    begins = [e for e in events if isinstance(e, ToolCallBegin)]
    assert begins == [
        ToolCallBegin(0, "call_a", "search_code"),
        ToolCallBegin(1, "call_b", "search_code"),
    ]
    assert (arguments(events, "call_a"), arguments(events, "call_b")) == (ARGS_A, ARGS_B)
    assert [e for e in events if isinstance(e, ToolCallEnd)] == [
        ToolCallEnd("call_a"),
        ToolCallEnd("call_b"),
    ]


async def test_parallel_calls_interleaved() -> None:
    calls = [("call_a", "search_code", ARGS_A), ("call_b", "search_code", ARGS_B)]
    with ReplayServer([Script.sse(openai_chunks(tool_calls=calls, interleave=True))]) as s:
        events = await collect(s)
    assert (arguments(events, "call_a"), arguments(events, "call_b")) == (ARGS_A, ARGS_B)


async def test_reused_index_zero_opens_a_call_per_new_id() -> None:
    calls = [("call_a", "search_code", ARGS_A), ("call_b", "read_file", '{"path": "x"}')]
    with ReplayServer([Script.sse(openai_chunks(tool_calls=calls, reuse_index_zero=True))]) as s:
        events = await collect(s)
    begins = [e for e in events if isinstance(e, ToolCallBegin)]
    assert begins == [
        ToolCallBegin(0, "call_a", "search_code"),
        ToolCallBegin(1, "call_b", "read_file"),
    ]
    assert (arguments(events, "call_a"), arguments(events, "call_b")) == (ARGS_A, '{"path": "x"}')
    assert [e for e in events if isinstance(e, ToolCallEnd)] == [
        ToolCallEnd("call_a"),
        ToolCallEnd("call_b"),
    ]


async def test_usage_chunk_is_reported_before_stream_end() -> None:
    script = Script.sse(
        openai_chunks(text="hi", finish_reason="stop", prompt_tokens=5, completion_tokens=2)
    )
    with ReplayServer([script]) as s:
        events = await collect(s)
    assert events[-2:] == [UsageReport(5, 2), StreamEnd("end_turn")]


async def test_stream_without_usage_chunk() -> None:
    with ReplayServer(
        [Script.sse(openai_chunks(text="hi", finish_reason="stop", usage=False))]
    ) as s:
        events = await collect(s)
    assert not any(isinstance(e, UsageReport) for e in events)
    assert events[-1] == StreamEnd("end_turn")


async def test_length_cut_mid_arguments_does_not_end_the_call() -> None:
    cut = '{"intent": "Searching for OA'
    script = Script.sse(
        openai_chunks(tool_calls=[("call_a", "search_code", cut)], finish_reason="length")
    )
    with ReplayServer([script]) as s:
        events = await collect(s)
    assert not any(isinstance(e, ToolCallEnd) for e in events)
    assert arguments(events, "call_a") == cut
    assert events[-1] == StreamEnd("max_tokens")


# -- failures ------------------------------------------------------------------------


async def test_mid_stream_disconnect_is_a_partial_stream_error_and_not_replayed() -> None:
    chunks = openai_chunks(tool_calls=[("call_a", "search_code", ARGS_A)])
    scripts = [Script.sse(chunks, disconnect_after=4), Script.sse(chunks)]
    with ReplayServer(scripts) as s:
        events, error = await collect_until_error(s)
        assert len(s.requests) == 1
    assert isinstance(error, ProviderStreamError)
    assert error.partial is True
    assert "broke off" in str(error) and "/v1/chat/completions" in str(error)
    assert ToolCallBegin(0, "call_a", "search_code") in events
    assert not any(isinstance(e, ToolCallEnd) for e in events)


async def test_disconnect_before_any_event_is_not_partial() -> None:
    with ReplayServer([Script.sse(openai_chunks(text="hi"), disconnect_after=0)]) as s:
        events, error = await collect_until_error(s)
    assert events == []
    assert isinstance(error, ProviderStreamError) and error.partial is False


async def test_body_ending_before_finish_reason_is_a_partial_stream_error() -> None:
    chunks = openai_chunks(
        tool_calls=[("call_a", "search_code", ARGS_A)], finish_reason=None, usage=False, done=False
    )
    with ReplayServer([Script.sse(chunks, framing="close")]) as s:
        events, error = await collect_until_error(s)
    assert isinstance(error, ProviderStreamError) and error.partial is True
    assert "finish_reason" in str(error)
    assert arguments(events, "call_a") == ARGS_A
    assert not any(isinstance(e, ToolCallEnd) for e in events)


async def test_malformed_line_names_the_line() -> None:
    chunks = [*openai_chunks(text="hi")[:2], "data: {not json\n\n"]
    with ReplayServer([Script.sse(chunks)]) as s:
        events, error = await collect_until_error(s)
    assert events == [TextChunk("hi")]
    assert isinstance(error, ProviderStreamError) and error.partial is True
    assert "Malformed JSON" in str(error) and "{not json" in str(error)


async def test_error_payload_in_the_stream() -> None:
    chunks = [
        *openai_chunks(text="hi")[:2],
        'data: {"error": {"message": "The server had an error", "type": "server_error"}}\n\n',
    ]
    with ReplayServer([Script.sse(chunks)]) as s:
        _, error = await collect_until_error(s)
    assert isinstance(error, ProviderStreamError)
    assert "The server had an error" in str(error)
    assert error.error_type == "server_error"


async def test_429_with_retry_after_ms_then_success() -> None:
    scripts = [
        Script.json(429, openai_error_body("Rate limit reached"), headers={"retry-after-ms": "10"}),
        Script.sse(openai_chunks(text="ok", finish_reason="stop")),
    ]
    with ReplayServer(scripts) as s:
        events = await collect(s)
        assert len(s.requests) == 2
    assert events[-1] == StreamEnd("end_turn")


async def test_429_with_retry_after_seconds_then_success() -> None:
    scripts = [
        Script.json(429, openai_error_body("Rate limit reached"), headers={"retry-after": "0.01"}),
        Script.sse(openai_chunks(text="ok", finish_reason="stop")),
    ]
    with ReplayServer(scripts) as s:
        await collect(s)
        assert len(s.requests) == 2


async def test_500_then_success() -> None:
    scripts = [
        Script.json(
            500, openai_error_body("internal", "server_error"), headers={"retry-after-ms": "5"}
        ),
        Script.sse(openai_chunks(tool_calls=[("call_a", "search_code", ARGS_A)])),
    ]
    with ReplayServer(scripts) as s:
        events = await collect(s)
        assert len(s.requests) == 2
    assert events[-1] == StreamEnd("tool_use")


async def test_401_surfaces_the_providers_message() -> None:
    body = openai_error_body("Incorrect API key provided: sk-test.", "invalid_request_error")
    with ReplayServer([Script.json(401, body)]) as s:
        _, error = await collect_until_error(s)
        assert len(s.requests) == 1
        assert isinstance(error, AuthenticationError)
        assert error.status_code == 401
        assert error.provider_message == "Incorrect API key provided: sk-test."
        assert "Incorrect API key provided" in str(error)
        assert f"Check api_key for endpoint {s.base_url}/v1" in str(error)


# -- the request ---------------------------------------------------------------------


async def sent(
    request: ChatRequest, api_key: str = "sk-test", **options: Any
) -> tuple[dict[str, Any], dict[str, str], str]:
    with ReplayServer([Script.sse(openai_chunks(text="ok", finish_reason="stop"))]) as s:
        async with OpenAIProvider(f"{s.base_url}/v1/", api_key, **options) as provider:
            _ = [event async for event in provider.stream(request)]
        received = s.requests[0]
    return received.json, dict(received.headers), received.path


async def test_request_asks_for_a_stream_with_usage() -> None:
    body, headers, path = await sent(REQUEST)
    assert path == "/v1/chat/completions"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["model"] == "gpt-4o-mini"
    assert body["max_tokens"] == 4096
    assert headers["authorization"] == "Bearer sk-test"


async def test_request_tools_are_functions_without_strict_by_default() -> None:
    body, _, _ = await sent(REQUEST)
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "search_code",
                "description": "Search the code base.",
                "parameters": SEARCH_TOOL["parameters"],
            },
        }
    ]


async def test_request_strict_marks_every_function() -> None:
    request = ChatRequest(
        model="m",
        messages=REQUEST.messages,
        tools=[SEARCH_TOOL, {**SEARCH_TOOL, "name": "b"}],
        strict=True,
    )
    body, _, _ = await sent(request)
    assert [tool["function"]["strict"] for tool in body["tools"]] == [True, True]


async def test_request_converts_the_conversation() -> None:
    request = ChatRequest(
        model="m",
        system="You are terse.",
        messages=[
            {"role": "user", "content": "Find OAuth"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "call_a", "name": "search_code", "arguments": ARGS_A}],
            },
            {
                "role": "tool",
                "tool_call_id": "call_a",
                "name": "search_code",
                "content": "3 hits",
                "is_error": False,
            },
            {"role": "assistant", "content": "Found it."},
        ],
    )
    body, _, _ = await sent(request)
    assert body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Find OAuth"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "search_code", "arguments": ARGS_A},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": "3 hits"},
        {"role": "assistant", "content": "Found it."},
    ]
    assert "tools" not in body


async def test_request_without_api_key_sends_no_authorization() -> None:
    _, headers, _ = await sent(REQUEST, api_key="")
    assert "authorization" not in headers


async def test_request_organization_and_extra_headers() -> None:
    _, headers, _ = await sent(REQUEST, organization="org-1", extra_headers={"x-trace": "t1"})
    assert (headers["openai-organization"], headers["x-trace"]) == ("org-1", "t1")


async def test_unknown_role_is_refused_before_sending() -> None:
    request = ChatRequest(model="m", messages=[{"role": "robot", "content": "x"}])
    with ReplayServer() as s:
        _, error = await collect_until_error(s, request)
        assert s.requests == []
    assert "Message 0 has role 'robot'" in str(error)


async def test_a_shared_client_is_left_open() -> None:
    with ReplayServer([Script.sse(openai_chunks(text="a", finish_reason="stop"))] * 2) as s:
        async with httpx.AsyncClient() as client:
            async with OpenAIProvider(f"{s.base_url}/v1", "k", http_client=client) as provider:
                _ = [event async for event in provider.stream(REQUEST)]
            assert not client.is_closed
            second = OpenAIProvider(f"{s.base_url}/v1", "k", http_client=client)
            assert [e async for e in second.stream(REQUEST)][-1] == StreamEnd("end_turn")


async def test_stopping_early_closes_the_stream_and_frees_the_connection() -> None:
    scripts = [
        Script.sse(openai_chunks(text="a long answer", fragment_size=1, finish_reason="stop"))
    ] * 2
    with ReplayServer(scripts) as s:
        async with OpenAIProvider(f"{s.base_url}/v1", "k") as provider:
            stream = provider.stream(REQUEST)
            assert await anext(stream) == TextChunk("a")
            await stream.aclose()  # type: ignore[attr-defined]
            events = [e async for e in provider.stream(REQUEST)]
        assert len(s.requests) == 2
    assert events[-1] == StreamEnd("end_turn")


async def test_the_connection_is_reused_after_done() -> None:
    with ReplayServer([Script.sse(openai_chunks(text="a", finish_reason="stop"))] * 2) as s:
        async with OpenAIProvider(f"{s.base_url}/v1", "k") as provider:
            for _ in range(2):
                _ = [event async for event in provider.stream(REQUEST)]
        first, second = s.requests
    assert first.client_port == second.client_port
