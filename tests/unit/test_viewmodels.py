"""What the browser is sent for a turn: labels, headers, bounded previews."""

from __future__ import annotations

import json

import pytest

from intent_ui.core.events import (
    ArgsComplete,
    ArgsDelta,
    CallSettled,
    CallStarted,
    GoalSelected,
    TextDelta,
)
from intent_ui.core.states import CALL_STATES, FINAL_STATES
from intent_ui.core.turn import TurnView
from intent_ui.ui.viewmodels import (
    CardCache,
    HeaderHold,
    build_turn_parts,
    compact_key,
    goal_line,
    has_timeline,
    pretty_arguments,
    settled_prefix,
    slotted_parts,
)
from tests.support.turn_events import events_reaching


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


def test_the_goal_line_is_the_chosen_goals_description_and_empty_without_one() -> None:
    assert goal_line(TurnView()) == ""
    chosen = TurnView.replay([GoalSelected(1, "research", "Find things in the code")])
    assert goal_line(chosen) == "Find things in the code"


def timed_pair() -> TurnView:
    """Two calls started at 100.0 s and 100.5 s; `a` settles at 101.25 s."""
    turn = TurnView()
    a = json.dumps({"intent": "Searching", "query": "a"})
    for event in [
        CallStarted(1, "a", "search_code", 0, None, True, at=100.0),
        ArgsComplete(2, "a", a),
        CallStarted(3, "b", "search_code", 0, None, True, at=100.5),
        CallSettled(4, "a", "settled", output="1 match", at=101.25),
    ]:
        turn.apply(event)
    return turn


def test_a_running_call_ticks_from_its_start_and_a_settled_one_shows_its_duration() -> None:
    group = build_turn_parts(timed_pair(), message_id="m", lang="en")[0].group
    settled, running = group.cards
    assert (settled.started_at, settled.settled_at) == ("100000", "101250")
    assert settled.elapsed == "1.2s" and not settled.ticking
    assert (running.started_at, running.settled_at, running.elapsed) == ("100500", "", "")
    assert running.ticking


def test_a_group_ticks_while_any_call_runs_then_shows_its_wall_time() -> None:
    turn = timed_pair()
    group = build_turn_parts(turn, message_id="m", lang="en")[0].group
    assert (group.started_at, group.ticking, group.elapsed) == ("100000", True, "")
    turn.apply(CallSettled(5, "b", "settled", output="2 matches", at=104.5))
    group = build_turn_parts(turn, message_id="m", lang="en")[0].group
    assert (group.started_at, group.settled_at) == ("100000", "104500")
    assert (group.elapsed, group.ticking) == ("4.5s", False)


def test_calls_without_timestamps_show_no_time() -> None:
    group = build_turn_parts(two_calls(), message_id="m", lang="en")[1].group
    assert all(c.started_at == "" and not c.ticking for c in group.cards)
    assert group.started_at == "" and not group.ticking


def test_the_settled_time_reaches_a_cached_card() -> None:
    turn = timed_pair()
    cache = CardCache()
    build_turn_parts(turn, message_id="m", lang="en", cache=cache)
    turn.apply(CallSettled(5, "b", "settled", output="2 matches", at=102.0))
    card = build_turn_parts(turn, message_id="m", lang="en", cache=cache)[0].group.cards[1]
    assert (card.elapsed, card.ticking) == ("1.5s", False)


def identical_pair(complete_b: bool = True) -> TurnView:
    turn = TurnView()
    same = "Searching the codebase"
    a = json.dumps({"intent": same, "query": "oauth"})
    b = json.dumps({"intent": same, "query": "mcp"})
    events = [
        CallStarted(1, "a", "search_code", 0, "github", True),
        ArgsDelta(2, "a", a),
        ArgsComplete(3, "a", a),
        CallStarted(4, "b", "search_code", 0, "github", True),
        ArgsDelta(5, "b", b),
    ]
    if complete_b:
        events.append(ArgsComplete(6, "b", b))
    for event in events:
        turn.apply(event)
    return turn


@pytest.mark.parametrize("cached", [False, True])
def test_identical_sibling_intents_are_disambiguated_but_the_header_is_not(cached: bool) -> None:
    cache = CardCache() if cached else None
    turn = identical_pair(complete_b=False)
    group = build_turn_parts(turn, message_id="m", lang="en", cache=cache)[0].group
    # b's arguments are not final yet: no suffix for either until they are.
    assert [c.label for c in group.cards] == ["Searching the codebase"] * 2
    turn.apply(
        ArgsComplete(6, "b", json.dumps({"intent": "Searching the codebase", "query": "mcp"}))
    )
    group = build_turn_parts(turn, message_id="m", lang="en", cache=cache)[0].group
    assert [c.label for c in group.cards] == [
        'Searching the codebase · "oauth"',
        'Searching the codebase · "mcp"',
    ]
    assert group.header == "Searching the codebase"


