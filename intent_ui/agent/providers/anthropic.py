"""Anthropic Messages adapter.

`AnthropicProvider.stream` POSTs `{base_url}/v1/messages` with `stream: true`, decodes
the SSE body and turns each event into neutral events through `MessagesAccumulator`.
Request conversion is the pure `messages_body`. Mirrors `openai.py`: both fill in
`HTTPProvider`'s hooks, which hold what they share.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Unpack

from intent_ui.agent.providers.anthropic_stream import MessagesAccumulator
from intent_ui.agent.providers.base import ChatRequest, ProviderEvent
from intent_ui.agent.providers.http_provider import (
    EMPTY_SCHEMA,
    HTTPOptions,
    HTTPProvider,
    unknown_role_error,
)
from intent_ui.agent.providers.sse import ServerSentEvent
from intent_ui.core.text import loads_scrubbed, scrub_decoded

PROVIDER_NAME = "Anthropic API"
DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_ANTHROPIC_VERSION = "2023-06-01"


def messages_body(request: ChatRequest) -> dict[str, Any]:
    """The JSON body for a streaming `/v1/messages` call.

    Assistant tool calls become `tool_use` blocks (arguments parsed; `{}` when they are
    not a JSON object); consecutive tool results merge into one `user` message of
    `tool_result` blocks. Every tool carries `eager_input_streaming: true` so its input
    (and the intent) streams character by character. Raises `ProviderError` naming the
    message when a message has an unknown role.
    """
    system = [request.system] if request.system else []
    messages: list[dict[str, Any]] = []
    for position, message in enumerate(request.messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role == "system":
            system.append(str(message.get("content", "")))
        elif role == "user":
            messages.append({"role": "user", "content": message.get("content", "")})
        elif role == "assistant":
            content = _assistant_content(message)
            if content:
                messages.append({"role": "assistant", "content": content})
        elif role == "tool":
            block = _tool_result(message)
            previous = messages[-1] if messages else None
            if previous is not None and _is_tool_results(previous):
                previous["content"].append(block)
            else:
                messages.append({"role": "user", "content": [block]})
        else:
            raise unknown_role_error(position, role)
    body: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": messages,
        "stream": True,
    }
    if system:
        body["system"] = "\n\n".join(system)
    if request.tools:
        body["tools"] = [_tool(tool, strict=request.strict) for tool in request.tools]
    return body


def _assistant_content(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    text = message.get("content")
    if isinstance(text, str) and text:
        blocks.append({"type": "text", "text": text})
    elif isinstance(text, list):
        blocks.extend(text)
    for call in message.get("tool_calls") or []:
        blocks.append(
            {
                "type": "tool_use",
                "id": call.get("id", ""),
                "name": call.get("name", ""),
                "input": _parse_input(call.get("arguments")),
            }
        )
    return blocks


def _parse_input(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return scrub_decoded(arguments)
    try:
        # Escapes in the model's own text may decode to lone surrogates, which the
        # request body could not carry.
        parsed = loads_scrubbed(arguments) if isinstance(arguments, str) else None
    except ValueError:
        parsed = None
    # The API requires an object; a cut-off or invalid argument text degrades to `{}`.
    return parsed if isinstance(parsed, dict) else {}


def _tool_result(message: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": message.get("tool_call_id", ""),
        "content": message.get("content", ""),
        "is_error": bool(message.get("is_error", False)),
    }


def _is_tool_results(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    return (
        message.get("role") == "user"
        and isinstance(content, list)
        and bool(content)
        and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    )


def _tool(tool: Mapping[str, Any], *, strict: bool) -> dict[str, Any]:
    converted: dict[str, Any] = {
        "name": tool["name"],
        "description": tool.get("description", ""),
        "input_schema": tool.get("parameters") or EMPTY_SCHEMA,
        "eager_input_streaming": True,
    }
    if strict:
        converted["strict"] = True
    return converted


def messages_url(base_url: str) -> str:
    """`{base_url}/v1/messages`, without doubling a `/v1` already in `base_url`."""
    base = base_url.rstrip("/")
    return f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"


class AnthropicProvider(HTTPProvider[MessagesAccumulator]):
    """A streaming Anthropic Messages model.

    `anthropic_version` is sent as `anthropic-version`; the other options are
    `HTTPProvider`'s.
    """

    provider_name = PROVIDER_NAME
    stream_format = "Messages"
    _stream_url = staticmethod(messages_url)
    _request_body = staticmethod(messages_body)
    _new_accumulator = MessagesAccumulator

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str = "",
        *,
        anthropic_version: str = DEFAULT_ANTHROPIC_VERSION,
        **options: Unpack[HTTPOptions],
    ) -> None:
        self._anthropic_version = anthropic_version
        super().__init__(base_url, api_key, **options)

    def _api_headers(self) -> dict[str, str]:
        headers = {"anthropic-version": self._anthropic_version}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return headers

    def _read(
        self, sse: ServerSentEvent, accumulator: MessagesAccumulator
    ) -> tuple[list[ProviderEvent], bool]:
        where = f"the {sse.event!r} event"
        payload = self._json(sse.data, where=where, partial=accumulator.produced_events)
        return accumulator.feed(sse.event, payload, scrubbed=True), accumulator.done
