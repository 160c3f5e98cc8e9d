from __future__ import annotations

from typing import Any

import pytest

from intent_ui.core.header import group_header, tool_name_summary
from intent_ui.core.labels import card_label
from intent_ui.core.sanitize import sanitize_label
from tests.support.label_helpers import MCP, OAUTH, SEARCHED, call


def test_no_intent_anywhere_keeps_todays_header_exactly() -> None:
    calls = [call("a", "settled", carries_intent=False), call("b", "settled", carries_intent=False)]
    header = group_header(calls)
    assert header.full_text == "Used 2 tools — github"
    assert (header.text, header.server_suffix) == ("Used 2 tools", " — github")
    assert header.source == "count"
    assert header.aria_label == "Used 2 tools — github"
    assert [card_label(c) for c in calls] == ["Ran search_code in github"] * 2


def test_count_header_while_streaming_without_intents_keeps_the_suffix() -> None:
    header = group_header([call("a"), call("b")])
    assert header.full_text == "Used 2 tools — github"
    assert header.phase == "in_flight"
    assert header.live


def test_mixed_servers_have_no_suffix() -> None:
    calls = [call("a", "settled", server="github"), call("b", "settled", server="gitlab")]
    assert group_header(calls).full_text == "Used 2 tools"


def test_native_tools_have_no_suffix() -> None:
    calls = [call("a", "settled", server=None), call("b", "settled", server=None)]
    assert group_header(calls).full_text == "Used 2 tools"
    assert tool_name_summary(calls) is None


def test_header_shows_the_latest_in_flight_intent() -> None:
    calls = [
        call("a", "settled", intent=MCP, outcome_patch=SEARCHED, label_seq=5),
        call("b", "streaming", intent="Searching for OAuth han", label_seq=4),
    ]
    header = group_header(calls)
    assert header.text == "Searching for OAuth han"
    assert header.source == "intent"
    assert header.phase == "in_flight"
    assert header.live
    assert header.server_suffix == ""  # the live intent is shown bare


def test_in_flight_intent_picks_the_highest_seq_not_list_order() -> None:
    calls = [
        call("a", "running", intent=OAUTH, label_seq=9),
        call("b", "running", intent=MCP, label_seq=3),
    ]
    assert group_header(calls).text == OAUTH


def test_in_flight_call_without_intent_leaves_the_settled_outcome() -> None:
    calls = [
        call("a", "settled", intent=MCP, outcome="Found 2 files", label_seq=3),
        call("b", label_seq=4),
    ]
    header = group_header(calls)
    assert header.text == "Found 2 files"
    assert header.source == "outcome"
    assert header.phase == "in_flight"


@pytest.mark.parametrize("other", ["streaming", "running", "background"])
def test_a_settled_outcome_shown_while_another_call_is_in_flight_does_not_shimmer(
    other: Any,
) -> None:
    # The other call has no intent to show yet, so the header shows a finished call's
    # outcome: that text is not live, and shimmering it would claim it is still happening.
    calls = [
        call("a", "settled", intent=MCP, outcome="Found 2 files", label_seq=3),
        call("b", other, label_seq=4),
    ]
    header = group_header(calls)
    assert (header.text, header.source) == ("Found 2 files", "outcome")
    assert not header.live


def test_the_header_shimmers_again_once_an_in_flight_intent_takes_over() -> None:
    calls = [
        call("a", "settled", intent=MCP, outcome="Found 2 files", label_seq=3),
        call("b", "streaming", intent="Searching for OAu", label_seq=4),
    ]
    header = group_header(calls)
    assert (header.text, header.source) == ("Searching for OAu", "intent")
    assert header.live


def test_header_shows_the_latest_settled_outcome_when_all_settled() -> None:
    calls = [
        call("a", "settled", intent=MCP, outcome_patch=SEARCHED, label_seq=6),
        call("b", "settled", intent=OAUTH, outcome_patch=SEARCHED, label_seq=8),
    ]
    header = group_header(calls)
    assert header.full_text == "Searched for OAuth handling — github"
    assert header.source == "outcome"
    assert header.phase == "settled"
    assert not header.live


def test_settled_header_never_reverts_to_the_count() -> None:
    calls = [call("a", "settled", intent=OAUTH, label_seq=2), call("b", "settled", label_seq=7)]
    header = group_header(calls)
    assert header.text == OAUTH
    assert header.source == "outcome"


def test_out_of_order_settlement_does_not_rewind_the_header() -> None:
    # b settled first (seq 5); the slow a settled later (seq 9) and sits first in the list.
    calls = [
        call("a", "settled", intent=MCP, outcome="Found MCP wiring", label_seq=9),
        call("b", "settled", intent=OAUTH, outcome="Found OAuth handling", label_seq=5),
    ]
    assert group_header(calls).text == "Found MCP wiring"
    assert group_header(list(reversed(calls))).text == "Found MCP wiring"


def test_error_call_can_be_the_latest_settled_header() -> None:
    calls = [
        call("a", "settled", intent=MCP, label_seq=2),
        call("b", "error", intent=OAUTH, label_seq=3),
    ]
    assert group_header(calls).text == "Failed: Searching for OAuth handling"


def test_resolved_summary_takes_over_and_collapses() -> None:
    calls = [
        call("a", "settled", intent=MCP, outcome="Found MCP wiring", label_seq=9),
        call("b", "settled", intent=OAUTH, outcome="Found OAuth handling", label_seq=5),
    ]
    header = group_header(calls, summary="Traced OAuth and MCP wiring in the router")
    assert header.text == "Traced OAuth and MCP wiring in the router"
    assert header.full_text == "Traced OAuth and MCP wiring in the router — github"
    assert header.source == "summary"
    assert header.phase == "summarized"
    assert header.collapse
    assert header.aria_label == "Traced OAuth and MCP wiring in the router — github, 2 tools"


