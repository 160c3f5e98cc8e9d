from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest

from intent_ui.core.events import (
    ActivityLabel,
    ArgsComplete,
    ArgsDelta,
    CallBackgrounded,
    CallSettled,
    CallStarted,
    GoalSelected,
    SeqCounter,
    TextDelta,
    TurnDone,
    event_from_record,
    event_to_record,
)
from intent_ui.core.states import CALL_STATES, FINAL_STATES
from intent_ui.core.turn import TextPart, ToolGroup, TurnView
from tests.support.label_helpers import SEARCHED
from tests.support.turn_calls import call_in, call_view_in

MCP_ARGS = '{"intent":"Searching for MCP wiring","query":"mcp client"}'
OAUTH_ARGS = '{"intent":"Searching for OAuth handling","query":"oauth callback"}'


Seq = Callable[[], int]
"""The next seq of a turn's events, as the session's `SeqCounter` stamps them."""


def start(seq: Seq, call_id: str, *, group: int = 0, label_bearing: bool = True) -> CallStarted:
    return CallStarted(
        seq(), call_id, "search_code", group, server="github", label_bearing=label_bearing
    )


def turn_with(*call_ids: str) -> tuple[Seq, TurnView]:
    """A turn whose calls `call_ids` have started (see `start`), and its next seq."""
    seq = SeqCounter().next
    turn = TurnView()
    for call_id in call_ids:
        turn.apply(start(seq, call_id))
    return seq, turn


def chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def test_two_parallel_calls_streamed_chunk_by_chunk() -> None:
    seq, turn = turn_with("a", "b")
    assert turn.group_header(0).full_text == "Used 2 tools — github"
    assert turn.card_label("a") == "Running search_code in github"

    headers: list[str] = []
    for piece_a, piece_b in itertools.zip_longest(chunks(MCP_ARGS, 7), chunks(OAUTH_ARGS, 5)):
        for call_id, piece in (("a", piece_a), ("b", piece_b)):
            if piece is not None:
                turn.apply(ArgsDelta(seq(), call_id, piece))
                headers.append(turn.group_header(0).text)

    # The header tracks the live edge: a's intent as it grows, then b's from the moment
    # b's first characters land (b changed state last), whatever a streams afterwards.
    assert headers[:8] == [
        "Used 2 tools",
        "Used 2 tools",
        "Sea",
        "Sea",
        "Searching ",
        "Sear",
        "Sear",
        "Searching",
    ]
    assert set(headers[8:]) <= {
        "Searching",
        "Searching for ",
        "Searching for OAuth",
        "Searching for OAuth hand",
        "Searching for OAuth handling",
    }
    assert headers[-1] == "Searching for OAuth handling"
    assert turn.card_label("a") == "Searching for MCP wiring"
    assert call_in(turn, "a").state == "streaming"  # parseable JSON never settles a call

    turn.apply(ArgsComplete(seq(), "a", MCP_ARGS))
    turn.apply(ArgsComplete(seq(), "b", OAUTH_ARGS))
    assert call_in(turn, "a").state == "running"
    assert turn.group_header(0).text == "Searching for OAuth handling"

    turn.apply(CallSettled(seq(), "a", "settled", output="3 hits", outcome_patch=SEARCHED))
    header = turn.group_header(0)
    assert header.text == "Searching for OAuth handling"  # b is still in flight
    assert turn.card_label("a") == "Searched for MCP wiring"

    turn.apply(CallSettled(seq(), "b", "settled", output="12 hits", outcome="Found 12 matches"))
    header = turn.group_header(0)
    assert header.full_text == "Found 12 matches — github"
    assert header.phase == "settled"
    assert not header.collapse
    assert [turn.card_label(c) for c in "ab"] == ["Searched for MCP wiring", "Found 12 matches"]

    turn.apply(ActivityLabel(seq(), 0, "Located the OAuth callback and MCP client"))
    header = turn.group_header(0)
    assert header.text == "Located the OAuth callback and MCP client"
    assert header.collapse
    assert header.aria_label.endswith(", 2 tools")


@pytest.mark.parametrize("split", range(len(OAUTH_ARGS) + 1))
def test_every_split_point_gives_the_same_intent(split: int) -> None:
    seq, turn = turn_with("b")
    for piece in (OAUTH_ARGS[:split], OAUTH_ARGS[split:]):
        turn.apply(ArgsDelta(seq(), "b", piece))
    assert call_in(turn, "b").intent == "Searching for OAuth handling"
    assert call_in(turn, "b").intent_complete
    assert turn.arguments("b") == OAUTH_ARGS


