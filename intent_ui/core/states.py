"""The states of one tool call: the single definition every set, label and icon map uses.

A call is `streaming` while its arguments arrive, `running` once they are complete,
`background` when it was dispatched to run on after its round (its label stays in flight),
and ends in exactly one final state: `settled` (the tool returned), `error` or `cancelled`.
The same words are the page's `data-state` values, so they never change.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "CALL_STATES",
    "CANCELLED_STOP_REASONS",
    "FINAL_STATES",
    "FOREGROUND_STATES",
    "IN_FLIGHT_STATES",
    "CallState",
    "FinalState",
    "InFlightState",
    "turn_status",
]

InFlightState = Literal["streaming", "running", "background"]
"""The call has not ended: its card shimmers and its label may still change."""

FinalState = Literal["settled", "error", "cancelled"]
"""The call ended; only a `CallSettled` event puts a call in one of these."""

CallState = Literal[InFlightState, FinalState]

CALL_STATES: tuple[CallState, ...] = get_args(CallState)
"""Every state, in the order a call passes through them."""

IN_FLIGHT_STATES: frozenset[InFlightState] = frozenset(get_args(InFlightState))
FINAL_STATES: frozenset[FinalState] = frozenset(get_args(FinalState))

FOREGROUND_STATES: frozenset[InFlightState] = IN_FLIGHT_STATES - {"background"}
"""In-flight states of a call its round still holds: the turn's end cancels these, while a
backgrounded call outlives the stream that started it."""


CANCELLED_STOP_REASONS: frozenset[str] = frozenset({"cancelled", "interrupted"})
"""`TurnDone.stop_reason` values that mean the turn was stopped rather than finished."""


def turn_status(stop_reason: str | None, error: str | None) -> str:
    """The message status of a turn that ended so (`streaming` while it has not ended)."""
    if stop_reason is None:
        return "streaming"
    if error:
        return "error"
    if stop_reason in CANCELLED_STOP_REASONS:
        return "cancelled"
    return "complete"
