"""Turn events: one immutable value per state change of an agent turn.

The agent run loop emits these; the terminal view, the Reflex state and the store
consume them through `intent_ui.core.turn.TurnView`. Every event carries `seq`, a
per-turn monotonic number stamped by the emitter when the change happens, so
consumers never rely on arrival order of parallel calls (§5.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

CallState = Literal["streaming", "running", "background", "settled", "error", "cancelled"]
"""The browser contract's `data-state` vocabulary (DESIGN.md)."""

FinalState = Literal["settled", "error", "cancelled"]


@dataclass(frozen=True, slots=True)
class CallStarted:
    """The provider opened a tool call (its id and name arrived)."""

    seq: int
    call_id: str
    tool: str
    block: int
    server: str | None = None
    label_bearing: bool = False


@dataclass(frozen=True, slots=True)
class ArgsDelta:
    """A fragment of the call's streamed JSON argument text."""

    seq: int
    call_id: str
    chunk: str


@dataclass(frozen=True, slots=True)
class ArgsComplete:
    """The provider's end-of-call signal: the argument text is final; the tool runs next."""

    seq: int
    call_id: str
    arguments: str


@dataclass(frozen=True, slots=True)
class CallBackgrounded:
    """The call was dispatched to the background: its label stays in flight (§10.3)."""

    seq: int
    call_id: str


@dataclass(frozen=True, slots=True)
class CallSettled:
    """The call finished: tool result, error, or cancellation."""

    seq: int
    call_id: str
    state: FinalState
    output: str = ""
    outcome: str | None = None
    outcome_patch: dict[str, str] | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A fragment of the assistant's reply text."""

    seq: int
    text: str


@dataclass(frozen=True, slots=True)
class ActivityLabel:
    """A fast-model summary for one tool-call block (§5.2 phase 3)."""

    seq: int
    block: int
    label: str


@dataclass(frozen=True, slots=True)
class TurnDone:
    """The turn ended. `error` is a readable message when it ended badly."""

    seq: int
    stop_reason: str
    error: str | None = None


TurnEvent = (
    CallStarted
    | ArgsDelta
    | ArgsComplete
    | CallBackgrounded
    | CallSettled
    | TextDelta
    | ActivityLabel
    | TurnDone
)