@pytest.mark.parametrize("pending", [None, "", "   ", "\n"])
def test_pending_or_blank_summary_leaves_the_settled_header(pending: str | None) -> None:
    calls = [
        call("a", "settled", intent=MCP, label_seq=1),
        call("b", "settled", intent=OAUTH, label_seq=2),
    ]
    header = group_header(calls, summary=pending)
    assert header.text == OAUTH
    assert header.source == "outcome"
    assert not header.collapse


def test_intent_labelled_group_without_summary_does_not_collapse() -> None:
    in_flight = [call("a", "running", intent=OAUTH, label_seq=1), call("b", label_seq=2)]
    settled = [call("a", "settled", intent=OAUTH, label_seq=3), call("b", "settled", label_seq=4)]
    assert not group_header(in_flight).collapse
    assert not group_header(settled).collapse


def test_aria_label_keeps_the_count_for_intent_headers() -> None:
    header = group_header([call("a", "running", intent=OAUTH, label_seq=1), call("b", label_seq=2)])
    assert header.aria_label == "Searching for OAuth handling, 2 tools"


def test_a_live_header_is_named_by_its_shown_text_and_a_settled_one_in_full() -> None:
    """A streaming intent changes the header on every fragment: its accessible name
    follows the capped text on screen, not the growing whole (which is the title)."""
    long_intent = "Searching " + "very " * 40 + "deep"
    live = group_header(
        [call("a", "running", intent=long_intent, label_seq=1), call("b", label_seq=2)]
    )
    assert live.aria_label == f"{sanitize_label(long_intent).text}, 2 tools"
    done = [
        call("a", "settled", intent=long_intent, label_seq=1),
        call("b", "settled", label_seq=2),
    ]
    assert group_header(done).aria_label == f"{long_intent} — github, 2 tools"


def test_aria_label_is_one_clean_line() -> None:
    header = group_header([call("a", "running", intent="Reading\nfile <b>x</b>", label_seq=1)])
    assert header.aria_label == "Reading file <b>x</b>, 1 tool"


def test_subagent_group_counts_agents_with_its_glyph() -> None:
    running = [call(c, tool="subagent", server=None, carries_intent=False) for c in "ab"]
    header = group_header(running)
    assert (header.text, header.glyph, header.source) == (
        "Running 2 agents",
        "subagents",
        "subagents",
    )
    done = [call(c, "settled", tool="subagent", server=None, carries_intent=False) for c in "ab"]
    assert group_header(done).text == "Ran 2 agents"
    assert group_header(done).aria_label == "Ran 2 agents"


def test_subagent_group_keeps_its_glyph_while_showing_intent_text() -> None:
    calls = [
        call("a", "running", tool="subagent", server=None, intent="Delegating the OAuth audit"),
        call("b", "streaming", tool="subagent", server=None),
    ]
    header = group_header(calls)
    assert header.text == "Delegating the OAuth audit"
    assert header.glyph == "subagents"
    assert header.aria_label == "Delegating the OAuth audit, 2 tools"


def test_ask_question_group_counts_questions_with_its_glyph() -> None:
    asking = [call(c, tool="ask_user_question", server=None, carries_intent=False) for c in "ab"]
    assert group_header(asking).text == "Asking 2 questions"
    assert group_header(asking).glyph == "questions"
    asked = [call(c, "settled", tool="ask_user_question", server=None) for c in "ab"]
    assert group_header(asked).text == "Asked 2 questions"


def test_ask_question_group_keeps_its_glyph_while_showing_intent_text() -> None:
    calls = [
        call("a", "settled", tool="ask_user_question", server=None, intent="Asking which DB"),
        call("b", "settled", tool="ask_user_question", server=None),
    ]
    header = group_header(calls)
    assert (header.text, header.glyph, header.source) == ("Asking which DB", "questions", "outcome")


def test_mixed_categories_use_the_tools_glyph() -> None:
    calls = [call("a", tool="subagent", server=None), call("b", tool="read_file", server=None)]
    assert group_header(calls).glyph == "tools"


def test_backgrounded_dispatch_keeps_the_in_flight_header() -> None:
    calls = [
        call("a", "settled", intent=MCP, outcome="Found MCP wiring", label_seq=6),
        call("b", "background", intent=OAUTH, label_seq=2),
    ]
    header = group_header(calls)
    assert header.text == "Searching for OAuth handling · in background"
    assert header.phase == "in_flight"
    assert header.live


def test_gate_a_business_intent_never_reaches_the_header() -> None:
    calls = [
        call("a", "settled", carries_intent=False, intent="billing_inquiry", label_seq=3),
        call("b", "settled", carries_intent=False, intent="refund", label_seq=4),
    ]
    assert group_header(calls).full_text == "Used 2 tools — github"


def test_header_in_spanish() -> None:
    calls = [call("a", "settled", carries_intent=False), call("b", "settled", carries_intent=False)]
    header = group_header(calls, lang="es")
    assert header.full_text == "Se usaron 2 herramientas — github"
    intent_header = group_header([call("a", "running", intent="Buscando", label_seq=1)], lang="es")
    assert intent_header.aria_label == "Buscando, 1 herramienta"


def test_empty_group_does_not_crash() -> None:
    header = group_header([])
    assert (header.text, header.count, header.glyph) == ("Used 0 tools", 0, "tools")