def test_label_seq_is_stamped_when_the_first_intent_shows() -> None:
    seq, turn = turn_with()
    turn.apply(start(seq, "a"))  # seq 1
    turn.apply(ArgsDelta(seq(), "a", '{"intent":"'))  # seq 2: nothing displayable yet
    assert call_in(turn, "a").label_seq == 0
    turn.apply(ArgsDelta(seq(), "a", "Rea"))  # seq 3
    turn.apply(ArgsDelta(seq(), "a", "ding"))  # seq 4: growth does not restamp
    assert call_in(turn, "a").label_seq == 3


def test_label_inputs_are_rebuilt_only_when_a_label_could_change() -> None:
    seq, turn = turn_with("a")
    turn.apply(ArgsDelta(seq(), "a", '{"intent":"Rea'))
    reading = turn.call_view("a")
    assert turn.call_view("a") is reading  # asked again: the same inputs
    turn.apply(ArgsDelta(seq(), "a", 'ding the docs", "query": "o'))
    grown = turn.call_view("a")
    assert grown is not reading and turn.card_label("a") == "Reading the docs"
    assert turn.apply(ArgsDelta(seq(), "a", 'auth"}')) == {"a"}  # arguments only
    assert turn.call_view("a") is grown
    turn.apply(CallSettled(seq(), "a", "settled", output="3 files"))
    assert call_view_in(turn, "a").state == "settled"
    assert turn.card_label("a") == "Reading the docs"


def test_out_of_order_settlement_does_not_rewind_the_header() -> None:
    seq, turn = turn_with("a", "b")
    turn.apply(ArgsComplete(seq(), "a", MCP_ARGS))
    turn.apply(ArgsComplete(seq(), "b", OAUTH_ARGS))
    turn.apply(CallSettled(seq(), "b", "settled", outcome="Found OAuth handling"))
    turn.apply(CallSettled(seq(), "a", "settled", outcome="Found MCP wiring"))
    # a settled last although it started first: its outcome is the header.
    assert turn.group_header(0).text == "Found MCP wiring"


def test_non_label_bearing_call_never_parses_an_intent() -> None:
    seq, turn = turn_with()
    args = '{"intent":"billing_inquiry","customer":"42"}'
    turn.apply(CallStarted(seq(), "c", "create_ticket", 0, server="crm", label_bearing=False))
    turn.apply(ArgsDelta(seq(), "c", args))
    turn.apply(ArgsComplete(seq(), "c", args))
    assert call_in(turn, "c").intent is None
    assert turn.arguments("c") == args
    assert turn.card_label("c") == "Running create_ticket in crm"
    turn.apply(CallSettled(seq(), "c", "settled", outcome="Created ticket 7"))
    assert turn.card_label("c") == "Ran create_ticket in crm"


def test_one_shot_arguments_give_the_intent_at_args_complete() -> None:
    seq, turn = turn_with("a")
    turn.apply(ArgsComplete(seq(), "a", OAUTH_ARGS))  # seq 2
    assert turn.card_label("a") == "Searching for OAuth handling"
    assert call_in(turn, "a").label_seq == 2


def test_args_complete_without_a_final_copy_keeps_the_streamed_intent() -> None:
    seq, turn = turn_with("a")
    turn.apply(ArgsDelta(seq(), "a", OAUTH_ARGS))
    turn.apply(ArgsComplete(seq(), "a", ""))
    assert turn.arguments("a") == OAUTH_ARGS
    assert turn.card_label("a") == "Searching for OAuth handling"


def test_deltas_after_args_complete_are_ignored() -> None:
    seq, turn = turn_with("a")
    turn.apply(ArgsComplete(seq(), "a", OAUTH_ARGS))
    assert turn.apply(ArgsDelta(seq(), "a", "garbage")) == set()
    assert turn.arguments("a") == OAUTH_ARGS


def test_backgrounded_dispatch_stays_in_flight_until_harvest() -> None:
    seq, turn = turn_with("a", "b")
    turn.apply(ArgsComplete(seq(), "a", MCP_ARGS))
    turn.apply(ArgsComplete(seq(), "b", OAUTH_ARGS))
    turn.apply(CallBackgrounded(seq(), "b"))
    turn.apply(CallSettled(seq(), "a", "settled", outcome="Found MCP wiring"))
    assert call_in(turn, "b").state == "background"
    header = turn.group_header(0)
    assert header.text == "Searching for OAuth handling · in background"
    assert header.live

    turn.apply(TurnDone(seq(), "end_turn"))
    assert call_in(turn, "b").state == "background"  # the turn ending does not reap it

    turn.apply(CallSettled(seq(), "b", "settled", outcome="Found 12 matches"))
    assert turn.group_header(0).text == "Found 12 matches"


def test_background_timeout_resolves_to_an_error_label() -> None:
    seq, turn = turn_with("b")
    turn.apply(ArgsComplete(seq(), "b", OAUTH_ARGS))
    turn.apply(CallBackgrounded(seq(), "b"))
    turn.apply(CallSettled(seq(), "b", "error", error="timed out"))
    assert turn.card_label("b") == "Failed: Searching for OAuth handling"


