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
    CASES,
    ProviderCase,
    arguments,
    collect,
    collect_until_error,
    ends,
    sent,
)
from tests.support.sse_server import ReplayServer, Script


@pytest.fixture(params=CASES, ids=lambda case: case.id)
def case(request: pytest.FixtureRequest) -> ProviderCase:
    return request.param


# -- streams -------------------------------------------------------------------------


async def test_single_call(case: ProviderCase) -> None:
    a = case.call_id("a")
    with ReplayServer([Script.sse(case.tool_reply(ARGS_A))]) as s:
        events = await collect(case, s)
    assert events[0] == ToolCallBegin(0, a, "search_code")
    assert arguments(events, a) == ARGS_A
    assert events[-3:] == [ToolCallEnd(a), case.usage, StreamEnd("tool_use")]


async def test_text_reply(case: ProviderCase) -> None:
    with ReplayServer([Script.sse(case.reply(text="Hello there!"))]) as s:
        events = await collect(case, s)
    texts, end = events[:-2], events[-2:]
    assert "".join(e.text for e in texts if isinstance(e, TextChunk)) == "Hello there!"
    assert all(isinstance(e, TextChunk) for e in texts)
    assert end == [case.usage, StreamEnd("end_turn")]


async def test_parallel_calls_end_in_order(case: ProviderCase) -> None:
    a, b = case.call_id("a"), case.call_id("b")
    with ReplayServer([Script.sse(case.tool_reply(ARGS_A, ARGS_B))]) as s:
        events = await collect(case, s)
    assert [e for e in events if isinstance(e, ToolCallBegin)] == [
        ToolCallBegin(0, a, "search_code"),
        ToolCallBegin(1, b, "search_code"),
    ]
    assert (arguments(events, a), arguments(events, b)) == (ARGS_A, ARGS_B)
    assert ends(events) == [ToolCallEnd(a), ToolCallEnd(b)]


async def test_usage_is_reported_before_stream_end(case: ProviderCase) -> None:
    script = Script.sse(case.reply(text="ok", usage=UsageReport(9, 3)))
    with ReplayServer([script]) as s:
        events = await collect(case, s)
    assert events[-2:] == [UsageReport(9, 3), StreamEnd("end_turn")]


async def test_max_tokens_cut_mid_arguments_does_not_end_the_call(case: ProviderCase) -> None:
    cut = '{"intent": "Searching for OA'
    a = case.call_id("a")
    with ReplayServer([Script.sse(case.reply(calls=case.calls(cut), stop="max_tokens"))]) as s:
        events = await collect(case, s)
    assert ends(events) == []
    assert arguments(events, a) == cut
    assert events[-1] == StreamEnd("max_tokens")


# -- failures ------------------------------------------------------------------------


async def test_mid_stream_disconnect_is_a_partial_stream_error_and_not_replayed(
    case: ProviderCase,
) -> None:
    chunks = case.tool_reply(ARGS_A)
    with ReplayServer([Script.sse(chunks, disconnect_after=6), Script.sse(chunks)]) as s:
        events, error = await collect_until_error(case, s)
        assert len(s.requests) == 1
    assert isinstance(error, ProviderStreamError) and error.partial is True
    assert "broke off" in str(error) and case.stream_path in str(error)
    assert ToolCallBegin(0, case.call_id("a"), "search_code") in events
    assert ends(events) == []


async def test_disconnect_before_any_event_is_not_partial(case: ProviderCase) -> None:
    with ReplayServer([Script.sse(case.reply(text="hi"), disconnect_after=0)]) as s:
        events, error = await collect_until_error(case, s)
    assert events == []
    assert isinstance(error, ProviderStreamError) and error.partial is False


async def test_body_ending_before_the_providers_end_is_a_partial_stream_error(
    case: ProviderCase,
) -> None:
    a = case.call_id("a")
    chunks = case.reply(calls=case.calls(ARGS_A), stop=None)
    with ReplayServer([Script.sse(chunks, framing="close")]) as s:
        events, error = await collect_until_error(case, s)
    assert isinstance(error, ProviderStreamError) and error.partial is True
    assert f"The stream ended before {case.end_signal}" in str(error)
    assert arguments(events, a) == ARGS_A
    assert ends(events) == []


async def test_malformed_line_is_quoted_and_placed(case: ProviderCase) -> None:
    chunks = [*case.reply(text="hi")[: case.text_opening], case.malformed_line]
    with ReplayServer([Script.sse(chunks)]) as s:
        events, error = await collect_until_error(case, s)
    assert events == [TextChunk("hi")]
    assert isinstance(error, ProviderStreamError) and error.partial is True
    assert f"Malformed JSON in {case.malformed_where}" in str(error)
    assert "{not json" in str(error)


