"""What the page is sent for a turn: labels, headers, timing, bounded details."""

from __future__ import annotations

import json

import pytest

from intent_ui.core.cards import (
    CALM_AFTER,
    LAZY_AFTER,
    TIMELINE_AFTER,
    HeaderHold,
    call_detail,
    card_entry,
    card_title,
    compact_key,
    goal_line,
    group_entry,
    group_suffixes,
    group_title,
    has_timeline,
    pretty_arguments,
    turn_entry,
)
from intent_ui.core.events import (
    ActivityLabel,
    ArgsComplete,
    ArgsDelta,
    CallSettled,
    CallStarted,
    GoalSelected,
    TextDelta,
    TurnDone,
    TurnEvent,
)
from intent_ui.core.sanitize import TITLE_WINDOW
from intent_ui.core.states import CALL_STATES, FINAL_STATES, CallState
from intent_ui.core.turn import TurnView
from tests.support.turn_events import events_reaching


def two_calls() -> TurnView:
    turn = TurnView()
    a = json.dumps({"intent": "Searching for MCP wiring", "query": "mcp"})
    b = json.dumps({"intent": "Searching for OAuth handling", "query": "oauth"})
    events: list[TurnEvent] = [
        TextDelta(1, "Looking.\n"),
        CallStarted(2, "a", "search_code", 0, "github", True),
        ArgsDelta(3, "a", a),
        ArgsComplete(4, "a", a),
        CallStarted(5, "b", "search_code", 0, "github", True),
        ArgsDelta(6, "b", b[:30]),
    ]
    for event in events:
        turn.apply(event)
    return turn


def test_the_turn_lists_text_then_a_group_with_a_live_header() -> None:
    turn = two_calls()
    assert turn_entry(turn, "en")["parts"] == [
        {"kind": "text", "key": "text:0"},
        {"kind": "group", "key": "group:0"},
    ]
    group = group_entry(turn, 0, "m", "en")
    assert not group["single"] and group["open"]
    assert group["header"] == "Searching for OAut"
    assert group["live"] and group["suffix"] == ""
    assert group["key"] == "m:0" and group["header_key"] == "m:0:in_flight:intent"
    cards = [card_entry(turn, call_id, "en") for call_id in ("a", "b")]
    assert [c["label"] for c in cards] == ["Searching for MCP wiring", "Searching for OAut"]
    assert [c["state"] for c in cards] == ["running", "streaming"]


def test_records_are_plain_json_with_exactly_the_fields_the_page_reads() -> None:
    turn = two_calls()
    assert set(card_entry(turn, "a", "en")) == {
        *("call_id", "state", "label", "live", "label_key"),
        *("started_at", "settled_at", "elapsed", "ticking"),
    }
    assert set(group_entry(turn, 0, "m", "en")) == {
        *("key", "single", "header", "header_key", "suffix", "aria_label", "glyph"),
        *("live", "phase", "open", "calm", "lazy", "waiting", "compact_key"),
        *("started_at", "settled_at", "elapsed", "ticking"),
    }
    assert set(turn_entry(turn, "en")) == {
        *("status", "goal", "timeline", "failure", "failure_hint", "error", "waiting", "parts")
    }
    json.dumps([card_entry(turn, "a", "en"), group_entry(turn, 0, "m", "en")])


def test_settled_header_keeps_the_server_suffix_and_card_key_changes() -> None:
    turn = two_calls()
    live_key = card_entry(turn, "a", "en")["label_key"]
    turn.apply(CallSettled(7, "a", "settled", output="3 matches"))
    turn.apply(CallSettled(8, "b", "settled", output="1 match"))
    group = group_entry(turn, 0, "m", "en")
    assert group["header"] == "Searching for OAut"  # b's intent as far as it streamed
    assert group["suffix"] == " — github"
    assert card_entry(turn, "a", "en")["label_key"] != live_key  # the crossfade plays once


def test_the_detail_of_a_card_has_its_arguments_and_once_settled_its_result() -> None:
    turn = two_calls()
    detail = call_detail(turn, "a", "en")
    assert '"query": "mcp"' in detail["arguments"]
    assert detail["label"] == "Searching for MCP wiring" and detail["result"] == ""
    turn.apply(CallSettled(7, "a", "settled", output="3 matches"))
    assert call_detail(turn, "a", "en")["result"] == "3 matches"
    turn.apply(CallSettled(8, "b", "error", error="x" * 7000))
    result = call_detail(turn, "b", "en")["result"]
    assert result.startswith("xxx") and result.endswith("…") and len(result) == 6001
    assert call_detail(turn, "nope", "en") == {"label": "", "arguments": "", "result": ""}


def test_the_detail_label_is_whole_and_keeps_the_sibling_suffix() -> None:
    turn = identical_pair(intent="Searching " + "deeply " * 30)
    label = call_detail(turn, "a", "en")["label"]
    assert label == "Searching " + "deeply " * 29 + 'deeply · "oauth"'


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
    assert hold.due_ms() == 150 and hold.held() == ["g"] and hold.ready() == []
    hold.now_ms = 200
    assert hold.ready() == ["g"]
    assert hold("g", "second") == "second"
    assert hold.due_ms() is None and hold.held() == []


