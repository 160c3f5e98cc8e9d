"""The tool-call card's state glyph (`ui.components.tool_call`)."""

from __future__ import annotations

from intent_ui.core.states import CALL_STATES, FINAL_STATES, IN_FLIGHT_STATES
from intent_ui.ui.components.tool_call import STATE_ICONS


def test_every_state_has_its_icon_and_each_ending_its_own() -> None:
    # A state without an entry would show the generic wrench, like an unknown one.
    assert set(STATE_ICONS) == set(CALL_STATES)
    endings = [STATE_ICONS[state] for state in FINAL_STATES]
    assert len(set(endings)) == len(endings)
    assert not set(endings) & {STATE_ICONS[state] for state in IN_FLIGHT_STATES}
