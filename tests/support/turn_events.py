"""Turn-event factories shared by the tests of what is built from a turn's events."""

from __future__ import annotations

import itertools

from intent_ui.core.events import (
    ArgsComplete,
    CallBackgrounded,
    CallSettled,
    CallStarted,
    TurnEvent,
)
from intent_ui.core.states import FINAL_STATES, CallState

STARTED_AT = 100.0
ENDED_AT = 101.25


def events_reaching(
    state: CallState, call_id: str = "a", *, group: int = 0, first_seq: int = 1
) -> list[TurnEvent]:
    """The events that bring one `read_file` call (no intent) to `state`, the way a run
    does: started, arguments complete, dispatched to the background, then settled."""
    seq = itertools.count(first_seq)
    events: list[TurnEvent] = [CallStarted(next(seq), call_id, "read_file", group, at=STARTED_AT)]
    if state != "streaming":
        events.append(ArgsComplete(next(seq), call_id, "{}"))
    if state == "background":
        events.append(CallBackgrounded(next(seq), call_id))
    if state in FINAL_STATES:
        events.append(CallSettled(next(seq), call_id, state, at=ENDED_AT))
    return events
