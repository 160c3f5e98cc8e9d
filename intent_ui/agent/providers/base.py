"""What every provider adapter speaks: a neutral request in, provider events out.

Adapters (`openai.py`, `anthropic.py`, `demo.py`) turn wire-format streams into these
events; the run loop never sees SSE or JSON shapes. Failures are raised as the
exception tree in `errors.py`; the run loop turns them into turn events.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Container
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """A provider-neutral request.

    `messages` use one neutral shape:
    - `{"role": "user", "content": str}`
    - `{"role": "assistant", "content": str, "tool_calls": [{"id", "name", "arguments": str}]}`
    - `{"role": "tool", "tool_call_id": str, "name": str, "content": str, "is_error": bool}`
    `tools` are tool definitions `{"name", "description", "parameters"}` (already
    injected with intent where the capability pipeline decided so).
    """

    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    system: str | None = None
    max_tokens: int = 4096
    strict: bool = False


@dataclass(frozen=True, slots=True)
class TextChunk:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallBegin:
    """A tool call opened: its id and name are known, arguments follow."""

    index: int
    call_id: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolCallArgs:
    call_id: str
    delta: str


@dataclass(frozen=True, slots=True)
class ToolCallEnd:
    """The provider's end-of-call signal (never inferred from the JSON parsing)."""

    call_id: str


@dataclass(frozen=True, slots=True)
class UsageReport:
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True, slots=True)
class StreamEnd:
    """The response finished. `stop_reason` is normalised: `end_turn`, `tool_use`,
    `max_tokens`, `stop_sequence`, or the provider's raw value otherwise."""

    stop_reason: str


def unique_call_id(call_id: str, taken: Container[str]) -> str:
    """`call_id`, or `call_id_2`, `call_id_3`, ... when a call already has it.

    A model (or a server) may repeat a tool-call id; each call still needs its own id,
    or the second call's arguments would be appended to the first's.
    """
    unique, n = call_id, 2
    while unique in taken:
        unique, n = f"{call_id}_{n}", n + 1
    return unique


ProviderEvent = TextChunk | ToolCallBegin | ToolCallArgs | ToolCallEnd | UsageReport | StreamEnd


class Provider(Protocol):
    """A streaming chat model."""

    def stream(self, request: ChatRequest) -> AsyncIterator[ProviderEvent]:
        """Yield events for one model response; raise `ProviderError` subclasses on failure."""
        ...