def test_a_truncated_disambiguated_label_keeps_its_suffix_in_view() -> None:
    turn = TurnView()
    same = "Searching " + "deeply " * 30
    for i, query in enumerate(["oauth", "mcp"]):
        args = json.dumps({"intent": same, "query": query})
        turn.apply(CallStarted(3 * i + 1, query, "search_code", 0, None, True))
        turn.apply(ArgsDelta(3 * i + 2, query, args))
        turn.apply(ArgsComplete(3 * i + 3, query, args))
    cards = build_turn_parts(turn, message_id="m", lang="en")[0].group.cards
    assert cards[0].label.endswith('… · "oauth"')
    assert cards[0].title == same.strip() + ' · "oauth"'


def test_the_timeline_appears_above_three_calls() -> None:
    turn = TurnView()
    for i in range(4):
        turn.apply(CallStarted(i + 1, f"c{i}", "read_file", 0, None, True))
        assert has_timeline(turn) == (i >= 3)


def test_header_only_groups_start_closed_and_keep_their_own_open_state() -> None:
    turn = two_calls()
    group = build_turn_parts(turn, message_id="m", lang="en")[1].group
    assert group.open and not group.compact_open and group.compact_key == compact_key(group.key)
    opened = {group.key: False, compact_key(group.key): True}
    group = build_turn_parts(turn, message_id="m", lang="en", group_open=opened)[1].group
    assert not group.open and group.compact_open


def test_the_settled_prefix_grows_as_rounds_finish_and_never_takes_the_last_part() -> None:
    turn = two_calls()  # text, then a group with b still streaming
    assert settled_prefix(turn) == 1
    turn.apply(CallSettled(7, "a", "settled", output="1 match"))
    turn.apply(CallSettled(8, "b", "settled", output="2 matches"))
    assert settled_prefix(turn) == 1  # the group is the last part: it may still change
    turn.apply(TextDelta(9, "Found them."))
    assert settled_prefix(turn) == 2
    turn.apply(CallStarted(10, "c", "search_code", 1, "github", True))
    turn.apply(TextDelta(11, "More."))
    assert settled_prefix(turn) == 3  # stops at the group whose call is in flight


def test_slotted_parts_number_the_cards_of_every_group_in_order() -> None:
    turn = two_calls()
    turn.apply(TextDelta(7, "And more."))
    turn.apply(CallStarted(8, "c", "search_code", 1, "github", True))
    parts = build_turn_parts(turn, message_id="m", lang="en")
    slotted, cards = slotted_parts(parts, slots=8)
    assert [card.call_id for card in cards] == ["a", "b", "c"]
    groups = [part.group for part in slotted if part.kind == "group"]
    assert [(g.first_slot, g.slot_count, g.cards) for g in groups] == [(0, 2, []), (2, 1, [])]
    assert [part.text for part in slotted if part.kind == "text"] == ["Looking.\n", "And more."]
    # Headers and the rest of each group travel unchanged.
    assert [g.header for g in groups] == [p.group.header for p in parts if p.kind == "group"]


def test_more_cards_than_slots_stay_in_their_groups() -> None:
    parts = build_turn_parts(two_calls(), message_id="m", lang="en")
    assert slotted_parts(parts, slots=1) == (parts, [])


def test_a_settled_duration_reads_the_same_as_its_own_timestamps() -> None:
    # 100.0004 s and 100.5 s are stamped as 100000 ms and 100500 ms: the page shows, and
    # a reader can check, 0.5 s, even though the unrounded difference is 499.6 ms.
    turn = TurnView()
    turn.apply(CallStarted(1, "a", "search_code", 0, None, True, at=100.0004))
    turn.apply(CallSettled(2, "a", "settled", output="ok", at=100.5))
    card = build_turn_parts(turn, message_id="m", lang="en")[0].group.cards[0]
    assert (card.started_at, card.settled_at, card.elapsed) == ("100000", "100500", "0.5s")


@pytest.mark.parametrize("state", CALL_STATES)
def test_a_card_stops_shimmering_and_ticking_exactly_when_its_call_ends(state: str) -> None:
    turn = TurnView.replay(events_reaching(state))  # type: ignore[arg-type]
    group = build_turn_parts(turn, message_id="m", lang="en")[0].group
    assert group.single  # one call: its card alone, without a group header
    (card,) = group.cards
    ended = state in FINAL_STATES
    assert card.state == state
    assert (card.live, card.ticking) == (not ended, not ended)
    assert card.elapsed == ("1.2s" if ended else "")
    assert card.label_key == f"a:{'settled' if ended else 'live'}"
