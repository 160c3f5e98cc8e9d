"""OpenAIProvider: what only the Chat Completions wire does, against a loopback server.

What both providers do alike is tested once, for both, in `test_http_provider.py`.
"""

from __future__ import annotations

from intent_ui.agent.providers.base import (
    ChatRequest,
    StreamEnd,
    ToolCallBegin,
    ToolCallEnd,
    UsageReport,
)
from tests.support.provider_cases import (
    ARGS_A,
    ARGS_B,
    OPENAI,
    SEARCH_TOOL,
    arguments,
    collect,
    ends,
    sent,
)
from tests.support.sse_server import ReplayServer, Script
from tests.support.wire import openai_chunks

# -- streams -------------------------------------------------------------------------


async def test_parallel_calls_interleaved() -> None:
    calls = [("call_a", "search_code", ARGS_A), ("call_b", "search_code", ARGS_B)]
    with ReplayServer([Script.sse(openai_chunks(tool_calls=calls, interleave=True))]) as s:
        events = await collect(OPENAI, s)
    assert (arguments(events, "call_a"), arguments(events, "call_b")) == (ARGS_A, ARGS_B)


async def test_reused_index_zero_opens_a_call_per_new_id() -> None:
    calls = [("call_a", "search_code", ARGS_A), ("call_b", "read_file", '{"path": "x"}')]
    with ReplayServer([Script.sse(openai_chunks(tool_calls=calls, reuse_index_zero=True))]) as s:
        events = await collect(OPENAI, s)
    begins = [e for e in events if isinstance(e, ToolCallBegin)]
    assert begins == [
        ToolCallBegin(0, "call_a", "search_code"),
        ToolCallBegin(1, "call_b", "read_file"),
    ]
    assert (arguments(events, "call_a"), arguments(events, "call_b")) == (ARGS_A, '{"path": "x"}')
    assert ends(events) == [ToolCallEnd("call_a"), ToolCallEnd("call_b")]


async def test_stream_without_usage_chunk() -> None:
    with ReplayServer(
        [Script.sse(openai_chunks(text="hi", finish_reason="stop", usage=False))]
    ) as s:
        events = await collect(OPENAI, s)
    assert not any(isinstance(e, UsageReport) for e in events)
    assert events[-1] == StreamEnd("end_turn")


# -- the request ---------------------------------------------------------------------


async def test_request_asks_for_a_stream_with_usage() -> None:
    body, headers, path = await sent(OPENAI, base_suffix="/")
    assert path == "/v1/chat/completions"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["model"] == "gpt-4o-mini"
    assert body["max_tokens"] == 4096
    assert headers["authorization"] == "Bearer sk-test"


async def test_request_tools_are_functions_without_strict_by_default() -> None:
    body, _, _ = await sent(OPENAI)
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
    body, _, _ = await sent(OPENAI, request)
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


async def test_request_organization_and_extra_headers() -> None:
    _, headers, _ = await sent(OPENAI, organization="org-1", extra_headers={"x-trace": "t1"})
    assert (headers["openai-organization"], headers["x-trace"]) == ("org-1", "t1")
