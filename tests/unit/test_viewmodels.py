"""What the browser is sent for a turn: labels, headers, bounded previews."""

from __future__ import annotations

import json

from intent_ui.core.events import (
    ArgsComplete,
    ArgsDelta,
    CallSettled,
    CallStarted,
    GoalSelected,
    TextDelta,
)
from intent_ui.core.turn import TurnView
from intent_ui.ui.viewmodels import HeaderHold, build_turn_parts, goal_line, pretty_arguments


def two_calls() -> TurnView:
    turn = TurnView()
    a = json.dumps({"intent": "Searching for MCP wiring", "query": "mcp"})
    b = json.dumps({"intent": "Searching for OAuth handling", "query": "oauth"})
    for event in [
        TextDelta(1, "Looking.\n"),
        CallStarted(2, "a", "search_code", 0, "github", True),
        ArgsDelta(3, "a", a),
        ArgsComplete(4, "a", a),
        CallStarted(5, "b", "search_code", 0, "github", True),
        ArgsDelta(6, "b", b[:30]),
    ]:
        turn.apply(event)
    return turn


def test_parts_keep_text_then_a_group_with_live_header() -> None:
    parts = build_turn_parts(two_calls(), message_id="m", lang="en")
    assert [p.kind for p in parts] == ["text", "group"]
    group = parts[1].group
    assert not group.single and group.open
    assert group.header == "Searching for OAut"
    assert group.live and group.suffix == ""
    assert [c.label for c in group.cards] == ["Searching for MCP wiring", "Searching for OAut"]
    assert [c.state for c in group.cards] == ["running", "streaming"]


def test_settled_header_keeps_the_server_suffix_and_card_key_changes() -> None:
    turn = two_calls()
    live_key = build_turn_parts(turn, message_id="m", lang="en")[1].group.cards[0].label_key
    turn.apply(CallSettled(7, "a", "settled", output="3 matches"))
    turn.apply(CallSettled(8, "b", "settled", output="1 match"))
    group = build_turn_parts(turn, message_id="m", lang="en")[1].group
    assert group.header == "Searching for OAut"  # b's intent as far as it streamed
    assert group.suffix == " — github"
    assert group.cards[0].label_key != live_key  # remount: the crossfade plays once


def test_previews_only_for_expanded_cards() -> None:
    turn = two_calls()
    parts = build_turn_parts(turn, message_id="m", lang="en", expanded={"a"})
    cards = parts[1].group.cards
    assert '"query": "mcp"' in cards[0].args_preview
    assert cards[1].args_preview == ""


def test_pretty_arguments_tolerates_partial_and_garbage() -> None:
    assert pretty_arguments('{"intent": "Sea') == '{\n  "intent": "Sea"\n}'
    assert pretty_arguments("}{") == "}{"
    assert pretty_arguments("") == ""
    big = pretty_arguments(json.dumps({"content": "x" * 20_000}))
    assert big.startswith("…") and len(big) <= 6001


def test_header_hold_keeps_a_label_for_the_minimum_time() -> None:
    hold = HeaderHold(min_ms=200)
    hold.now_ms = 0
    assert hold("g", "first") == "first"
    hold.now_ms = 50
    assert hold("g", "second") == "first"
    assert hold.due_ms() == 150
    hold.now_ms = 200
    assert hold("g", "second") == "second"
    assert hold.due_ms() is None


def test_a_crowded_group_calms_its_cards_but_a_small_one_does_not() -> None:
    def streaming(n: int) -> TurnView:
        turn = TurnView()
        for i in range(n):
            turn.apply(CallStarted(2 * i + 1, f"c{i}", "read_file", 0, None, True))
            turn.apply(ArgsDelta(2 * i + 2, f"c{i}", '{"intent": "Reading'))
        return turn

    assert not build_turn_parts(streaming(8), message_id="m", lang="en")[0].group.calm
    assert build_turn_parts(streaming(9), message_id="m", lang="en")[0].group.calm


def test_the_goal_line_is_the_chosen_goals_label_and_empty_without_one() -> None:
    assert goal_line(TurnView()) == ""
    chosen = TurnView.replay([GoalSelected(1, "research", "Find things in the code")])
    assert goal_line(chosen) == "Find things in the code"
