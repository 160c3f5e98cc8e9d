"""The intents dashboard's rules (`core/dashboard.py`): what counts as the same intent, as
a vague one, and the copy a finished turn leaves for the dashboard."""

from __future__ import annotations

import json

import pytest

from intent_ui.core.capabilities.intent import with_intent
from intent_ui.core.capture import INTENT_CAPTURE_LIMIT
from intent_ui.core.dashboard import (
    CallCopy,
    chart_bucket_days,
    copy_turn_calls,
    dashboard_text,
    day_label,
    declares_required_intent,
    intent_hash,
    intent_key,
    is_vague,
    since_day,
    utc_day,
)
from intent_ui.core.events import (
    ArgsComplete,
    ArgsDelta,
    CallSettled,
    CallStarted,
    TurnDone,
    TurnEvent,
)
from intent_ui.core.turn import TurnView

# --- the same intent -------------------------------------------------------------------------


def test_case_punctuation_and_spacing_do_not_make_another_intent() -> None:
    assert intent_key("Reading  the CONFIG.") == "reading the config"
    assert intent_hash("Reading the config.") == intent_hash("reading the config")
    assert intent_hash("Reading the config") != intent_hash("Reading the configs")


def test_text_without_words_has_no_digest() -> None:
    assert intent_hash("…!?") is None
    assert intent_key("") == ""


def test_the_digest_fits_a_signed_bigint() -> None:
    digest = intent_hash("Searching for OAuth handling in the callback router")
    assert digest is not None and -(2**63) <= digest < 2**63


# --- vague intents ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("intent", "tool", "vague"),
    [
        ("Fjords", "book_car", True),  # one short word
        ("Ski trip", "book_car", True),  # two short words
        ("Refactoring authentication", "edit_file", False),  # two words, but long ones
        ("Calling the tool", "search", True),  # nothing but generic words
        ("Called book_car", "book_car", True),  # generic words and the tool's own name
        ("Getting the data for the user", None, True),
        ("Listing the files", "list_files", True),
        ("Searching for OAuth handling in the callback router", "search_code", False),
        ("Weekend in Munich", "book_car", False),
        ("Checking 42 files", "grep", True),  # a number says nothing on its own
        ("コールバックルーターでOAuthの処理を探しています", "search", False),
        (None, "search", False),  # no intent: nothing to judge
        ("", "search", False),
    ],
)
def test_vague_intents(intent: str | None, tool: str | None, vague: bool) -> None:
    assert is_vague(intent, tool) is vague


# --- the copy the dashboard keeps -------------------------------------------------------------


def test_the_copy_is_stripped_of_pii_before_it_is_clamped() -> None:
    # An address that straddles the cap is replaced whole, not cut in half and kept.
    text = "x" * (INTENT_CAPTURE_LIMIT - 5) + " mail jane.doe@example.com"
    copy = dashboard_text(text)
    assert copy is not None and "jane" not in copy and "example" not in copy
    assert dashboard_text("Call 415-555-0123 about card 4111 1111 1111 1111") == (
        "Call [phone] about card [card]"
    )


def test_the_copy_is_one_line_without_control_characters() -> None:
    assert dashboard_text("Reading\nthe\x00 config\t file") == "Reading the config file"
    assert dashboard_text("   ") is None
    assert dashboard_text(None) is None


def test_a_native_schema_declares_a_required_intent_and_an_injected_one_does_not() -> None:
    native = with_intent({"type": "object", "properties": {"path": {"type": "string"}}})
    assert declares_required_intent(native)
    optional = with_intent({"type": "object", "properties": {}}, required=False)
    assert not declares_required_intent(optional)
    assert not declares_required_intent({"type": "object", "properties": {"path": {}}})
    # A business parameter named `intent` is not the label.
    business = {"properties": {"intent": {"type": "string"}}, "required": ["intent"]}
    assert not declares_required_intent(business)
    assert not declares_required_intent(None)


def _turn(*calls: tuple[str, str | None, str | None, str, bool]) -> TurnView:
    """(tool, server, intent, final state, label) per call: started at 100, settled at
    100.5, the turn ended at 101."""
    events: list[TurnEvent] = []
    seq = 0

    def nxt() -> int:
        nonlocal seq
        seq += 1
        return seq

    for i, (tool, server, intent, _state, label) in enumerate(calls):
        args = json.dumps({"intent": intent, "q": i} if intent is not None else {"q": i})
        events += [
            CallStarted(nxt(), f"c{i}", tool, 0, server, label_bearing=label, at=100.0),
            ArgsDelta(nxt(), f"c{i}", args),
            ArgsComplete(nxt(), f"c{i}", args),
        ]
    for i, (_tool, _server, _intent, state, _label) in enumerate(calls):
        if state in ("settled", "error"):
            error = "It broke" if state == "error" else None
            events.append(CallSettled(nxt(), f"c{i}", state, error=error, at=100.5))  # type: ignore[arg-type]
    events.append(TurnDone(nxt(), "end_turn", at=101.0))
    return TurnView.replay(events)


