"""Chat Completions stream chunks -> provider events (pure: no I/O).

`ChatCompletionsAccumulator` is public: the OpenAI adapter feeds it parsed SSE
payloads, and the offline demo model feeds it hand-built chunk dicts, so both stream
exactly alike. Usage::

    acc = ChatCompletionsAccumulator()
    for chunk in chunks:            # each a parsed `chat.completion.chunk` dict
        events.extend(acc.feed(chunk))
    events.extend(acc.finish())     # at `data: [DONE]` or the end of the body

Wire facts it relies on (OpenAI and compatible servers):
- the first delta of a tool call carries `index`, `id`, `type`, `function.name` and
  maybe an empty `function.arguments`; later deltas carry `index` and argument
  fragments only;
- some servers (Ollama, some vLLM) reuse `index` 0 for parallel calls: a delta with a
  new `id` at an index already in use opens a new call;
- an `id` repeated at a new index is a second call, renamed `{id}_2` so the two never
  share arguments;
- `finish_reason` ends the choice; with `stream_options.include_usage` a last chunk
  with `choices: []` carries `usage`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
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
from intent_ui.core.text import clip, scrub_decoded

STOP_REASONS = {
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "stop": "end_turn",
    "length": "max_tokens",
}
"""OpenAI `finish_reason` -> the neutral `StreamEnd.stop_reason`; others pass through."""

QUOTED_VALUE_CHARS = 200
"""How much of an unexpected chunk an error message quotes."""


@dataclass(slots=True)
class _Call:
    ordinal: int
    wire_index: int | None
    call_id: str
    wire_id: str | None = None
    name: str = ""
    begun: bool = False
    ended: bool = False
    pending_args: list[str] = field(default_factory=list)


class ChatCompletionsAccumulator:
    """Turns `chat.completion.chunk` dicts into `ProviderEvent`s.

    `feed(chunk)` returns the events one chunk produces: `TextChunk` for
    `delta.content`, `ToolCallBegin` / `ToolCallArgs` for tool-call deltas, a
    `UsageReport` for the usage chunk, and on `finish_reason` a `ToolCallEnd` for every
    open call in the order they opened. `finish()` returns the closing `StreamEnd`
    (preceded by a `UsageReport` if usage arrived without its own chunk), so
    `StreamEnd` is always the last event.

    - `ToolCallBegin.index` is the call's position in this response (0, 1, ...), which
      equals the wire index for well-behaved servers and stays unique when a server
      reuses index 0.
    - A call without an `id` gets the stable id `call_{index}`.
    - On `finish_reason: "length"` no `ToolCallEnd` is emitted (the argument text may be
      cut off); `StreamEnd("max_tokens")` tells the run loop those calls are incomplete.
    - `finish_reason: "stop"` while tool calls were made (older Ollama) normalises to
      `tool_use`, since the model did ask for tools.
    - A stream without `finish_reason` makes `finish()` raise
      `ProviderStreamError(partial=True)`; no `ToolCallEnd` is emitted for it.
    - A payload carrying `error` raises `ProviderStreamError` with the provider's text.

    `source` names the stream (e.g. the URL) in error messages.
    """

    def __init__(self, source: str = "the chat.completions stream") -> None:
        self._source = source
        self._calls: list[_Call] = []
        self._by_index: dict[int, _Call] = {}
        self._finish_reason: str | None = None
        self._usage: UsageReport | None = None
        self._usage_reported = False
        self._finished = False
        self._produced = False

    @property
    def produced_events(self) -> bool:
        """Whether any event came out yet (so a failure now leaves a partial response)."""
        return self._produced

    def feed(self, chunk: Any, *, scrubbed: bool = False) -> list[ProviderEvent]:
        # Decoded provider text enters here: lone surrogates become U+FFFD, once
        # (`scrubbed`: the caller parsed the chunk with `loads_scrubbed`, which did it).
        if not scrubbed:
            chunk = scrub_decoded(chunk)
        if not isinstance(chunk, dict):
            raise self._error(f"expected a JSON object per chunk, got {_short(chunk)}")
        if chunk.get("error") is not None:
            raise self._provider_error(chunk["error"])
        events: list[ProviderEvent] = []
        choices = chunk.get("choices")
        choice = _first_choice(choices)
        if choice is not None:
            delta = choice.get("delta")
            if isinstance(delta, dict):
                events.extend(self._delta(delta))
            reason = choice.get("finish_reason")
            if isinstance(reason, str) and reason and self._finish_reason is None:
                events.extend(self._finish_choice(reason))
        usage = _usage(chunk.get("usage"))
        if usage is not None:
            self._usage = usage
            # The dedicated usage chunk (`choices: []`) reports at once; usage riding
            # on other chunks (continuous usage stats) is reported once, at the end.
            if not choices:
                events.append(usage)
                self._usage_reported = True
        self._produced = self._produced or bool(events)
        return events

    def finish(self) -> list[ProviderEvent]:
        """Close the response at `[DONE]` or the end of the body."""
        if self._finished:
            return []
        if self._finish_reason is None:
            raise ProviderStreamError(
                f"The stream ended before finish_reason in {self._source}: the response is "
                "incomplete (the connection was probably cut); retry the request.",
                partial=True,
            )
        self._finished = True
        events: list[ProviderEvent] = []
        if self._usage is not None and not self._usage_reported:
            events.append(self._usage)
        reason = STOP_REASONS.get(self._finish_reason, self._finish_reason)
        if reason == "end_turn" and self._calls:
            reason = "tool_use"
        events.append(StreamEnd(reason))
        self._produced = True
        return events

    def _delta(self, delta: dict[str, Any]) -> list[ProviderEvent]:
        events: list[ProviderEvent] = []
        for key in ("content", "refusal"):
            text = delta.get(key)
            if isinstance(text, str) and text:
                events.append(TextChunk(text))
        tool_calls = delta.get("tool_calls")
        if isinstance(tool_calls, list):
            for tool_call in tool_calls:
                if isinstance(tool_call, dict):
                    events.extend(self._tool_delta(tool_call))
        return events

    def _tool_delta(self, delta: dict[str, Any]) -> list[ProviderEvent]:
        index = delta.get("index")
        wire_index = index if isinstance(index, int) else None
        raw_id = delta.get("id")
        call_id = raw_id if isinstance(raw_id, str) and raw_id else None
        function = delta.get("function")
        function = function if isinstance(function, dict) else {}
        name, arguments = function.get("name"), function.get("arguments")

        if wire_index is not None:
            call = self._by_index.get(wire_index)
        else:
            # No index at all: a new id opens a call, anything else continues the last.
            call = self._calls[-1] if self._calls else None
        if call is None or (call_id is not None and call_id != call.wire_id):
            call = self._open(wire_index, call_id)

        events: list[ProviderEvent] = []
        if isinstance(name, str) and name and not call.name:
            call.name = name
        if not call.begun and call.name:
            call.begun = True
            events.append(ToolCallBegin(call.ordinal, call.call_id, call.name))
            events.extend(ToolCallArgs(call.call_id, text) for text in call.pending_args)
            call.pending_args.clear()
        if isinstance(arguments, dict):
            # A few servers send parsed arguments instead of JSON text.
            arguments = json.dumps(arguments, ensure_ascii=False)
        if isinstance(arguments, str) and arguments:
            if call.begun:
                events.append(ToolCallArgs(call.call_id, arguments))
            else:
                call.pending_args.append(arguments)
        return events

    def _open(self, wire_index: int | None, wire_id: str | None) -> _Call:
        ordinal = len(self._calls)
        taken = {call.call_id for call in self._calls}
        # An id the server repeats at a new index is a second call: it gets its own id.
        call_id = unique_call_id(wire_id or f"call_{ordinal}", taken)
        call = _Call(ordinal=ordinal, wire_index=wire_index, call_id=call_id, wire_id=wire_id)
        self._calls.append(call)
        if wire_index is not None:
            self._by_index[wire_index] = call
        return call

    def _finish_choice(self, reason: str) -> list[ProviderEvent]:
        self._finish_reason = reason
        if reason == "length":
            return []
        events: list[ProviderEvent] = []
        for call in self._calls:
            if not call.begun:
                raise self._error(f"tool call {call.call_id} ended without a function name")
            if not call.ended:
                call.ended = True
                events.append(ToolCallEnd(call.call_id))
        return events

    def _error(self, what: str) -> ProviderStreamError:
        return ProviderStreamError(f"{what} in {self._source}.", partial=self._produced)

    def _provider_error(self, error: Any) -> ProviderStreamError:
        if isinstance(error, dict):
            message = error.get("message") or _short(error)
            kind = error.get("type") or error.get("code")
        else:
            message, kind = str(error), None
        return ProviderStreamError(
            f"The provider sent an error in {self._source}: {message}. Retry the request; "
            "if it persists, check the model and the request.",
            partial=self._produced,
            error_type=kind if isinstance(kind, str) else None,
        )


def _first_choice(choices: Any) -> dict[str, Any] | None:
    if not isinstance(choices, list):
        return None
    for choice in choices:
        if isinstance(choice, dict) and choice.get("index", 0) == 0:
            return choice
    return None


def _usage(usage: Any) -> UsageReport | None:
    if not isinstance(usage, dict):
        return None
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    return UsageReport(
        input_tokens=prompt if isinstance(prompt, int) else 0,
        output_tokens=completion if isinstance(completion, int) else 0,
    )


def _short(value: Any) -> str:
    return clip(repr(value), QUOTED_VALUE_CHARS)
