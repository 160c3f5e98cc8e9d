"""OpenAI Chat Completions adapter (also Ollama, vLLM, LM Studio and other compatibles).

`OpenAIProvider.stream` POSTs `{base_url}/chat/completions` with `stream: true`, decodes
the SSE body and turns each chunk into neutral events through
`ChatCompletionsAccumulator`. Request conversion is the pure `chat_completions_body`.
Mirrors `anthropic.py`: both fill in `HTTPProvider`'s hooks, which hold what they share.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Unpack

from intent_ui.agent.providers.base import ChatRequest, ProviderEvent
from intent_ui.agent.providers.http_provider import (
    EMPTY_SCHEMA,
    HTTPOptions,
    HTTPProvider,
    unknown_role_error,
)
from intent_ui.agent.providers.openai_stream import ChatCompletionsAccumulator
from intent_ui.agent.providers.sse import ServerSentEvent

PROVIDER_NAME = "OpenAI-compatible API"


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
    raise unknown_role_error(position, role)


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
        "parameters": tool.get("parameters") or EMPTY_SCHEMA,
    }
    if strict:
        function["strict"] = True
    return {"type": "function", "function": function}


def chat_completions_url(base_url: str) -> str:
    """`{base_url}/chat/completions` (`base_url` ends in the API version, as `/v1`)."""
    return f"{base_url.rstrip('/')}/chat/completions"


class OpenAIProvider(HTTPProvider[ChatCompletionsAccumulator]):
    """A streaming Chat Completions model at `base_url` (e.g. `https://api.openai.com/v1`).

    `organization` is sent as `openai-organization`; the other options are
    `HTTPProvider`'s.
    """

    provider_name = PROVIDER_NAME
    stream_format = "Chat Completions"
    _stream_url = staticmethod(chat_completions_url)
    _request_body = staticmethod(chat_completions_body)
    _new_accumulator = ChatCompletionsAccumulator

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        organization: str | None = None,
        **options: Unpack[HTTPOptions],
    ) -> None:
        self._organization = organization
        super().__init__(base_url, api_key, **options)

    def _api_headers(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        if self._organization:
            headers["openai-organization"] = self._organization
        return headers

    def _read(
        self, sse: ServerSentEvent, accumulator: ChatCompletionsAccumulator
    ) -> tuple[list[ProviderEvent], bool]:
        data = sse.data.strip()
        if data == "[DONE]":
            return [], True
        payload = self._json(data, where="the event stream", partial=accumulator.produced_events)
        if sse.event == "error" and not (isinstance(payload, dict) and "error" in payload):
            payload = {"error": payload}
        return accumulator.feed(payload, scrubbed=True), False
