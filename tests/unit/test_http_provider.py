"""What both HTTP providers do alike, each against a loopback server speaking its wire.

Every test runs for `OpenAIProvider` and `AnthropicProvider`; what only one wire format
does is tested in `test_openai_provider.py` / `test_anthropic_provider.py`.
"""

from __future__ import annotations

import httpx
import pytest

from intent_ui.agent.providers.base import (
    ChatRequest,
    StreamEnd,
    TextChunk,
    ToolCallBegin,
    ToolCallEnd,
    UsageReport,
)
from intent_ui.agent.providers.errors import AuthenticationError, ProviderStreamError
from tests.support.provider_cases import (
    ARGS_A,
    ARGS_B,
    SEARCH_TOOL,
    ProviderCase,
    arguments,
    collect,
    collect_until_error,
    ends,
    sent,
)
from tests.support.sse_server import ReplayServer, Script

# -- streams -------------------------------------------------------------------------


async def test_single_call(provider_case: ProviderCase) -> None:
    a = provider_case.call_id("a")
    with ReplayServer([Script.sse(provider_case.tool_reply(ARGS_A))]) as s:
        events = await collect(provider_case, s)
    assert events[0] == ToolCallBegin(0, a, "search_code")
    assert arguments(events, a) == ARGS_A
    assert events[-3:] == [ToolCallEnd(a), provider_case.usage, StreamEnd("tool_use")]


async def test_text_reply(provider_case: ProviderCase) -> None:
    with ReplayServer([Script.sse(provider_case.reply(text="Hello there!"))]) as s:
        events = await collect(provider_case, s)
    texts, end = events[:-2], events[-2:]
    assert "".join(e.text for e in texts if isinstance(e, TextChunk)) == "Hello there!"
    assert all(isinstance(e, TextChunk) for e in texts)
    assert end == [provider_case.usage, StreamEnd("end_turn")]


async def test_parallel_calls_end_in_order(provider_case: ProviderCase) -> None:
    a, b = provider_case.call_id("a"), provider_case.call_id("b")
    with ReplayServer([Script.sse(provider_case.tool_reply(ARGS_A, ARGS_B))]) as s:
        events = await collect(provider_case, s)
    assert [e for e in events if isinstance(e, ToolCallBegin)] == [
        ToolCallBegin(0, a, "search_code"),
        ToolCallBegin(1, b, "search_code"),
    ]
    assert (arguments(events, a), arguments(events, b)) == (ARGS_A, ARGS_B)
    assert ends(events) == [ToolCallEnd(a), ToolCallEnd(b)]


async def test_usage_is_reported_before_stream_end(provider_case: ProviderCase) -> None:
    script = Script.sse(provider_case.reply(text="ok", usage=UsageReport(9, 3)))
    with ReplayServer([script]) as s:
        events = await collect(provider_case, s)
    assert events[-2:] == [UsageReport(9, 3), StreamEnd("end_turn")]


async def test_max_tokens_cut_mid_arguments_does_not_end_the_call(
    provider_case: ProviderCase,
) -> None:
    cut = '{"intent": "Searching for OA'
    a = provider_case.call_id("a")
    with ReplayServer(
        [Script.sse(provider_case.reply(calls=provider_case.calls(cut), stop="max_tokens"))]
    ) as s:
        events = await collect(provider_case, s)
    assert ends(events) == []
    assert arguments(events, a) == cut
    assert events[-1] == StreamEnd("max_tokens")


# -- failures ------------------------------------------------------------------------


async def test_mid_stream_disconnect_is_a_partial_stream_error_and_not_replayed(
    provider_case: ProviderCase,
) -> None:
    chunks = provider_case.tool_reply(ARGS_A)
    with ReplayServer([Script.sse(chunks, disconnect_after=6), Script.sse(chunks)]) as s:
        events, error = await collect_until_error(provider_case, s)
        assert len(s.requests) == 1
    assert isinstance(error, ProviderStreamError) and error.partial is True
    assert "broke off" in str(error) and provider_case.stream_path in str(error)
    assert ToolCallBegin(0, provider_case.call_id("a"), "search_code") in events
    assert ends(events) == []


