"""Where a turn that waited for the user when its server stopped picks up again.

Pure rules over a turn's replayed log (the starting and running are
`intent_ui.agent.resume`):

- A turn can resume (`can_resume`) when it has not ended, something of it waits for the
  user (an approval or a question), every other call of it has settled, and nothing
  waits anywhere but in its last round: then nothing but the person was in flight, and
  what the process held in memory can be rebuilt from the log. A turn with a chosen goal
  does not resume (its narrowed tools are not rebuilt), nor does a subagent's child that
  waits (its child turn lived in the process).
- It resumes at that round (`resume_point`): the earlier rounds are what the model read
  (`core.history.turn_history`, as a stored turn reads), the waiting round's settled
  calls keep their results, and its waiting calls wait again, without asking twice. The
  outputs of the settled calls are its output references again.
- What the turn ran on (endpoint, model, agent, user) is the `turn` its session stamped
  on the pause events (`resume_settings`); a log without it (written before this rule)
  does not resume.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from intent_ui.core.capabilities.output_references import reference_key
from intent_ui.core.events import ApprovalRequested, QuestionAsked, TurnEvent
from intent_ui.core.history import turn_history
from intent_ui.core.states import FINAL_STATES, FinalState
from intent_ui.core.turn import ToolGroup, TurnView

__all__ = [
    "RESUME_KEYS",
    "ResumePoint",
    "ResumedCall",
    "can_resume",
    "resume_point",
    "resume_settings",
]

RESUME_KEYS = ("endpoint", "model", "agent_id", "user_id")
"""What a pause event's `turn` holds."""


@dataclass(frozen=True, slots=True)
class ResumedCall:
    """A call of the waiting round: as the model called it, and how it ended (`state`
    None while it waits for the user)."""

    call_id: str
    name: str
    arguments: str
    carries_intent: bool
    state: FinalState | None = None
    output: str = ""
    error: str | None = None


@dataclass(frozen=True, slots=True)
class ResumePoint:
    """A turn's waiting round and what came before it in the turn.

    `messages`: the earlier rounds as the model read them; `text` the waiting round's
    reply text; `round_index` and `group` its place in the turn; `calls` its calls in
    start order; `earlier` the ids, names and groups of the turn's other calls (a later
    call never reuses an id); `outputs` the output references of the settled calls.
    """

    messages: tuple[dict[str, Any], ...]
    text: str
    round_index: int
    group: int
    calls: tuple[ResumedCall, ...]
    earlier: tuple[tuple[str, str, int], ...]
    outputs: Mapping[str, str]

    @property
    def waiting(self) -> tuple[str, ...]:
        """The ids of the calls that wait for the user."""
        return tuple(call.call_id for call in self.calls if call.state is None)


def can_resume(view: TurnView) -> bool:
    """Whether the turn can go on after a restart (module docstring)."""
    if view.done or view.goal is not None or not view.parts:
        return False
    last = view.parts[-1]
    if not isinstance(last, ToolGroup):
        return False  # text after the round's calls: not one round's shape
    waiting = {pause.call_id for pause in view.waiting()}
    if not waiting or not waiting <= set(last.call_ids):
        return False
    return all(record.state in FINAL_STATES or record.call_id in waiting for record in view.calls())


def resume_point(view: TurnView) -> ResumePoint | None:
    """Where the turn picks up again, or None when it cannot (`can_resume`)."""
    if not can_resume(view):
        return None
    groups = [part for part in view.parts if isinstance(part, ToolGroup)]
    last = groups[-1]
    waiting = {pause.call_id for pause in view.waiting()}
    messages = turn_history(view)
    # The waiting round's own messages (its assistant message, one result per call) are
    # the last ones: it is rebuilt from its calls instead.
    round_start = len(messages) - 1 - len(last.call_ids)
    text = str(messages[round_start].get("content") or "")
    outputs: dict[str, str] = {}
    for round_index, group in enumerate(groups):
        for index, call_id in enumerate(group.call_ids):
            record = view.call(call_id)
            if record is not None and record.state == "settled":
                outputs[reference_key(index, round_index)] = record.output
    calls = []
    for call_id in last.call_ids:
        record = view.call(call_id)
        assert record is not None  # a group's calls are the view's
        state = None if call_id in waiting else record.state
        calls.append(
            ResumedCall(
                call_id,
                record.called_as or record.tool,
                view.arguments(call_id),
                record.carries_intent,
                state if state in FINAL_STATES else None,
                record.output,
                record.error,
            )
        )
    earlier = tuple(
        (record.call_id, record.called_as or record.tool, record.group)
        for record in view.calls()
        if record.call_id not in last.call_ids
    )
    return ResumePoint(
        tuple(messages[:round_start]),
        text,
        len(groups) - 1,
        last.group,
        tuple(calls),
        earlier,
        outputs,
    )


def resume_settings(events: Iterable[TurnEvent]) -> dict[str, str] | None:
    """What the turn ran on, from its latest pause event that says (None: nothing says)."""
    found: dict[str, str] | None = None
    for event in events:
        if isinstance(event, ApprovalRequested | QuestionAsked) and isinstance(event.turn, dict):
            turn = event.turn
            if all(isinstance(turn.get(key), str) for key in RESUME_KEYS):
                found = {key: str(turn[key]) for key in RESUME_KEYS}
    return found
