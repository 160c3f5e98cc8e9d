"""Streaming model providers: a neutral request in, provider events out.

`OpenAIProvider` (Chat Completions and compatibles) and `AnthropicProvider` (Messages)
stream over httpx; both raise the `ProviderError` tree. The pure accumulators turn
wire chunks into events and are reused by the offline demo model.
"""

from __future__ import annotations

from intent_ui.agent.providers.anthropic import AnthropicProvider
from intent_ui.agent.providers.anthropic_stream import MessagesAccumulator
from intent_ui.agent.providers.base import (
    ChatRequest,
    Provider,
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
    BadRequestError,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    ProviderStatusError,
    ProviderStreamError,
    ProviderTimeoutError,
    RateLimitError,
)
from intent_ui.agent.providers.openai import OpenAIProvider
from intent_ui.agent.providers.openai_stream import ChatCompletionsAccumulator
from intent_ui.agent.providers.retry import (
    DEFAULT_MAX_RETRIES,
    INITIAL_RETRY_DELAY,
    MAX_RETRY_DELAY,
    retry_delay,
    should_retry,
)
from intent_ui.agent.providers.sse import (
    EventDecoder,
    ServerSentEvent,
    SSEDecoder,
    SSELineDecoder,
    aiter_sse,
)

__all__ = [
    "DEFAULT_MAX_RETRIES",
    "INITIAL_RETRY_DELAY",
    "MAX_RETRY_DELAY",
    "AnthropicProvider",
    "AuthenticationError",
    "BadRequestError",
    "ChatCompletionsAccumulator",
    "ChatRequest",
    "EventDecoder",
    "InternalServerError",
    "MessagesAccumulator",
    "NotFoundError",
    "OpenAIProvider",
    "PermissionDeniedError",
    "Provider",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderEvent",
    "ProviderStatusError",
    "ProviderStreamError",
    "ProviderTimeoutError",
    "RateLimitError",
    "SSEDecoder",
    "SSELineDecoder",
    "ServerSentEvent",
    "StreamEnd",
    "TextChunk",
    "ToolCallArgs",
    "ToolCallBegin",
    "ToolCallEnd",
    "UsageReport",
    "aiter_sse",
    "retry_delay",
    "should_retry",
]