def test_a_held_header_shows_in_the_group_record() -> None:
    hold = HeaderHold(min_ms=200)
    turn = two_calls()
    assert group_entry(turn, 0, "m", "en", hold)["header"] == "Searching for OAut"
    turn.apply(ArgsDelta(7, "b", "h"))  # grows the same label: shown at once
    assert group_entry(turn, 0, "m", "en", hold)["header"] == "Searching for OAuth"
    turn.apply(CallStarted(8, "c", "search_code", 0, "github", True))
    turn.apply(ArgsDelta(9, "c", '{"intent": "Listing"'))
    hold.now_ms = 100  # a different label too soon: held
    assert group_entry(turn, 0, "m", "en", hold)["header"] == "Searching for OAuth"
    assert group_entry(turn, 0, "m", "en")["header"] == "Listing"


def streaming(n: int) -> TurnView:
    turn = TurnView()
    for i in range(n):
        turn.apply(CallStarted(2 * i + 1, f"c{i}", "read_file", 0, None, True))
        turn.apply(ArgsDelta(2 * i + 2, f"c{i}", '{"intent": "Reading'))
    return turn


def test_a_crowded_group_calms_its_cards_but_a_small_one_does_not() -> None:
    assert not group_entry(streaming(CALM_AFTER), 0, "m", "en")["calm"]
    assert group_entry(streaming(CALM_AFTER + 1), 0, "m", "en")["calm"]


def test_a_long_group_renders_lazily() -> None:
    assert not group_entry(streaming(LAZY_AFTER), 0, "m", "en")["lazy"]
    assert group_entry(streaming(LAZY_AFTER + 1), 0, "m", "en")["lazy"]


def test_the_goal_line_is_the_chosen_goals_description_and_empty_without_one() -> None:
    assert goal_line(TurnView()) == ""
    chosen = TurnView.replay([GoalSelected(1, "research", "Find things in the code")])
    assert goal_line(chosen) == "Find things in the code"
    assert turn_entry(chosen, "en")["goal"] == "Find things in the code"


def timed_pair() -> TurnView:
    """Two calls started at 100.0 s and 100.5 s; `a` settles at 101.25 s."""
    turn = TurnView()
    a = json.dumps({"intent": "Searching", "query": "a"})
    events: list[TurnEvent] = [
        CallStarted(1, "a", "search_code", 0, None, True, at=100.0),
        ArgsComplete(2, "a", a),
        CallStarted(3, "b", "search_code", 0, None, True, at=100.5),
        CallSettled(4, "a", "settled", output="1 match", at=101.25),
    ]
    for event in events:
        turn.apply(event)
    return turn


def test_a_running_call_ticks_from_its_start_and_a_settled_one_shows_its_duration() -> None:
    turn = timed_pair()
    settled, running = card_entry(turn, "a", "en"), card_entry(turn, "b", "en")
    assert (settled["started_at"], settled["settled_at"]) == ("100000", "101250")
    assert settled["elapsed"] == "1.2s" and not settled["ticking"]
    assert (running["started_at"], running["settled_at"], running["elapsed"]) == ("100500", "", "")
    assert running["ticking"]


def test_a_group_ticks_while_any_call_runs_then_shows_its_wall_time() -> None:
    turn = timed_pair()
    group = group_entry(turn, 0, "m", "en")
    assert (group["started_at"], group["ticking"], group["elapsed"]) == ("100000", True, "")
    turn.apply(CallSettled(5, "b", "settled", output="2 matches", at=104.5))
    group = group_entry(turn, 0, "m", "en")
    assert (group["started_at"], group["settled_at"]) == ("100000", "104500")
    assert (group["elapsed"], group["ticking"]) == ("4.5s", False)


def test_calls_without_timestamps_show_no_time() -> None:
    turn = two_calls()
    assert all(
        card_entry(turn, c, "en")["started_at"] == "" and not card_entry(turn, c, "en")["ticking"]
        for c in ("a", "b")
    )
    group = group_entry(turn, 0, "m", "en")
    assert group["started_at"] == "" and not group["ticking"]


