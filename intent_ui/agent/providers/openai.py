"""OpenAI Chat Completions adapter (also Ollama, vLLM, LM Studio and other compatibles).

`OpenAIProvider.stream` POSTs `{base_url}/chat/completions` with `stream: true`, decodes
the SSE body and turns each chunk into neutral events through
`ChatCompletionsAccumulator`. Request conversion is the pure `chat_completions_body`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from intent_ui.agent.providers.base import ChatRequest, ProviderEvent
from intent_ui.agent.providers.errors import ProviderError, ProviderStreamError
from intent_ui.agent.providers.openai_stream import ChatCompletionsAccumulator
from intent_ui.agent.providers.retry import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT, open_stream
from intent_ui.agent.providers.sse import checked_sse, drain

PROVIDER_NAME = "OpenAI-compatible API"
_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


def chat_completions_body(request: ChatRequest) -> dict[str, Any]:
    """The JSON body for a streaming `/chat/completions` call.

    Raises `ProviderError` naming the message when a message has an unknown role.
    `max_tokens` (not `max_completion_tokens`) keeps vLLM, Ollama and LM Studio happy.
    """
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    messages.extend(_message(i, message) for i, message in enumerate(request.messages))
    body: dict[str, Any] = {
        "model": request.model,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": request.max_tokens,
    }
    if request.tools:
        body["tools"] = [_tool(tool, strict=request.strict) for tool in request.tools]
    return body


def _message(position: int, message: Any) -> dict[str, Any]:
    role = message.get("role") if isinstance(message, dict) else None
    if role in ("user", "system"):
        return {"role": role, "content": message.get("content", "")}
    if role == "assistant":
        converted: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
        tool_calls = message.get("tool_calls") or []
        if tool_calls:
            # OpenAI documents `content: null` for a pure tool-calling turn.
            converted["content"] = message.get("content") or None
            converted["tool_calls"] = [_assistant_tool_call(call) for call in tool_calls]
        return converted
    if role == "tool":
        # Chat Completions has no error flag: the run loop words failures in `content`.
        return {
            "role": "tool",
            "tool_call_id": message.get("tool_call_id", ""),
            "content": message.get("content", ""),
        }
    raise ProviderError(
        f"Message {position} has role {role!r}; expected 'user', 'assistant', 'tool' or "
        "'system'. Fix the conversation before sending it."
    )


def _assistant_tool_call(call: Mapping[str, Any]) -> dict[str, Any]:
    arguments = call.get("arguments", "")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return {
        "id": call.get("id", ""),
        "type": "function",
        "function": {"name": call.get("name", ""), "arguments": arguments},
    }


def _tool(tool: Mapping[str, Any], *, strict: bool) -> dict[str, Any]:
    function: dict[str, Any] = {
        "name": tool["name"],
        "description": tool.get("description", ""),
        "parameters": tool.get("parameters") or _EMPTY_SCHEMA,
    }
    if strict:
        function["strict"] = True
    return {"type": "function", "function": function}


class OpenAIProvider:
    """A streaming Chat Completions model at `base_url` (e.g. `https://api.openai.com/v1`).

    Pass `http_client` to share a pool (the caller then closes it); otherwise the
    provider owns one, closed by `aclose()` / `async with`.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        http_client: httpx.AsyncClient | None = None,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        organization: str | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.url = f"{self.base_url}/chat/completions"
        self.max_retries = max_retries
        self._api_key = api_key
        self._organization = organization
        self._extra_headers = dict(extra_headers or {})
        self._owns_client = http_client is None
        self._client = http_client or httpx.AsyncClient(timeout=timeout)

    def headers(self) -> dict[str, str]:
        headers = {"accept": "text/event-stream"}
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        if self._organization:
            headers["openai-organization"] = self._organization
        headers.update(self._extra_headers)
        return headers

    async def stream(self, request: ChatRequest) -> AsyncIterator[ProviderEvent]:
        """Yield the events of one model response; raise `ProviderError`s on failure."""
        body = chat_completions_body(request)
        response = await open_stream(
            self._client,
            self.url,
            headers=self.headers(),
            json_body=body,
            provider=PROVIDER_NAME,
            endpoint=self.base_url,
            max_retries=self.max_retries,
        )
        accumulator = ChatCompletionsAccumulator(source=self.url)
        events = checked_sse(
            response,
            url=self.url,
            provider=PROVIDER_NAME,
            partial=lambda: accumulator.produced_events,
        )
        try:
            async for sse in events:
                data = sse.data.strip()
                if data == "[DONE]":
                    await drain(events)
                    break
                if not data:
                    continue
                payload = self._parse(sse.event, data, partial=accumulator.produced_events)
                for event in accumulator.feed(payload):
                    yield event
            for event in accumulator.finish():
                yield event
        finally:
            await events.aclose()
            await response.aclose()

    def _parse(self, event: str, data: str, *, partial: bool) -> Any:
        try:
            payload = json.loads(data)
        except ValueError as exc:
            raise ProviderStreamError(
                f"Malformed JSON in the event stream from {self.url} ({exc}) in the data "
                f"line {_clip(data)!r}. The server is not speaking the Chat Completions "
                "stream format; check base_url.",
                partial=partial,
                url=self.url,
            ) from exc
        if event == "error" and not (isinstance(payload, dict) and "error" in payload):
            payload = {"error": payload}
        return payload

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    async def __aenter__(self) -> OpenAIProvider:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _clip(text: str) -> str:
    return text if len(text) <= 200 else text[:199] + "…"
