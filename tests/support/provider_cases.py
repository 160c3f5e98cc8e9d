"""The two HTTP providers side by side, for the tests that hold for both.

A `ProviderCase` builds one provider against a `ReplayServer` and writes its wire (a
reply, an in-stream error, an error answer, a malformed line), so one test body runs
against `OpenAIProvider` and `AnthropicProvider` alike (`tests/unit/test_http_provider.py`);
each provider's own module keeps what only its wire format does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pytest

from intent_ui.agent.providers.anthropic import AnthropicProvider
from intent_ui.agent.providers.base import (
    ChatRequest,
    ProviderEvent,
    ToolCallArgs,
    ToolCallEnd,
    UsageReport,
)
from intent_ui.agent.providers.errors import ProviderError
from intent_ui.agent.providers.http_provider import HTTPProvider
from intent_ui.agent.providers.openai import OpenAIProvider
from tests.support.sse_server import ReplayServer, Script
from tests.support.wire import (
    ToolCallSpec,
    anthropic_error_body,
    anthropic_error_event,
    anthropic_events,
    openai_chunks,
    openai_error_body,
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
ARGS_A = '{"intent": "Searching for OAuth handling", "query": "oauth"}'
ARGS_B = '{"intent": "Searching for MCP wiring", "query": "mcp"}'

Stop = Literal["end_turn", "tool_use", "max_tokens"]


@dataclass(frozen=True)
class ReplySpec:
    """A scripted reply: `text`, then `calls`, ending with `stop` (`None` cuts the body
    off before the provider's end), reporting `usage`."""

    text: str | None
    calls: Sequence[ToolCallSpec]
    stop: Stop | None
    usage: UsageReport
    fragment_size: int


def _openai_reply(spec: ReplySpec) -> list[str]:
    reasons = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length"}
    return openai_chunks(
        text=spec.text,
        tool_calls=spec.calls,
        fragment_size=spec.fragment_size,
        finish_reason=None if spec.stop is None else reasons[spec.stop],
        usage=spec.stop is not None,
        done=spec.stop is not None,
        prompt_tokens=spec.usage.input_tokens,
        completion_tokens=spec.usage.output_tokens,
    )


def _anthropic_reply(spec: ReplySpec) -> list[str]:
    return anthropic_events(
        text=spec.text,
        tool_uses=spec.calls,
        fragment_size=spec.fragment_size,
        stop_reason=spec.stop,
        message_stop=spec.stop is not None,
        input_tokens=spec.usage.input_tokens,
        output_tokens=spec.usage.output_tokens,
    )


@dataclass(frozen=True)
class ProviderCase:
    """One provider and its wire, as the shared tests need them."""

    id: str
    provider: Callable[..., HTTPProvider[Any]]
    model: str
    base_path: str
    """What follows the server's address in `base_url`."""
    stream_path: str
    """Where the provider POSTs its request."""
    auth_header: str
    call_prefix: str
    """How the provider's own tool-call ids begin (`call`, `toolu`)."""
    usage: UsageReport
    """The token counts a reply reports unless told otherwise."""
    end_signal: str
    """What a complete stream carries last, named when a body ends without it."""
    text_opening: int
    """How many chunks of a text reply come up to and including its first fragment."""
    malformed_line: str
    malformed_where: str
    """How the error for `malformed_line` names the place it was read."""
    stream_error: tuple[str, str]
    """The `(type, message)` of the provider's usual in-stream error."""
    tool_definition: Callable[[dict[str, Any]], dict[str, Any]]
    """Where, in one entry of the request's `tools`, the tool's own fields are."""
    _reply: Callable[[ReplySpec], list[str]]
    _error_body: Callable[[str, str], dict[str, Any]]
    _error_event: Callable[[str, str], str]

    @property
    def request(self) -> ChatRequest:
        return ChatRequest(
            model=self.model,
            messages=[{"role": "user", "content": "Where is OAuth handled?"}],
            tools=[SEARCH_TOOL],
        )

    def call_id(self, letter: str) -> str:
        return f"{self.call_prefix}_{letter}"

    def calls(self, *arguments: str, name: str = "search_code") -> list[ToolCallSpec]:
        """One call per argument text, with ids `<prefix>_a`, `<prefix>_b`, ..."""
        return [(self.call_id(chr(ord("a") + i)), name, args) for i, args in enumerate(arguments)]

    def base_url(self, server: ReplayServer) -> str:
        return server.base_url + self.base_path

    def make(
        self, server: ReplayServer, api_key: str = "sk-test", **options: Any
    ) -> HTTPProvider[Any]:
        return self.provider(self.base_url(server), api_key, **options)

    def reply(
        self,
        *,
        text: str | None = None,
        calls: Sequence[ToolCallSpec] = (),
        stop: Stop | None = "end_turn",
        usage: UsageReport | None = None,
        fragment_size: int = 4,
    ) -> list[str]:
        """The provider's stream (see `ReplySpec`); `usage` defaults to `self.usage`."""
        return self._reply(ReplySpec(text, calls, stop, usage or self.usage, fragment_size))

    def tool_reply(self, *arguments: str) -> list[str]:
        return self.reply(calls=self.calls(*arguments), stop="tool_use")

    def error_body(self, type_: str, message: str) -> dict[str, Any]:
        """The JSON body of an error answer."""
        return self._error_body(type_, message)

    def error_event(self, type_: str, message: str) -> str:
        """An error sent inside a 2xx stream."""
        return self._error_event(type_, message)


OPENAI = ProviderCase(
    id="openai",
    provider=OpenAIProvider,
    model="gpt-4o-mini",
    base_path="/v1",
    stream_path="/v1/chat/completions",
    auth_header="authorization",
    call_prefix="call",
    usage=UsageReport(21, 13),
    end_signal="finish_reason",
    text_opening=2,
    malformed_line="data: {not json\n\n",
    malformed_where="the event stream",
    stream_error=("server_error", "The server had an error"),
    tool_definition=lambda tool: tool["function"],
    _reply=_openai_reply,
    _error_body=lambda type_, message: openai_error_body(message, type_),
    _error_event=lambda type_, message: sse_event({"error": {"message": message, "type": type_}}),
)
ANTHROPIC = ProviderCase(
    id="anthropic",
    provider=AnthropicProvider,
    model="claude-sonnet-4-5",
    base_path="",
    stream_path="/v1/messages",
    auth_header="x-api-key",
    call_prefix="toolu",
    usage=UsageReport(42, 17),
    end_signal="message_stop",
    text_opening=4,
    malformed_line="event: content_block_delta\ndata: {not json\n\n",
    malformed_where="the 'content_block_delta' event",
    stream_error=("overloaded_error", "Overloaded"),
    tool_definition=lambda tool: tool,
    _reply=_anthropic_reply,
    _error_body=anthropic_error_body,
    _error_event=anthropic_error_event,
)
CASES = (OPENAI, ANTHROPIC)


async def collect(
    case: ProviderCase, server: ReplayServer, request: ChatRequest | None = None, **options: Any
) -> list[ProviderEvent]:
    async with case.make(server, **options) as provider:
        return [event async for event in provider.stream(request or case.request)]


async def collect_until_error(
    case: ProviderCase, server: ReplayServer, request: ChatRequest | None = None
) -> tuple[list[ProviderEvent], ProviderError]:
    events: list[ProviderEvent] = []
    async with case.make(server) as provider:
        with pytest.raises(ProviderError) as caught:
            async for event in provider.stream(request or case.request):
                events.append(event)
    return events, caught.value


async def sent(
    case: ProviderCase,
    request: ChatRequest | None = None,
    *,
    base_suffix: str = "",
    api_key: str = "sk-test",
    **options: Any,
) -> tuple[dict[str, Any], dict[str, str], str]:
    """The JSON body, headers and path of the one request the provider sent."""
    with ReplayServer([Script.sse(case.reply(text="ok"))]) as server:
        base_url = case.base_url(server) + base_suffix
        async with case.provider(base_url, api_key, **options) as provider:
            _ = [event async for event in provider.stream(request or case.request)]
        received = server.requests[0]
    return received.json, dict(received.headers), received.path


def arguments(events: list[ProviderEvent], call_id: str) -> str:
    return "".join(e.delta for e in events if isinstance(e, ToolCallArgs) and e.call_id == call_id)


def ends(events: list[ProviderEvent]) -> list[ToolCallEnd]:
    return [e for e in events if isinstance(e, ToolCallEnd)]
