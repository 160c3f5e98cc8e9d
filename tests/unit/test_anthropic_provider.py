"""AnthropicProvider: what only the Messages wire does, against a loopback server.

What both providers do alike is tested once, for both, in `test_http_provider.py`.
"""

from __future__ import annotations

from intent_ui.agent.providers.base import (
    ChatRequest,
    StreamEnd,
    TextChunk,
    ToolCallArgs,
    ToolCallBegin,
    ToolCallEnd,
    UsageReport,
)
from tests.support.provider_cases import (
    ANTHROPIC,
    ARGS_A,
    ARGS_B,
    SEARCH_TOOL,
    arguments,
    collect,
    ends,
    sent,
)
from tests.support.sse_server import ReplayServer, Script
from tests.support.wire import anthropic_error_body, anthropic_events, sse_event

# -- streams -------------------------------------------------------------------------


async def test_text_then_call_uses_the_block_index() -> None:
    script = Script.sse(
        anthropic_events(text="Let me look.", tool_uses=[("toolu_a", "search_code", ARGS_A)])
    )
    with ReplayServer([script]) as s:
        events = await collect(ANTHROPIC, s)
    assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "Let me look."
    assert ToolCallBegin(1, "toolu_a", "search_code") in events


async def test_the_first_call_ends_before_the_second_starts_streaming() -> None:
    calls = [("toolu_a", "search_code", ARGS_A), ("toolu_b", "search_code", ARGS_B)]
    with ReplayServer([Script.sse(anthropic_events(tool_uses=calls))]) as s:
        events = await collect(ANTHROPIC, s)
    # The model moved on to the second block, so the first call is complete.
    assert events.index(ToolCallEnd("toolu_a")) < events.index(
        ToolCallBegin(1, "toolu_b", "search_code")
    )


async def test_empty_first_partial_json_produces_no_event() -> None:
    script = Script.sse(anthropic_events(tool_uses=[("toolu_a", "search_code", ARGS_A)]))
    with ReplayServer([script]) as s:
        events = await collect(ANTHROPIC, s)
    deltas = [e.delta for e in events if isinstance(e, ToolCallArgs)]
    assert "" not in deltas
    assert deltas[0] == ARGS_A[:4]


async def test_max_tokens_cut_leaves_the_last_call_open() -> None:
    cut = '{"intent": "Searching for MC'
    calls = [("toolu_a", "search_code", ARGS_A), ("toolu_b", "search_code", cut)]
    script = Script.sse(anthropic_events(tool_uses=calls, stop_reason="max_tokens"))
    with ReplayServer([script]) as s:
        events = await collect(ANTHROPIC, s)
    assert ends(events) == [ToolCallEnd("toolu_a")]
    assert arguments(events, "toolu_b") == cut
    assert events[-1] == StreamEnd("max_tokens")


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
        events = await collect(ANTHROPIC, s)
    assert events == [TextChunk("x"), UsageReport(2, 1), StreamEnd("end_turn")]


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
        await collect(ANTHROPIC, s)
        assert len(s.requests) == 2


# -- the request ---------------------------------------------------------------------


async def test_request_headers_and_path() -> None:
    body, headers, path = await sent(ANTHROPIC)
    assert path == "/v1/messages"
    assert headers["x-api-key"] == "sk-test"
    assert headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in headers
    assert (body["model"], body["max_tokens"], body["stream"]) == ("claude-sonnet-4-5", 4096, True)


async def test_request_base_url_ending_in_v1_is_not_doubled() -> None:
    _, _, path = await sent(ANTHROPIC, base_suffix="/v1/")
    assert path == "/v1/messages"


async def test_request_tools_stream_eagerly() -> None:
    body, _, _ = await sent(ANTHROPIC)
    assert body["tools"] == [
        {
            "name": "search_code",
            "description": "Search the code base.",
            "input_schema": SEARCH_TOOL["parameters"],
            "eager_input_streaming": True,
        }
    ]


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
    body, _, _ = await sent(ANTHROPIC, request)
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