def _copies(view: TurnView, *, omit: frozenset[str] = frozenset()) -> list[CallCopy]:
    return copy_turn_calls(
        view,
        required=lambda tool, server: server is None,
        omitted=lambda tool, server: tool in omit,
        ended_at=101.0,
    )


def test_each_call_is_copied_with_how_its_intent_was_asked_for() -> None:
    view = _turn(
        ("read_file", None, "Reading the callback router", "settled", True),
        ("search_issues", "github", "Looking for OAuth bugs", "error", True),
        ("list_files", None, None, "settled", True),
        ("legacy", None, None, "settled", False),
    )
    read, search, listed, legacy = _copies(view)
    assert (read.intent_context, read.has_intent, read.status) == ("required", True, "ok")
    assert (read.intent, read.intent_hash) == (
        "Reading the callback router",
        intent_hash("Reading the callback router"),
    )
    assert (search.intent_context, search.server, search.status) == ("optional", "github", "error")
    assert (listed.intent_context, listed.has_intent, listed.intent) == ("required", False, None)
    assert (legacy.intent_context, legacy.has_intent) == ("none", False)
    assert [c.position for c in (read, search, listed, legacy)] == [0, 1, 2, 3]
    assert (read.started_at, read.duration_ms) == (100.0, 500.0)


def test_a_call_the_end_of_the_turn_cut_off_is_cancelled() -> None:
    (copy,) = _copies(_turn(("read_file", None, "Reading the router", "running", True)))
    assert copy.status == "cancelled"


def test_identical_intents_of_sibling_calls_to_one_tool_are_both_marked() -> None:
    view = _turn(
        ("read_file", None, "Reading the config", "settled", True),
        ("read_file", None, "reading the config.", "settled", True),
        ("grep", None, "Reading the config", "settled", True),  # another tool: not a sibling
        ("read_file", None, "Reading the tests", "settled", True),
    )
    assert [c.duplicate for c in _copies(view)] == [True, True, False, False]


def test_vague_intents_are_marked_by_the_tool_they_were_written_for() -> None:
    view = _turn(
        ("book_car", None, "Called book_car", "settled", True),
        ("book_car", None, "Booking a compact car in Munich for the weekend", "settled", True),
    )
    assert [c.vague for c in _copies(view)] == [True, False]


def test_an_opted_out_tool_keeps_no_text_only_that_an_intent_was_written() -> None:
    view = _turn(
        ("send_message", None, "Telling Jane Doe her refund is late", "settled", True),
        ("send_message", None, "Telling Jane Doe her refund is late", "settled", True),
    )
    copies = _copies(view, omit=frozenset({"send_message"}))
    assert [(c.intent, c.outcome, c.intent_hash) for c in copies] == [(None, None, None)] * 2
    assert [(c.has_intent, c.vague, c.duplicate) for c in copies] == [(True, False, False)] * 2


def test_a_made_up_tool_name_is_stored_as_one_clean_line() -> None:
    (copy,) = _copies(_turn(("evil\x00\nname", None, "Reading it all now", "settled", True)))
    assert copy.tool == "evil name"


def test_the_copy_is_redacted_and_the_conversation_is_not() -> None:
    intent = "Emailing jane.doe@example.com the invoice"
    view = _turn(("send_email", None, intent, "settled", True))
    (copy,) = _copies(view)
    assert copy.intent == "Emailing [email] the invoice"
    record = view.call("c0")
    assert record is not None and record.intent == intent


# --- days -----------------------------------------------------------------------------------------


def test_days_and_periods() -> None:
    assert utc_day(86_400 * 3 + 5) == 3
    assert utc_day(0) == 0
    assert day_label(20_500) == "2026-02-16"
    assert since_day("7d", 100) == 94  # seven days, today included
    assert since_day("1d", 100) == 100
    assert since_day("all", 100) is None
    assert since_day("forever", 100) is None


@pytest.mark.parametrize(
    ("span", "bucket"), [(1, 1), (92, 1), (93, 7), (7 * 92, 7), (7 * 92 + 1, 30), (3650, 30)]
)
def test_the_chart_groups_days_so_it_stays_readable(span: int, bucket: int) -> None:
    assert chart_bucket_days(10, 10 + span - 1) == bucket
