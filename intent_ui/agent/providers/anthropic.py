"""Anthropic Messages adapter.

`AnthropicProvider.stream` POSTs `{base_url}/v1/messages` with `stream: true`, decodes
the SSE body and turns each event into neutral events through `MessagesAccumulator`.
Request conversion is the pure `messages_body`. Mirrors `openai.py`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from intent_ui.agent.providers.anthropic_stream import MessagesAccumulator
from intent_ui.agent.providers.base import ChatRequest, ProviderEvent
from intent_ui.agent.providers.errors import ProviderError, ProviderStreamError
from intent_ui.agent.providers.retry import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT, open_stream
from intent_ui.agent.providers.sse import checked_sse, drain
from intent_ui.core.text import scrub_decoded

PROVIDER_NAME = "Anthropic API"
DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_ANTHROPIC_VERSION = "2023-06-01"
_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


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
            raise ProviderError(
                f"Message {position} has role {role!r}; expected 'user', 'assistant', 'tool' "
                "or 'system'. Fix the conversation before sending it."
            )
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
        parsed = scrub_decoded(json.loads(arguments)) if isinstance(arguments, str) else None
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
        "input_schema": tool.get("parameters") or _EMPTY_SCHEMA,
        "eager_input_streaming": True,
    }
    if strict:
        converted["strict"] = True
    return converted


def messages_url(base_url: str) -> str:
    """`{base_url}/v1/messages`, without doubling a `/v1` already in `base_url`."""
    base = base_url.rstrip("/")
    return f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"


class AnthropicProvider:
    """A streaming Anthropic Messages model.

    Pass `http_client` to share a pool (the caller then closes it); otherwise the
    provider owns one, closed by `aclose()` / `async with`.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str = "",
        *,
        anthropic_version: str = DEFAULT_ANTHROPIC_VERSION,
        http_client: httpx.AsyncClient | None = None,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        extra_headers: Mapping[str, str] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.url = messages_url(self.base_url)
        self.max_retries = max_retries
        self._api_key = api_key
        self._anthropic_version = anthropic_version
        self._extra_headers = dict(extra_headers or {})
        self._owns_client = http_client is None
        self._client = http_client or httpx.AsyncClient(timeout=timeout)

    def headers(self) -> dict[str, str]:
        headers = {"accept": "text/event-stream", "anthropic-version": self._anthropic_version}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        headers.update(self._extra_headers)
        return headers

    async def stream(self, request: ChatRequest) -> AsyncIterator[ProviderEvent]:
        """Yield the events of one model response; raise `ProviderError`s on failure."""
        body = messages_body(request)
        response = await open_stream(
            self._client,
            self.url,
            headers=self.headers(),
            json_body=body,
            provider=PROVIDER_NAME,
            endpoint=self.base_url,
            max_retries=self.max_retries,
        )
        accumulator = MessagesAccumulator(source=self.url)
        events = checked_sse(
            response,
            url=self.url,
            provider=PROVIDER_NAME,
            partial=lambda: accumulator.produced_events,
        )
        try:
            async for sse in events:
                if not sse.data.strip():
                    continue
                payload = self._parse(sse.event, sse.data, partial=accumulator.produced_events)
                for event in accumulator.feed(sse.event, payload):
                    yield event
                if accumulator.done:
                    await drain(events)
                    break
            for event in accumulator.finish():
                yield event
        finally:
            await events.aclose()
            await response.aclose()

    def _parse(self, event: str, data: str, *, partial: bool) -> Any:
        try:
            return json.loads(data)
        except ValueError as exc:
            raise ProviderStreamError(
                f"Malformed JSON in the {event!r} event from {self.url} ({exc}) in the data "
                f"line {_clip(data)!r}. The server is not speaking the Messages stream "
                "format; check base_url.",
                partial=partial,
                url=self.url,
            ) from exc

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    async def __aenter__(self) -> AnthropicProvider:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _clip(text: str) -> str:
    return text if len(text) <= 200 else text[:199] + "…"