async def test_disconnect_before_any_event_is_not_partial(provider_case: ProviderCase) -> None:
    with ReplayServer([Script.sse(provider_case.reply(text="hi"), disconnect_after=0)]) as s:
        events, error = await collect_until_error(provider_case, s)
    assert events == []
    assert isinstance(error, ProviderStreamError) and error.partial is False


async def test_body_ending_before_the_providers_end_is_a_partial_stream_error(
    provider_case: ProviderCase,
) -> None:
    a = provider_case.call_id("a")
    chunks = provider_case.reply(calls=provider_case.calls(ARGS_A), stop=None)
    with ReplayServer([Script.sse(chunks, framing="close")]) as s:
        events, error = await collect_until_error(provider_case, s)
    assert isinstance(error, ProviderStreamError) and error.partial is True
    assert f"The stream ended before {provider_case.end_signal}" in str(error)
    assert arguments(events, a) == ARGS_A
    assert ends(events) == []


async def test_malformed_line_is_quoted_and_placed(provider_case: ProviderCase) -> None:
    chunks = [
        *provider_case.reply(text="hi")[: provider_case.text_opening],
        provider_case.malformed_line,
    ]
    with ReplayServer([Script.sse(chunks)]) as s:
        events, error = await collect_until_error(provider_case, s)
    assert events == [TextChunk("hi")]
    assert isinstance(error, ProviderStreamError) and error.partial is True
    assert f"Malformed JSON in {provider_case.malformed_where}" in str(error)
    assert "{not json" in str(error)


async def test_a_long_malformed_line_is_quoted_cut_short(provider_case: ProviderCase) -> None:
    line = provider_case.malformed_line.replace("{not json", "{" + "x" * 500)
    with ReplayServer([Script.sse([line])]) as s:
        _, error = await collect_until_error(provider_case, s)
    assert "{" + "x" * 198 + "…'" in str(error)
    assert "x" * 199 not in str(error)


async def test_error_in_the_stream_carries_the_providers_message(
    provider_case: ProviderCase,
) -> None:
    type_, message = provider_case.stream_error
    chunks = [
        *provider_case.reply(text="hi")[: provider_case.text_opening],
        provider_case.error_event(type_, message),
    ]
    with ReplayServer([Script.sse(chunks)]) as s:
        events, error = await collect_until_error(provider_case, s)
    assert events == [TextChunk("hi")]
    assert isinstance(error, ProviderStreamError) and error.partial is True
    assert error.error_type == type_
    assert message in str(error) and "retry" in str(error).lower()


async def test_error_in_the_stream_before_any_output_is_not_partial(
    provider_case: ProviderCase,
) -> None:
    chunks = [
        provider_case.reply(text="hi")[0],
        provider_case.error_event("api_error", "Internal server error"),
    ]
    with ReplayServer([Script.sse(chunks)]) as s:
        _, error = await collect_until_error(provider_case, s)
    assert isinstance(error, ProviderStreamError) and error.partial is False


@pytest.mark.parametrize("header", [{"retry-after-ms": "10"}, {"retry-after": "0.01"}])
async def test_429_with_retry_after_then_success(
    provider_case: ProviderCase, header: dict[str, str]
) -> None:
    scripts = [
        Script.json(
            429, provider_case.error_body("rate_limit_error", "Rate limit"), headers=header
        ),
        Script.sse(provider_case.reply(text="ok")),
    ]
    with ReplayServer(scripts) as s:
        events = await collect(provider_case, s)
        assert len(s.requests) == 2
    assert events[-1] == StreamEnd("end_turn")


async def test_500_then_success(provider_case: ProviderCase) -> None:
    body = provider_case.error_body("api_error", "internal")
    scripts = [
        Script.json(500, body, headers={"retry-after-ms": "5"}),
        Script.sse(provider_case.tool_reply(ARGS_A)),
    ]
    with ReplayServer(scripts) as s:
        events = await collect(provider_case, s)
        assert len(s.requests) == 2
    assert events[-1] == StreamEnd("tool_use")


