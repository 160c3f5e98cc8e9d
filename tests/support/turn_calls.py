"""One call of a turn, read from its `TurnView` by the tests that expect it to be there.

`TurnView.call` and `TurnView.call_view` answer None for a call the turn never started;
a test that started it reads the call through these, which fail the test, naming the
call, when it is missing.
"""

from __future__ import annotations

from intent_ui.core.labels import CallView
from intent_ui.core.turn import CallRecord, TurnView


def call_in(view: TurnView, call_id: str) -> CallRecord:
    """The record of call `call_id`; fails the test if the turn has no such call."""
    record = view.call(call_id)
    assert record is not None, f"the turn has no call {call_id!r}"
    return record


def call_view_in(view: TurnView, call_id: str) -> CallView:
    """What a card of call `call_id` is built from; fails the test if there is no such call."""
    found = view.call_view(call_id)
    assert found is not None, f"the turn has no call {call_id!r}"
    return found