def test_identical_settle_re_emission_changes_nothing() -> None:
    seq, turn = turn_with("a")
    turn.apply(CallSettled(seq(), "a", "settled", outcome="Done"))
    stamped = call_in(turn, "a").label_seq
    assert turn.apply(CallSettled(seq(), "a", "settled", outcome="Done")) == set()
    assert call_in(turn, "a").label_seq == stamped


@pytest.mark.parametrize("stop", [("cancelled", None), ("error", "provider failed")])
def test_turn_ending_badly_cancels_unfinished_calls(stop: tuple[str, str | None]) -> None:
    seq, turn = turn_with("a", "b")
    turn.apply(ArgsDelta(seq(), "a", '{"intent":"Reading the router'))
    turn.apply(ArgsComplete(seq(), "b", OAUTH_ARGS))
    changed = turn.apply(TurnDone(seq(), stop[0], error=stop[1]))
    assert {"a", "b", "done", "header:0"} <= changed
    assert turn.card_label("a") == "Cancelled: Reading the router"
    assert turn.card_label("b") == "Cancelled: Searching for OAuth handling"
    assert call_in(turn, "b").error == stop[1]
    assert (turn.done, turn.stop_reason, turn.error) == (True, stop[0], stop[1])
    assert not turn.group_header(0).live


@pytest.mark.parametrize("state", CALL_STATES)
def test_only_a_final_state_settles_a_card(state: str) -> None:
    seq, turn = turn_with("a")
    turn.apply(ArgsDelta(seq(), "a", '{"intent":"Reading the router'))
    changed = turn.apply(CallSettled(seq(), "a", state, at=5.0))  # type: ignore[arg-type]
    later = turn.apply(ArgsDelta(seq(), "a", " and the callbacks"))
    record = turn.call("a")
    assert record is not None
    if state in FINAL_STATES:
        assert "a" in changed and (record.state, record.settled_at) == (state, 5.0)
        assert later == set()  # a settled card's arguments are final
        assert not turn.group_header(0).live
    else:
        assert changed == set() and record.state == "streaming"
        assert turn.card_label("a") == "Reading the router and the callbacks"


def test_settled_calls_survive_turn_done() -> None:
    seq, turn = turn_with("a")
    turn.apply(CallSettled(seq(), "a", "error", outcome="Rate limited"))
    turn.apply(TurnDone(seq(), "end_turn"))
    assert turn.card_label("a") == "Failed: Rate limited"


def test_blank_summary_never_overwrites_a_filled_one() -> None:
    seq, turn = turn_with("a")
    turn.apply(CallSettled(seq(), "a", "settled"))
    assert turn.apply(ActivityLabel(seq(), 0, "   ")) == set()
    assert turn.summary(0) is None
    assert turn.apply(ActivityLabel(seq(), 0, "Searched the repo")) == {"header:0"}
    turn.apply(ActivityLabel(seq(), 0, ""))
    assert turn.group_header(0).text == "Searched the repo"


def test_parts_keep_order_and_groups_gather_their_calls() -> None:
    seq, turn = turn_with()
    assert turn.apply(TextDelta(seq(), "Let me ")) == {"text", "parts"}
    assert turn.apply(TextDelta(seq(), "look.")) == {"text"}
    turn.apply(start(seq, "a", group=0))
    turn.apply(TextDelta(seq(), "And "))
    turn.apply(start(seq, "b", group=0))  # a late sibling joins its group
    turn.apply(start(seq, "c", group=1))
    turn.apply(TextDelta(seq(), "done."))
    assert turn.parts == (
        TextPart("Let me look."),
        ToolGroup(0, ("a", "b")),
        TextPart("And "),
        ToolGroup(1, ("c",)),
        TextPart("done."),
    )
    assert turn.groups() == (0, 1)
    assert turn.text == "Let me look.And done."
    assert [view.call_id for view in turn.group_calls(0)] == ["a", "b"]


def test_apply_reports_what_changed() -> None:
    seq, turn = turn_with()
    assert turn.apply(start(seq, "a")) == {"a", "header:0", "parts"}
    assert turn.apply(start(seq, "b")) == {"b", "header:0"}
    assert turn.apply(ArgsDelta(seq(), "a", '{"in')) == {"a"}  # no label change yet
    assert turn.apply(ArgsDelta(seq(), "a", 'tent":"Re')) == {"a", "header:0"}
    assert turn.apply(ArgsDelta(seq(), "a", "")) == set()


def test_events_for_unknown_calls_show_no_card() -> None:
    turn = TurnView()
    assert turn.apply(ArgsDelta(1, "ghost", "{")) == set()
    assert turn.apply(ArgsComplete(2, "ghost", "{}")) == set()
    assert turn.apply(CallBackgrounded(3, "ghost")) == set()
    assert turn.apply(CallSettled(4, "ghost", "settled")) == set()
    assert turn.parts == () and turn.call("ghost") is None


