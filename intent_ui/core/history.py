"""The history sent back to the model: a turn's rounds as neutral provider messages.

One set of rules, used by the run loop between rounds (`round_messages`) and by the store
for the turns of a conversation (`turn_history` over the replayed event log), so a turn
reloaded from the store reads to the model as it did live (the shape is
`intent_ui.agent.providers.base.ChatRequest`'s):

- Per round (one group of calls): an assistant message with the round's text and its
  `tool_calls`, then one `tool` message per call, in start order; text after the last
  round is one last assistant message.
- A call is named as the model called it (`CallRecord.called_as`), not as the card shows
  it: the two differ when a tool's name is shared and the model addressed it by its id.
- Its arguments are its text when that is one JSON object, else `{}`: an interrupted call
  leaves a JSON prefix, and providers refuse arguments that are not an object.
- Every call gets a result, since providers reject a call without one: a settled call its
  output; a failed one its output, else its error, else `FAILED_RESULT`; a cancelled one
  likewise with `CANCELLED_RESULT`; one that never finished `INTERRUPTED_RESULT`.

A turn continued after Stop reads as the stopped turn's rounds, then a user message
`CONTINUE_PROMPT` (which the conversation neither stores nor shows: the continued turn
follows the stopped one directly), then its own rounds. Stated rather than left implicit
because providers answer a conversation that ends with a user message; one ending with
the assistant's own words some refuse and others read as a prefix to extend.

One difference is deliberate: a call run in the background answered the model with a
handle while the turn ran, and that handle is what the live rounds carry; the stored turn
carries the real result, which arrived later, so the next turn knows what it found.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from intent_ui.core.turn import CallRecord, TextPart, TurnView

__all__ = [
    "CANCELLED_RESULT",
    "CONTINUE_PROMPT",
    "FAILED_RESULT",
    "INTERRUPTED_RESULT",
    "HistoryCall",
    "call_arguments",
    "call_result",
    "history_call",
    "round_messages",
    "turn_history",
]

CANCELLED_RESULT = "The tool call was cancelled before it finished."
CONTINUE_PROMPT = "Continue from where you stopped."
"""What the model reads as the user's words before a turn that continues a stopped one."""
INTERRUPTED_RESULT = "The tool call did not finish; it was interrupted."
FAILED_RESULT = "The tool call failed."


@dataclass(frozen=True, slots=True)
class HistoryCall:
    """One call as the model reads it back: its id, the name it called, the argument
    text it wrote and the result it got."""

    call_id: str
    name: str
    arguments: str
    result: str
    is_error: bool


def call_arguments(text: str) -> str:
    """The argument text to send back: itself when it is one JSON object, else `{}`."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return "{}"
    return text if isinstance(value, dict) else "{}"


def call_result(state: str | None, output: str, error: str | None) -> tuple[str, bool]:
    """`(content, is_error)` of the result of a call that ended in `state`."""
    if state == "settled":
        return output, False
    if state == "error":
        return output or error or FAILED_RESULT, True
    if state == "cancelled":
        return output or error or CANCELLED_RESULT, True
    return INTERRUPTED_RESULT, True


def history_call(record: CallRecord, arguments: str) -> HistoryCall:
    """A stored call (its record and argument text) as the model reads it back."""
    result, is_error = call_result(record.state, record.output, record.error)
    return HistoryCall(record.call_id, record.called_as or record.tool, arguments, result, is_error)


def round_messages(text: str, calls: Sequence[HistoryCall]) -> list[dict[str, Any]]:
    """One round's messages: its assistant message, then one `tool` message per call.
    A round with neither text nor calls adds nothing."""
    if not text and not calls:
        return []
    assistant: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        assistant["tool_calls"] = [
            {"id": c.call_id, "name": c.name, "arguments": call_arguments(c.arguments)}
            for c in calls
        ]
    return [
        assistant,
        *(
            {
                "role": "tool",
                "tool_call_id": c.call_id,
                "name": c.name,
                "content": c.result,
                "is_error": c.is_error,
            }
            for c in calls
        ),
    ]


def turn_history(turn: TurnView) -> list[dict[str, Any]]:
    """A replayed turn's messages: per group, the text before it and its calls; then the
    text after the last group."""
    out: list[dict[str, Any]] = []
    pending: list[str] = []
    for part in turn.parts:
        if isinstance(part, TextPart):
            pending.append(part.text)
            continue
        calls = [
            history_call(record, turn.arguments(call_id))
            for call_id in part.call_ids
            if (record := turn.call(call_id)) is not None
        ]
        out.extend(round_messages("".join(pending), calls))
        pending = []
    out.extend(round_messages("".join(pending), []))
    return out