async def test_401_surfaces_the_providers_message(provider_case: ProviderCase) -> None:
    body = provider_case.error_body("authentication_error", "Incorrect API key provided: sk-test.")
    with ReplayServer([Script.json(401, body)]) as s:
        _, error = await collect_until_error(provider_case, s)
        assert len(s.requests) == 1
        assert isinstance(error, AuthenticationError)
        assert error.status_code == 401
        assert error.provider_message == "Incorrect API key provided: sk-test."
        assert "Incorrect API key provided" in str(error)
        assert f"Check api_key for endpoint {provider_case.base_url(s)}" in str(error)


# -- the request and the connection --------------------------------------------------


async def test_request_without_api_key_sends_no_credentials(provider_case: ProviderCase) -> None:
    _, headers, _ = await sent(provider_case, api_key="")
    assert provider_case.auth_header not in headers
    assert "authorization" not in headers


async def test_request_carries_extra_headers(provider_case: ProviderCase) -> None:
    _, headers, _ = await sent(provider_case, extra_headers={"x-trace": "t1"})
    assert headers["x-trace"] == "t1"


async def test_request_strict_marks_every_tool_and_changes_nothing_else(
    provider_case: ProviderCase,
) -> None:
    tools = [SEARCH_TOOL, {**SEARCH_TOOL, "name": "b"}]
    messages = provider_case.request.messages
    loose, _, _ = await sent(provider_case, ChatRequest(model="m", messages=messages, tools=tools))
    strict, _, _ = await sent(
        provider_case, ChatRequest(model="m", messages=messages, tools=tools, strict=True)
    )
    definition = provider_case.tool_definition
    assert [definition(tool) for tool in strict["tools"]] == [
        {**definition(tool), "strict": True} for tool in loose["tools"]
    ]


async def test_unknown_role_is_refused_before_sending(provider_case: ProviderCase) -> None:
    request = ChatRequest(model="m", messages=[{"role": "robot", "content": "x"}])
    with ReplayServer() as s:
        _, error = await collect_until_error(provider_case, s, request)
        assert s.requests == []
    assert "Message 0 has role 'robot'" in str(error)


async def test_a_shared_client_is_left_open(provider_case: ProviderCase) -> None:
    with ReplayServer([Script.sse(provider_case.reply(text="a"))] * 2) as s:
        async with httpx.AsyncClient() as client:
            async with provider_case.make(s, http_client=client) as provider:
                _ = [event async for event in provider.stream(provider_case.request)]
            assert not client.is_closed
            second = provider_case.make(s, http_client=client)
            assert [e async for e in second.stream(provider_case.request)][-1] == StreamEnd(
                "end_turn"
            )


async def test_stopping_early_closes_the_stream_and_frees_the_connection(
    provider_case: ProviderCase,
) -> None:
    scripts = [Script.sse(provider_case.reply(text="a long answer", fragment_size=1))] * 2
    with ReplayServer(scripts) as s:
        async with provider_case.make(s) as provider:
            stream = provider.stream(provider_case.request)
            assert await anext(stream) == TextChunk("a")
            await stream.aclose()  # type: ignore[attr-defined]
            events = [e async for e in provider.stream(provider_case.request)]
        assert len(s.requests) == 2
    assert events[-1] == StreamEnd("end_turn")


async def test_the_connection_is_reused_after_the_stream_ends(provider_case: ProviderCase) -> None:
    with ReplayServer([Script.sse(provider_case.reply(text="a"))] * 2) as s:
        async with provider_case.make(s) as provider:
            for _ in range(2):
                _ = [event async for event in provider.stream(provider_case.request)]
        first, second = s.requests
    assert first.client_port == second.client_port


async def test_a_surrogate_escape_on_the_wire_reads_as_a_replacement_character(
    provider_case: ProviderCase,
) -> None:
    # The JSON text carries the escape `\ud800`, as providers send a lone surrogate; the
    # text `\\ud800` (an escaped backslash, then "ud800") stays what it says.
    chunks = provider_case.reply(text="aLONEb ESCAPED", fragment_size=64)
    wire = [
        chunk.replace("LONE", "\\ud800").replace("ESCAPED", "\\\\ud800")
        if isinstance(chunk, str)
        else chunk
        for chunk in chunks
    ]
    with ReplayServer([Script.sse(wire)]) as s:
        events = await collect(provider_case, s)
    text = "".join(e.text for e in events if isinstance(e, TextChunk))
    assert text == "a\ufffdb \\ud800"