def test_duplicate_start_bad_values_and_foreign_objects_change_nothing() -> None:
    seq, turn = turn_with("a")
    turn.apply(ArgsDelta(seq(), "a", '{"intent":"Reading the router'))
    moved = CallStarted(seq(), "a", "write_file", 1, server=None, label_bearing=False)
    assert turn.apply(moved) == set()
    assert turn.apply(ArgsDelta(seq(), "a", None)) == set()  # type: ignore[arg-type]
    assert turn.apply(CallSettled(seq(), "a", "running")) == set()  # type: ignore[arg-type]
    assert turn.apply("not an event") == set()  # type: ignore[arg-type]
    assert turn.parts == (ToolGroup(0, ("a",)),)
    assert call_in(turn, "a").state == "streaming"
    assert turn.card_label("a") == "Reading the router"


def test_unknown_call_views_are_empty() -> None:
    turn = TurnView()
    assert turn.call_view("nope") is None
    assert turn.card_label("nope") == ""
    assert turn.group_calls(3) == ()
    assert turn.group_header(3).text == "Used 0 tools"


def test_subagent_calls_are_categorised_for_the_glyph() -> None:
    turn = TurnView()
    turn.apply(CallStarted(1, "s1", "subagent", 0, label_bearing=True))
    turn.apply(CallStarted(2, "s2", "subagent", 0, label_bearing=True))
    assert turn.group_header(0).text == "Running 2 agents"
    assert turn.group_header(0).glyph == "subagents"


def test_an_intent_after_other_keys_labels_the_card_once_the_arguments_are_complete() -> None:
    seq, turn = turn_with()
    args = '{"path": "src/auth.py", "intent": "Reading the OAuth callback"}'
    turn.apply(start(seq, "a"))
    turn.apply(ArgsDelta(seq(), "a", args))
    assert turn.card_label("a") == "Running search_code in github"  # only a first key streams
    turn.apply(ArgsComplete(seq(), "a", args))
    assert turn.card_label("a") == "Reading the OAuth callback"
    turn.apply(CallSettled(seq(), "a", "settled"))
    assert turn.card_label("a") == "Reading the OAuth callback"


def test_a_late_intent_of_a_call_without_a_label_is_never_read() -> None:
    seq, turn = turn_with()
    args = '{"customer": "42", "intent": "billing_inquiry"}'
    turn.apply(CallStarted(seq(), "c", "create_ticket", 0, server="crm"))
    turn.apply(ArgsComplete(seq(), "c", args))
    assert turn.card_label("c") == "Running create_ticket in crm"


def test_start_and_settle_times_come_from_the_events() -> None:
    turn = TurnView()
    turn.apply(CallStarted(1, "a", "read_file", 0, label_bearing=True, at=100.0))
    turn.apply(CallStarted(2, "b", "read_file", 0, label_bearing=True, at=100.5))
    turn.apply(CallSettled(3, "a", "settled", at=102.25))
    turn.apply(TurnDone(4, "cancelled", at=103.0))
    assert (call_in(turn, "a").started_at, call_in(turn, "a").settled_at) == (100.0, 102.25)
    assert (call_in(turn, "b").state, call_in(turn, "b").settled_at) == ("cancelled", 103.0)


def test_arguments_grow_by_appending_and_the_record_carries_only_their_length() -> None:
    seq, turn = turn_with("a")
    for piece in ('{"intent": "Writing the file", ', '"content": "', "x" * 5000, '"}'):
        turn.apply(ArgsDelta(seq(), "a", piece))
    text = turn.arguments("a")
    assert text.endswith('x"}') and call_in(turn, "a").args_len == len(text)
    assert turn.arguments("unknown") == ""


def test_a_chosen_goal_is_kept_and_reported_once() -> None:
    view = TurnView()
    assert view.goal is None
    assert view.apply(GoalSelected(1, "research", "Find things in the code")) == {"goal"}
    assert view.goal == ("research", "Find things in the code")
    assert view.apply(GoalSelected(2, "research", "Find things in the code")) == set()
    assert view.parts == ()


def test_a_goal_event_with_a_non_text_label_is_skipped() -> None:
    view = TurnView()
    assert view.apply(GoalSelected(1, "research", None)) == set()  # type: ignore[arg-type]
    assert view.goal is None
    assert view.apply(GoalSelected(2, "research", "Find things in the code")) == {"goal"}


def test_a_goal_event_round_trips_through_its_stored_record() -> None:
    event = GoalSelected(4, "research", "Find things in the code")
    kind, data = event_to_record(event)
    assert kind == "GoalSelected"
    assert event_from_record(kind, 4, data) == event