def identical_pair(complete_b: bool = True, intent: str = "Searching the codebase") -> TurnView:
    turn = TurnView()
    a = json.dumps({"intent": intent, "query": "oauth"})
    b = json.dumps({"intent": intent, "query": "mcp"})
    events: list[TurnEvent] = [
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


def labels(turn: TurnView) -> list[str]:
    suffixes = group_suffixes(turn, ("a", "b"), "en")
    return [card_entry(turn, c, "en", s)["label"] for c, s in zip("ab", suffixes, strict=True)]


def test_identical_sibling_intents_are_disambiguated_but_the_header_is_not() -> None:
    turn = identical_pair(complete_b=False)
    # b's arguments are not final yet: no suffix for either until they are.
    assert labels(turn) == ["Searching the codebase"] * 2
    turn.apply(
        ArgsComplete(6, "b", json.dumps({"intent": "Searching the codebase", "query": "mcp"}))
    )
    assert labels(turn) == ['Searching the codebase · "oauth"', 'Searching the codebase · "mcp"']
    assert group_entry(turn, 0, "m", "en")["header"] == "Searching the codebase"


def test_a_truncated_disambiguated_label_keeps_its_suffix_in_view() -> None:
    same = "Searching " + "deeply " * 30
    turn = identical_pair(intent=same)
    assert labels(turn)[0].endswith('… · "oauth"')
    assert card_title(turn, "a", "en", ' · "oauth"') == same.strip() + ' · "oauth"'


def test_a_short_label_has_no_title_and_a_long_one_its_whole_text() -> None:
    turn = two_calls()
    assert card_title(turn, "a", "en") == "" and group_title(turn, 0, "en") == ""
    long = "Reading " + "the module " * 40
    turn.apply(ArgsDelta(7, "b", "x " + long))
    assert card_title(turn, "b", "en") == "Searching for OAut" + "x " + long.strip()
    assert group_title(turn, 0, "en") == card_title(turn, "b", "en")


def test_a_streaming_title_follows_only_the_title_window_until_the_intent_is_complete() -> None:
    intent = "Reading " + "the module " * 400  # past TITLE_WINDOW
    turn = TurnView()
    turn.apply(CallStarted(1, "a", "read_file", 0, None, True))
    turn.apply(CallStarted(2, "b", "read_file", 0, None, True))
    turn.apply(ArgsDelta(3, "a", json.dumps({"intent": intent})[:-2]))
    assert len(card_title(turn, "a", "en")) <= TITLE_WINDOW
    assert len(group_title(turn, 0, "en")) <= TITLE_WINDOW
    turn.apply(ArgsDelta(4, "a", '"}'))
    assert card_title(turn, "a", "en") == intent.strip()


def test_the_timeline_appears_above_three_calls() -> None:
    turn = TurnView()
    for i in range(TIMELINE_AFTER + 1):
        turn.apply(CallStarted(i + 1, f"c{i}", "read_file", 0, None, True))
        assert has_timeline(turn) == (i >= TIMELINE_AFTER)
        assert turn_entry(turn, "en")["timeline"] == (i >= TIMELINE_AFTER)


def test_a_summarized_group_starts_closed_and_has_a_header_only_open_key() -> None:
    turn = two_calls()
    group = group_entry(turn, 0, "m", "en")
    assert group["open"] and group["compact_key"] == compact_key(group["key"]) == "m:0:compact"
    turn.apply(CallSettled(7, "a", "settled"))
    turn.apply(CallSettled(8, "b", "settled"))
    turn.apply(ActivityLabel(9, 0, "Looked for the wiring"))
    assert not group_entry(turn, 0, "m", "en")["open"]


def test_a_settled_duration_reads_the_same_as_its_own_timestamps() -> None:
    # 100.0004 s and 100.5 s are stamped as 100000 ms and 100500 ms: the page shows, and
    # a reader can check, 0.5 s, even though the unrounded difference is 499.6 ms.
    turn = TurnView()
    turn.apply(CallStarted(1, "a", "search_code", 0, None, True, at=100.0004))
    turn.apply(CallSettled(2, "a", "settled", output="ok", at=100.5))
    card = card_entry(turn, "a", "en")
    assert (card["started_at"], card["settled_at"], card["elapsed"]) == ("100000", "100500", "0.5s")


@pytest.mark.parametrize("state", CALL_STATES)
def test_a_card_stops_shimmering_and_ticking_exactly_when_its_call_ends(state: CallState) -> None:
    turn = TurnView.replay(events_reaching(state))
    assert group_entry(turn, 0, "m", "en")["single"]  # one call: its card alone
    card = card_entry(turn, "a", "en")
    ended = state in FINAL_STATES
    assert card["state"] == state
    assert (card["live"], card["ticking"]) == (not ended, not ended)
    assert card["elapsed"] == ("1.2s" if ended else "")
    assert card["label_key"] == f"a:{'settled' if ended else 'live'}"


@pytest.mark.parametrize(
    ("stop_reason", "error", "status"),
    [
        ("end_turn", None, "complete"),
        ("cancelled", None, "cancelled"),
        ("interrupted", None, "cancelled"),
        ("end_turn", "boom", "error"),
    ],
)
def test_the_turn_status_is_streaming_until_it_ends(
    stop_reason: str, error: str | None, status: str
) -> None:
    turn = TurnView.replay([TextDelta(1, "Hi")])
    assert turn_entry(turn, "en")["status"] == "streaming"
    turn.apply(TurnDone(2, stop_reason, error))
    entry = turn_entry(turn, "en")
    assert entry["status"] == status
    assert bool(entry["failure"]) == (error is not None)


def test_an_empty_answer_says_so() -> None:
    entry = turn_entry(TurnView.replay([TurnDone(1, "end_turn")]), "en")
    assert entry["failure"] and entry["failure_hint"] and entry["error"] == ""


def test_an_unknown_call_is_an_empty_card() -> None:
    card = card_entry(TurnView(), "nope", "en")
    assert card["call_id"] == "nope" and card["label"] == "" and not card["live"]
