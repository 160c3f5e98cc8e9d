"""Anthropic Messages stream events -> provider events (pure: no I/O).

`MessagesAccumulator.feed(event_type, data)` takes one parsed SSE event of the
Messages API (`message_start`, `content_block_start`, `content_block_delta`,
`content_block_stop`, `message_delta`, `message_stop`, `ping`, `error`) and returns the
neutral events it produces; `finish()` checks the body did reach `message_stop`.
Mirrors `openai_stream.ChatCompletionsAccumulator`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from intent_ui.agent.providers.base import (
    ProviderEvent,
    StreamEnd,
    TextChunk,
    ToolCallArgs,
    ToolCallBegin,
    ToolCallEnd,
    UsageReport,
    unique_call_id,
)
from intent_ui.agent.providers.errors import ProviderStreamError
from intent_ui.core.text import scrub_decoded, scrub_surrogates

_ERROR_HINTS = {
    "overloaded_error": "The API is overloaded; retry in a moment.",
    "rate_limit_error": "Rate limited; wait and retry.",
    "api_error": "The provider failed on its side; retry later.",
    "invalid_request_error": "Check the model name, the messages and the tool schemas.",
    "authentication_error": "Check api_key for this endpoint.",
}

_INPUT_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


@dataclass(slots=True)
class _Block:
    kind: str
    call_id: str = ""
    initial_input: str = ""
    saw_delta: bool = False
    stopped: bool = False


class MessagesAccumulator:
    """Turns Messages API stream events into `ProviderEvent`s.

    - A `tool_use` block start -> `ToolCallBegin(index=<block index>, id, name)`;
      `input_json_delta.partial_json` -> `ToolCallArgs` (empty fragments, such as the
      usual first `""`, produce nothing); `text_delta` -> `TextChunk`.
    - `ToolCallEnd` is the provider's `content_block_stop`, released once the model
      has moved on (the next block starts, or `message_delta` brings a stop reason
      other than `max_tokens`). On `stop_reason: "max_tokens"` the last tool block may
      be cut off mid-JSON, so it gets no `ToolCallEnd`: `StreamEnd("max_tokens")` tells
      the run loop that every call still without an end was cut off and must fail.
    - `message_stop` -> `UsageReport` then `StreamEnd(stop_reason)` (`tool_use`,
      `end_turn`, `max_tokens`, `stop_sequence`, or the raw value: `pause_turn`,
      `refusal`, ...).
    - `ping` and unknown event types are ignored; an `error` event raises
      `ProviderStreamError` carrying the provider's message and `error_type`.

    Input tokens add the cache read / creation counts, so they are all the prompt
    tokens of the call.
    """

    def __init__(self, source: str = "the Messages stream") -> None:
        self._source = source
        self._blocks: dict[int, _Block] = {}
        self._held_ends: list[str] = []
        self._stop_reason: str | None = None
        self._usage: dict[str, int] = {}
        self._any_tool_call = False
        self._stopped = False
        self._produced = False

    @property
    def produced_events(self) -> bool:
        """Whether any event came out yet (so a failure now leaves a partial response)."""
        return self._produced

    @property
    def done(self) -> bool:
        """Whether `message_stop` arrived (nothing after it matters)."""
        return self._stopped

    def feed(self, event_type: str, data: Any, *, scrubbed: bool = False) -> list[ProviderEvent]:
        # Decoded provider text enters here: lone surrogates become U+FFFD, once
        # (`scrubbed`: the caller parsed `data` with `loads_scrubbed`, which did it).
        event_type = scrub_surrogates(event_type)
        if not scrubbed:
            data = scrub_decoded(data)
        if not isinstance(data, dict):
            raise self._error(f"expected a JSON object for event {event_type!r}, got {data!r}")
        event_type = event_type if event_type and event_type != "message" else ""
        event_type = event_type or str(data.get("type", ""))
        handler = {
            "message_start": self._on_message_start,
            "content_block_start": self._on_content_block_start,
            "content_block_delta": self._on_content_block_delta,
            "content_block_stop": self._on_content_block_stop,
            "message_delta": self._on_message_delta,
            "message_stop": self._on_message_stop,
            "error": self._on_error,
        }.get(event_type)
        # `ping` and event types added to the API later are ignored.
        events: list[ProviderEvent] = handler(data) if handler else []
        self._produced = self._produced or bool(events)
        return events

    def finish(self) -> list[ProviderEvent]:
        """Check the end of the body: raise if `message_stop` never came."""
        if not self._stopped:
            raise ProviderStreamError(
                f"The stream ended before message_stop in {self._source}: the response is "
                "incomplete (the connection was probably cut); retry the request.",
                partial=True,
            )
        return []

    def _on_message_start(self, data: dict[str, Any]) -> list[ProviderEvent]:
        message = data.get("message")
        usage = message.get("usage") if isinstance(message, dict) else None
        self._read_usage(usage)
        return []

    def _on_content_block_start(self, data: dict[str, Any]) -> list[ProviderEvent]:
        index = self._index(data, "content_block_start")
        block = data.get("content_block")
        block = block if isinstance(block, dict) else {}
        # The model moved on: earlier tool blocks that stopped are complete.
        events: list[ProviderEvent] = self._release_ends()
        kind = str(block.get("type", ""))
        if kind == "tool_use":
            call_id, name = block.get("id"), block.get("name")
            if not isinstance(call_id, str) or not call_id:
                call_id = f"toolu_{index}"
            # A repeated id would merge two calls downstream: the later block is renamed.
            call_id = unique_call_id(
                call_id, {b.call_id for i, b in self._blocks.items() if i != index}
            )
            if not isinstance(name, str) or not name:
                raise self._error(f"tool_use block {index} has no name")
            initial = block.get("input")
            self._blocks[index] = _Block(
                kind=kind,
                call_id=call_id,
                initial_input=json.dumps(initial, ensure_ascii=False) if initial else "",
            )
            self._any_tool_call = True
            events.append(ToolCallBegin(index, call_id, name))
        else:
            self._blocks[index] = _Block(kind=kind)
            text = block.get("text")
            if kind == "text" and isinstance(text, str) and text:
                events.append(TextChunk(text))
        return events

    def _on_content_block_delta(self, data: dict[str, Any]) -> list[ProviderEvent]:
        index = self._index(data, "content_block_delta")
        delta = data.get("delta")
        delta = delta if isinstance(delta, dict) else {}
        kind = delta.get("type")
        if kind == "text_delta":
            text = delta.get("text")
            return [TextChunk(text)] if isinstance(text, str) and text else []
        if kind == "input_json_delta":
            block = self._blocks.get(index)
            if block is None or block.kind != "tool_use":
                raise self._error(f"input_json_delta for block {index}, which is not a tool_use")
            block.saw_delta = True
            fragment = delta.get("partial_json")
            if isinstance(fragment, str) and fragment:
                return [ToolCallArgs(block.call_id, fragment)]
        # thinking / signature / citations deltas are not part of the neutral events.
        return []

    def _on_content_block_stop(self, data: dict[str, Any]) -> list[ProviderEvent]:
        block = self._blocks.get(self._index(data, "content_block_stop"))
        if block is None or block.kind != "tool_use" or block.stopped:
            return []
        block.stopped = True
        events: list[ProviderEvent] = []
        if not block.saw_delta and block.initial_input:
            # Some proxies put the whole input in the start block and stream no deltas.
            events.append(ToolCallArgs(block.call_id, block.initial_input))
        self._held_ends.append(block.call_id)
        return events

    def _on_message_delta(self, data: dict[str, Any]) -> list[ProviderEvent]:
        delta = data.get("delta")
        reason = delta.get("stop_reason") if isinstance(delta, dict) else None
        if isinstance(reason, str) and reason:
            self._stop_reason = reason
        self._read_usage(data.get("usage"))
        if self._stop_reason is None or self._stop_reason == "max_tokens":
            return []
        return self._release_ends()

    def _on_message_stop(self, data: dict[str, Any]) -> list[ProviderEvent]:
        if self._stopped:
            return []
        self._stopped = True
        reason = self._stop_reason or ("tool_use" if self._any_tool_call else "end_turn")
        events: list[ProviderEvent] = [] if reason == "max_tokens" else self._release_ends()
        events.append(self._usage_report())
        events.append(StreamEnd(reason))
        return events

    def _on_error(self, data: dict[str, Any]) -> list[ProviderEvent]:
        error = data.get("error")
        error = error if isinstance(error, dict) else {}
        kind = error.get("type") if isinstance(error.get("type"), str) else None
        message = error.get("message") or "no message"
        hint = _ERROR_HINTS.get(kind or "", "Retry the request.")
        raise ProviderStreamError(
            f"Anthropic sent an error event ({kind or 'unknown'}) in {self._source}: "
            f"{message}. {hint}",
            partial=self._produced,
            error_type=kind,
        )

    def _release_ends(self) -> list[ProviderEvent]:
        events: list[ProviderEvent] = [ToolCallEnd(call_id) for call_id in self._held_ends]
        self._held_ends.clear()
        return events

    def _read_usage(self, usage: Any) -> None:
        # Counts are cumulative: a later event restates a count, never adds to it.
        if isinstance(usage, dict):
            self._usage.update(
                (key, count) for key, count in usage.items() if isinstance(count, int)
            )

    def _usage_report(self) -> UsageReport:
        prompt = sum(self._usage.get(key, 0) for key in _INPUT_KEYS)
        return UsageReport(prompt, self._usage.get("output_tokens", 0))

    def _index(self, data: dict[str, Any], event_type: str) -> int:
        index = data.get("index")
        if not isinstance(index, int):
            raise self._error(f"{event_type} without an integer index")
        return index

    def _error(self, what: str) -> ProviderStreamError:
        return ProviderStreamError(f"Malformed {what} in {self._source}.", partial=self._produced)
