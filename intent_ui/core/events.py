"""Turn events: one immutable value per state change of an agent turn.

The agent run loop emits these; the terminal view, the Reflex state and the store
consume them through `intent_ui.core.turn.TurnView`. Every event carries `seq`, a
per-turn monotonic number stamped by the turn's one `SeqCounter` when the change happens,
so consumers never rely on the arrival order of parallel calls.

Events that start or end something (`CallStarted`, `CallSettled`, `TurnDone`, and a
pause's request and answer) also carry `at`, the wall-clock time in epoch seconds when
the turn's session saw them (0 when unknown), so elapsed times survive a reload.

A turn is stored as its events: `event_to_record` / `event_from_record` turn one event
into a `(kind, data)` pair of JSON-ready values and back.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, get_args

from intent_ui.core.states import FinalState


@dataclass(frozen=True, slots=True)
class CallStarted:
    """The provider opened a tool call (its id and name arrived).

    `block` is the index of the call's group (one per round that calls tools) and
    `label_bearing` whether the call carries an intent (the label gate); both are stored
    under these names. `tool` is the name people know the tool by; `called_as` is the
    name the model called it by, when that differs (a tool whose name another tool of the
    turn shares is offered under its tool id), so the history sent back names it so.
    `parent` is the id of the `subagent` call whose child turn made this call (None for
    the turn's own calls): a child's calls render inside that call's card, and `block`
    is then the child's own round.
    """

    seq: int
    call_id: str
    tool: str
    block: int
    server: str | None = None
    label_bearing: bool = False
    at: float = 0.0
    called_as: str | None = None
    parent: str | None = None


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
    """The call was dispatched to the background: its label stays in flight (the handle
    the model got is not a result; the real one arrives as a later `CallSettled`)."""

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
    at: float = 0.0


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A fragment of the assistant's reply text."""

    seq: int
    text: str


@dataclass(frozen=True, slots=True)
class ActivityLabel:
    """A fast-model summary for one group (`block` is its index, as in `CallStarted`): its
    header once it arrives."""

    seq: int
    block: int
    label: str


@dataclass(frozen=True, slots=True)
class GoalSelected:
    """The model chose the turn's goal; `label` is what the turn's goal line shows."""

    seq: int
    goal_id: str
    label: str


@dataclass(frozen=True, slots=True)
class TurnDone:
    """The turn ended. `error` is a readable message when it ended badly; `error_kind`
    says what kind of failure it was, when known (`core/failures.py` lists the kinds and
    the plain message each is shown with)."""

    seq: int
    stop_reason: str
    error: str | None = None
    at: float = 0.0
    error_kind: str | None = None


@dataclass(frozen=True, slots=True)
class ApprovalRequested:
    """The call waits for the user's approval before it runs (its tool asks first).

    `tool_id` keys the tool's options (what an "always" decision is remembered under);
    `agent_scope` says whether the turn's agent can remember "always for this agent" (a
    saved agent of the user's can, the default agent and model specs cannot). `turn` is
    what the turn runs on (`endpoint`, `model`, `agent_id`, `user_id`), stamped by its
    session, so a server that restarts while the call waits can resume the turn."""

    seq: int
    call_id: str
    tool_id: str = ""
    agent_scope: bool = False
    at: float = 0.0
    turn: dict[str, str] | None = None


@dataclass(frozen=True, slots=True)
class ApprovalDecided:
    """What the user decided about a waiting call: `verdict` is `approved` or `denied`;
    `scope` is `once`, `conversation` or `agent` (how long an approval holds for the
    tool); `reason` is what a denial tells the model; `arguments` is the argument text
    the user rewrote (intent included, so a rewritten intent is the call's label from
    now on), "" when they were not edited. `by` is `user`, or `auto` for the command
    line's `--yes` / `--deny-all`."""

    seq: int
    call_id: str
    verdict: str
    scope: str = "once"
    reason: str = ""
    arguments: str = ""
    by: str = "user"
    at: float = 0.0


@dataclass(frozen=True, slots=True)
class QuestionAsked:
    """The model asked the user a question (`ask_user_question`); the call waits for the
    answer. `choices` are the answers it offered, if any (the user may still write one);
    `turn` as for `ApprovalRequested`."""

    seq: int
    call_id: str
    question: str
    choices: list[str] | None = None
    at: float = 0.0
    turn: dict[str, str] | None = None


@dataclass(frozen=True, slots=True)
class QuestionAnswered:
    """The user's answer to the call's question; the call settles with it."""

    seq: int
    call_id: str
    answer: str
    by: str = "user"
    at: float = 0.0


@dataclass(frozen=True, slots=True)
class SubagentStarted:
    """The `subagent` call `call_id` started its child turn: `agent` is the child's name
    (a saved agent's, or "" for a copy of the turn's own agent), `model` its model. The
    child's calls follow as events of this turn (`CallStarted.parent`)."""

    seq: int
    call_id: str
    agent: str = ""
    model: str = ""
    at: float = 0.0


TurnEvent = (
    CallStarted
    | ArgsDelta
    | ArgsComplete
    | CallBackgrounded
    | CallSettled
    | TextDelta
    | ActivityLabel
    | GoalSelected
    | TurnDone
    | ApprovalRequested
    | ApprovalDecided
    | QuestionAsked
    | QuestionAnswered
    | SubagentStarted
)

PauseEvent = ApprovalRequested | ApprovalDecided | QuestionAsked | QuestionAnswered
"""The events of a call that waits for a person (`intent_ui.agent.pauses`)."""


class SeqCounter:
    """The one place a turn's `seq` values come from: strictly increasing, starting at 1.

    The turn's session owns one and hands it to the run loop, so an event the session adds
    itself (the `TurnDone` of a run that crashed) continues the same sequence.
    """

    __slots__ = ("_last",)

    def __init__(self, last: int = 0) -> None:
        self._last = last

    def next(self) -> int:
        self._last += 1
        return self._last

    @property
    def last(self) -> int:
        return self._last


EVENT_TYPES: dict[str, type[TurnEvent]] = {cls.__name__: cls for cls in get_args(TurnEvent)}
"""Event classes by the `kind` they are stored under."""


def event_to_record(event: TurnEvent) -> tuple[str, dict[str, Any]]:
    """`(kind, data)`: the event's class name and its fields other than `seq`.

    Defaults are left out, so a stored chunk costs little more than its text.
    """
    data: dict[str, Any] = {}
    for f in fields(event):
        if f.name == "seq":
            continue
        value = getattr(event, f.name)
        if value != f.default:
            data[f.name] = value
    return type(event).__name__, data


def event_from_record(kind: str, seq: int, data: Any) -> TurnEvent:
    """The event stored as `event_to_record` wrote it. Raises ValueError naming the problem."""
    cls = EVENT_TYPES.get(kind)
    if cls is None:
        raise ValueError(
            f"unknown turn event kind {kind!r} (expected one of {', '.join(sorted(EVENT_TYPES))})"
        )
    if not isinstance(data, dict):
        raise ValueError(f"{kind} seq={seq}: stored data is not an object")
    known = {f.name for f in fields(cls)} - {"seq"}
    unknown = set(data) - known
    if unknown:
        raise ValueError(f"{kind} seq={seq}: unknown fields {sorted(unknown)}")
    try:
        return cls(seq=seq, **data)
    except TypeError as exc:
        raise ValueError(f"{kind} seq={seq}: {exc}") from None