async def test_a_long_malformed_line_is_quoted_cut_short(case: ProviderCase) -> None:
    line = case.malformed_line.replace("{not json", "{" + "x" * 500)
    with ReplayServer([Script.sse([line])]) as s:
        _, error = await collect_until_error(case, s)
    assert "{" + "x" * 198 + "…'" in str(error)
    assert "x" * 199 not in str(error)


async def test_error_in_the_stream_carries_the_providers_message(case: ProviderCase) -> None:
    type_, message = case.stream_error
    chunks = [*case.reply(text="hi")[: case.text_opening], case.error_event(type_, message)]
    with ReplayServer([Script.sse(chunks)]) as s:
        events, error = await collect_until_error(case, s)
    assert events == [TextChunk("hi")]
    assert isinstance(error, ProviderStreamError) and error.partial is True
    assert error.error_type == type_
    assert message in str(error) and "retry" in str(error).lower()


async def test_error_in_the_stream_before_any_output_is_not_partial(case: ProviderCase) -> None:
    chunks = [case.reply(text="hi")[0], case.error_event("api_error", "Internal server error")]
    with ReplayServer([Script.sse(chunks)]) as s:
        _, error = await collect_until_error(case, s)
    assert isinstance(error, ProviderStreamError) and error.partial is False


@pytest.mark.parametrize("header", [{"retry-after-ms": "10"}, {"retry-after": "0.01"}])
async def test_429_with_retry_after_then_success(
    case: ProviderCase, header: dict[str, str]
) -> None:
    scripts = [
        Script.json(429, case.error_body("rate_limit_error", "Rate limit"), headers=header),
        Script.sse(case.reply(text="ok")),
    ]
    with ReplayServer(scripts) as s:
        events = await collect(case, s)
        assert len(s.requests) == 2
    assert events[-1] == StreamEnd("end_turn")


async def test_500_then_success(case: ProviderCase) -> None:
    body = case.error_body("api_error", "internal")
    scripts = [
        Script.json(500, body, headers={"retry-after-ms": "5"}),
        Script.sse(case.tool_reply(ARGS_A)),
    ]
    with ReplayServer(scripts) as s:
        events = await collect(case, s)
        assert len(s.requests) == 2
    assert events[-1] == StreamEnd("tool_use")


async def test_401_surfaces_the_providers_message(case: ProviderCase) -> None:
    body = case.error_body("authentication_error", "Incorrect API key provided: sk-test.")
    with ReplayServer([Script.json(401, body)]) as s:
        _, error = await collect_until_error(case, s)
        assert len(s.requests) == 1
        assert isinstance(error, AuthenticationError)
        assert error.status_code == 401
        assert error.provider_message == "Incorrect API key provided: sk-test."
        assert "Incorrect API key provided" in str(error)
        assert f"Check api_key for endpoint {case.base_url(s)}" in str(error)


# -- the request and the connection --------------------------------------------------


async def test_request_without_api_key_sends_no_credentials(case: ProviderCase) -> None:
    _, headers, _ = await sent(case, api_key="")
    assert case.auth_header not in headers
    assert "authorization" not in headers


async def test_request_carries_extra_headers(case: ProviderCase) -> None:
    _, headers, _ = await sent(case, extra_headers={"x-trace": "t1"})
    assert headers["x-trace"] == "t1"


async def test_unknown_role_is_refused_before_sending(case: ProviderCase) -> None:
    request = ChatRequest(model="m", messages=[{"role": "robot", "content": "x"}])
    with ReplayServer() as s:
        _, error = await collect_until_error(case, s, request)
        assert s.requests == []
    assert "Message 0 has role 'robot'" in str(error)


async def test_a_shared_client_is_left_open(case: ProviderCase) -> None:
    with ReplayServer([Script.sse(case.reply(text="a"))] * 2) as s:
        async with httpx.AsyncClient() as client:
            async with case.make(s, http_client=client) as provider:
                _ = [event async for event in provider.stream(case.request)]
            assert not client.is_closed
            second = case.make(s, http_client=client)
            assert [e async for e in second.stream(case.request)][-1] == StreamEnd("end_turn")


async def test_stopping_early_closes_the_stream_and_frees_the_connection(
    case: ProviderCase,
) -> None:
    scripts = [Script.sse(case.reply(text="a long answer", fragment_size=1))] * 2
    with ReplayServer(scripts) as s:
        async with case.make(s) as provider:
            stream = provider.stream(case.request)
            assert await anext(stream) == TextChunk("a")
            await stream.aclose()  # type: ignore[attr-defined]
            events = [e async for e in provider.stream(case.request)]
        assert len(s.requests) == 2
    assert events[-1] == StreamEnd("end_turn")


async def test_the_connection_is_reused_after_the_stream_ends(case: ProviderCase) -> None:
    with ReplayServer([Script.sse(case.reply(text="a"))] * 2) as s:
        async with case.make(s) as provider:
            for _ in range(2):
                _ = [event async for event in provider.stream(case.request)]
        first, second = s.requests
    assert first.client_port == second.client_port
