from __future__ import annotations

import unicodedata
from typing import Any

import pytest

from intent_ui.core.labels import (
    CallView,
    DisplayText,
    MinimumDisplay,
    Sibling,
    card_is_live,
    card_label,
    default_label,
    group_header,
    has_label_text,
    sanitize_label,
    sibling_suffixes,
    tool_category,
    tool_name_summary,
)

OAUTH = "Searching for OAuth handling"
MCP = "Searching for MCP wiring"
SEARCHED = {"from": "Searching", "to": "Searched"}


def call(
    call_id: str = "a",
    state: Any = "streaming",
    *,
    tool: str = "search_code",
    server: str | None = "github",
    label_bearing: bool = True,
    **fields: Any,
) -> CallView:
    return CallView(
        call_id=call_id,
        tool=tool,
        state=state,
        server=server,
        label_bearing=label_bearing,
        category=tool_category(tool),
        **fields,
    )


# --- default labels ---------------------------------------------------------------------


def test_default_label_native_tool() -> None:
    assert default_label("read_file", None, settled=False) == "Running read_file"
    assert default_label("read_file", None, settled=True) == "Ran read_file"


def test_default_label_mcp_tool_names_the_server() -> None:
    assert default_label("search_code", "github", settled=True) == "Ran search_code in github"


def test_default_label_in_spanish_and_japanese() -> None:
    assert default_label("search_code", "github", settled=True, lang="es") == (
        "Se ejecutó search_code en github"
    )
    assert default_label("search_code", "github", settled=False, lang="ja") == (
        "search_code を実行中（github）"
    )


# --- card labels: the §5.1 table ----------------------------------------------------------


def test_streaming_with_nothing_parsable_shows_the_running_default() -> None:
    assert card_label(call(intent=None)) == "Running search_code in github"


def test_streaming_with_an_empty_partial_shows_the_running_default() -> None:
    assert card_label(call(intent="")) == "Running search_code in github"


def test_streaming_partial_intent_is_shown() -> None:
    assert card_label(call(intent="Searching for OAu")) == "Searching for OAu"


def test_running_shows_the_intent() -> None:
    assert card_label(call(state="running", intent=OAUTH)) == OAUTH


def test_running_without_intent_shows_the_running_default() -> None:
    assert card_label(call(state="running")) == "Running search_code in github"


def test_settled_outcome_wins() -> None:
    view = call(state="settled", intent=OAUTH, outcome="Found 12 matches", outcome_patch=SEARCHED)
    assert card_label(view) == "Found 12 matches"


def test_settled_blank_outcome_falls_through_to_the_patch() -> None:
    view = call(state="settled", intent=OAUTH, outcome="  ", outcome_patch=SEARCHED)
    assert card_label(view) == "Searched for OAuth handling"


def test_settled_intent_only_is_unchanged_never_tense_rewritten() -> None:
    assert card_label(call(state="settled", intent=OAUTH)) == OAUTH
    assert card_label(call(state="settled", intent="Buscando el manejo de OAuth")) == (
        "Buscando el manejo de OAuth"
    )


def test_settled_without_intent_shows_the_ran_default() -> None:
    assert card_label(call(state="settled")) == "Ran search_code in github"


def test_settled_outcome_without_intent_is_shown() -> None:
    assert card_label(call(state="settled", outcome="Found 3 files")) == "Found 3 files"


def test_two_sibling_search_code_calls_have_distinct_labels() -> None:
    first = call("a", "settled", intent=MCP, outcome_patch=SEARCHED)
    second = call("b", "running", intent=OAUTH)
    assert card_label(first) == "Searched for MCP wiring"
    assert card_label(second) == "Searching for OAuth handling"


def test_error_frames_the_tool_outcome() -> None:
    view = call(state="error", intent=OAUTH, outcome="Rate limited by GitHub")
    assert card_label(view) == "Failed: Rate limited by GitHub"


def test_error_frames_the_intent_and_never_applies_the_success_patch() -> None:
    view = call(state="error", intent=OAUTH, outcome_patch=SEARCHED)
    assert card_label(view) == "Failed: Searching for OAuth handling"


def test_error_without_intent_frames_the_default() -> None:
    assert card_label(call(state="error")) == "Failed: Ran search_code in github"


def test_cancelled_frames_the_intent() -> None:
    assert card_label(call(state="cancelled", intent=OAUTH)) == "Cancelled: " + OAUTH


def test_cancelled_without_intent_frames_the_running_default() -> None:
    assert card_label(call(state="cancelled")) == "Cancelled: Running search_code in github"


def test_background_keeps_the_intent_reframed() -> None:
    view = call(state="background", intent=OAUTH)
    assert card_label(view) == "Searching for OAuth handling · in background"


def test_background_without_intent_shows_the_running_default() -> None:
    assert card_label(call(state="background")) == "Running search_code in github"


def test_gate_a_business_intent_argument_is_not_a_label() -> None:
    crm = call(tool="create_ticket", server="crm", label_bearing=False, intent="billing_inquiry")
    assert card_label(crm) == "Running create_ticket in crm"
    settled = call(
        state="settled",
        tool="create_ticket",
        server="crm",
        label_bearing=False,
        intent="billing_inquiry",
        outcome="Created",
    )
    assert card_label(settled) == "Ran create_ticket in crm"


def test_gate_applies_to_error_framing() -> None:
    view = call(state="error", label_bearing=False, intent="billing_inquiry")
    assert card_label(view) == "Failed: Ran search_code in github"


def test_markup_only_intent_is_shown_as_text() -> None:
    view = call(state="running", intent="<img src=x onerror=alert(1)>")
    assert card_label(view) == "<img src=x onerror=alert(1)>"


def test_framing_in_spanish_and_japanese() -> None:
    assert card_label(call(state="error", intent="Buscando"), "es") == "Falló: Buscando"
    assert card_label(call(state="cancelled", intent="検索中"), "ja") == "キャンセル済み: 検索中"
    assert card_label(call(state="background", intent="検索中"), "ja") == (
        "検索中 · バックグラウンドで実行中"
    )


def test_output_reference_in_an_intent_stays_literal() -> None:
    view = call(state="settled", intent="Reading {{tool0turn0}}", outcome_patch=SEARCHED)
    assert card_label(view) == "Reading {{tool0turn0}}"


@pytest.mark.parametrize(
    ("state", "live"),
    [
        ("streaming", True),
        ("running", True),
        ("background", True),
        ("settled", False),
        ("error", False),
        ("cancelled", False),
    ],
)
def test_card_is_live(state: Any, live: bool) -> None:
    assert card_is_live(call(state=state)) is live


# --- group header -------------------------------------------------------------------------


def test_no_intent_anywhere_keeps_todays_header_exactly() -> None:
    calls = [call("a", "settled", label_bearing=False), call("b", "settled", label_bearing=False)]
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
        call("a", "settled", intent=MCP, outcome_patch=SEARCHED, seq=5),
        call("b", "streaming", intent="Searching for OAuth han", seq=4),
    ]
    header = group_header(calls)
    assert header.text == "Searching for OAuth han"
    assert header.source == "intent"
    assert header.phase == "in_flight"
    assert header.live
    assert header.server_suffix == ""  # the live intent is shown bare


def test_in_flight_intent_picks_the_highest_seq_not_list_order() -> None:
    calls = [call("a", "running", intent=OAUTH, seq=9), call("b", "running", intent=MCP, seq=3)]
    assert group_header(calls).text == OAUTH


def test_in_flight_call_without_intent_leaves_the_settled_outcome() -> None:
    calls = [call("a", "settled", intent=MCP, outcome="Found 2 files", seq=3), call("b", seq=4)]
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
        call("a", "settled", intent=MCP, outcome="Found 2 files", seq=3),
        call("b", other, seq=4),
    ]
    header = group_header(calls)
    assert (header.text, header.source) == ("Found 2 files", "outcome")
    assert not header.live


def test_the_header_shimmers_again_once_an_in_flight_intent_takes_over() -> None:
    calls = [
        call("a", "settled", intent=MCP, outcome="Found 2 files", seq=3),
        call("b", "streaming", intent="Searching for OAu", seq=4),
    ]
    header = group_header(calls)
    assert (header.text, header.source) == ("Searching for OAu", "intent")
    assert header.live


def test_header_shows_the_latest_settled_outcome_when_all_settled() -> None:
    calls = [
        call("a", "settled", intent=MCP, outcome_patch=SEARCHED, seq=6),
        call("b", "settled", intent=OAUTH, outcome_patch=SEARCHED, seq=8),
    ]
    header = group_header(calls)
    assert header.full_text == "Searched for OAuth handling — github"
    assert header.source == "outcome"
    assert header.phase == "settled"
    assert not header.live


def test_settled_header_never_reverts_to_the_count() -> None:
    calls = [call("a", "settled", intent=OAUTH, seq=2), call("b", "settled", seq=7)]
    header = group_header(calls)
    assert header.text == OAUTH
    assert header.source == "outcome"


def test_out_of_order_settlement_does_not_rewind_the_header() -> None:
    # b settled first (seq 5); the slow a settled later (seq 9) and sits first in the list.
    calls = [
        call("a", "settled", intent=MCP, outcome="Found MCP wiring", seq=9),
        call("b", "settled", intent=OAUTH, outcome="Found OAuth handling", seq=5),
    ]
    assert group_header(calls).text == "Found MCP wiring"
    assert group_header(list(reversed(calls))).text == "Found MCP wiring"


def test_error_call_can_be_the_latest_settled_header() -> None:
    calls = [call("a", "settled", intent=MCP, seq=2), call("b", "error", intent=OAUTH, seq=3)]
    assert group_header(calls).text == "Failed: Searching for OAuth handling"


def test_resolved_activity_label_takes_over_and_collapses() -> None:
    calls = [
        call("a", "settled", intent=MCP, outcome="Found MCP wiring", seq=9),
        call("b", "settled", intent=OAUTH, outcome="Found OAuth handling", seq=5),
    ]
    header = group_header(calls, activity_label="Traced OAuth and MCP wiring in the router")
    assert header.text == "Traced OAuth and MCP wiring in the router"
    assert header.full_text == "Traced OAuth and MCP wiring in the router — github"
    assert header.source == "activity"
    assert header.phase == "summarized"
    assert header.collapse
    assert header.aria_label == "Traced OAuth and MCP wiring in the router — github, 2 tools"


@pytest.mark.parametrize("pending", [None, "", "   ", "\n"])
def test_pending_or_blank_activity_label_leaves_the_settled_header(pending: str | None) -> None:
    calls = [call("a", "settled", intent=MCP, seq=1), call("b", "settled", intent=OAUTH, seq=2)]
    header = group_header(calls, activity_label=pending)
    assert header.text == OAUTH
    assert header.source == "outcome"
    assert not header.collapse


def test_intent_labelled_group_without_activity_label_does_not_collapse() -> None:
    in_flight = [call("a", "running", intent=OAUTH, seq=1), call("b", seq=2)]
    settled = [call("a", "settled", intent=OAUTH, seq=3), call("b", "settled", seq=4)]
    assert not group_header(in_flight).collapse
    assert not group_header(settled).collapse


def test_aria_label_keeps_the_count_for_intent_headers() -> None:
    header = group_header([call("a", "running", intent=OAUTH, seq=1), call("b", seq=2)])
    assert header.aria_label == "Searching for OAuth handling, 2 tools"


def test_a_live_header_is_named_by_its_shown_text_and_a_settled_one_in_full() -> None:
    """A streaming intent changes the header on every fragment: its accessible name
    follows the capped text on screen, not the growing whole (which is the title)."""
    long_intent = "Searching " + "very " * 40 + "deep"
    live = group_header([call("a", "running", intent=long_intent, seq=1), call("b", seq=2)])
    assert live.aria_label == f"{sanitize_label(long_intent).text}, 2 tools"
    done = [call("a", "settled", intent=long_intent, seq=1), call("b", "settled", seq=2)]
    assert group_header(done).aria_label == f"{long_intent} — github, 2 tools"


def test_aria_label_is_one_clean_line() -> None:
    header = group_header([call("a", "running", intent="Reading\nfile <b>x</b>", seq=1)])
    assert header.aria_label == "Reading file <b>x</b>, 1 tool"


def test_subagent_group_counts_agents_with_its_glyph() -> None:
    running = [call(c, tool="subagent", server=None, label_bearing=False) for c in "ab"]
    header = group_header(running)
    assert (header.text, header.glyph, header.source) == (
        "Running 2 agents",
        "subagents",
        "subagents",
    )
    done = [call(c, "settled", tool="subagent", server=None, label_bearing=False) for c in "ab"]
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
    asking = [call(c, tool="ask_user_question", server=None, label_bearing=False) for c in "ab"]
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
        call("a", "settled", intent=MCP, outcome="Found MCP wiring", seq=6),
        call("b", "background", intent=OAUTH, seq=2),
    ]
    header = group_header(calls)
    assert header.text == "Searching for OAuth handling · in background"
    assert header.phase == "in_flight"
    assert header.live


def test_gate_a_business_intent_never_reaches_the_header() -> None:
    calls = [
        call("a", "settled", label_bearing=False, intent="billing_inquiry", seq=3),
        call("b", "settled", label_bearing=False, intent="refund", seq=4),
    ]
    assert group_header(calls).full_text == "Used 2 tools — github"


def test_header_in_spanish() -> None:
    calls = [call("a", "settled", label_bearing=False), call("b", "settled", label_bearing=False)]
    header = group_header(calls, lang="es")
    assert header.full_text == "Se usaron 2 herramientas — github"
    intent_header = group_header([call("a", "running", intent="Buscando", seq=1)], lang="es")
    assert intent_header.aria_label == "Buscando, 1 herramienta"


def test_empty_group_does_not_crash() -> None:
    header = group_header([])
    assert (header.text, header.count, header.glyph) == ("Used 0 tools", 0, "tools")


# --- sanitising ---------------------------------------------------------------------------


def test_plain_text_passes_through() -> None:
    assert sanitize_label(OAUTH) == DisplayText(OAUTH, OAUTH)


def test_newlines_and_control_characters_become_single_spaces() -> None:
    shown = sanitize_label("  Reading\n\nthe\tfile\x00\x07 now\r\n ")
    assert shown.text == "Reading the file now"
    assert shown.title == "Reading the file now"


def test_unicode_line_separators_and_bidi_controls_are_removed() -> None:
    assert sanitize_label("a\u2028b\u202ecba\u2066x\ufeff").text == "a bcbax"


def test_long_intent_is_capped_with_an_ellipsis_and_full_title() -> None:
    intent = "Searching " + "x" * 290
    shown = sanitize_label(intent)
    assert len(intent) == 300
    assert len(shown.text) == 120
    assert shown.text.endswith("…")
    assert shown.text[:-1] == intent[:119]
    assert shown.title == intent
    assert shown.truncated


def test_cap_respects_a_custom_limit() -> None:
    assert sanitize_label("abcdef", limit=4).text == "abc…"
    assert sanitize_label("abcd", limit=4).text == "abcd"


def test_cut_does_not_leave_a_trailing_space_before_the_ellipsis() -> None:
    assert sanitize_label("abc defgh", limit=5).text == "abc…"


def test_cut_never_splits_a_zwj_family_emoji() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # man ZWJ woman ZWJ girl
    text = "a" * 117 + family + "tail"
    shown = sanitize_label(text)
    assert shown.text == "a" * 117 + "…"
    assert "\u200d" not in shown.text


def test_cut_keeps_a_whole_emoji_that_fits() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    text = "a" * 100 + family + "b" * 50
    assert sanitize_label(text).text == "a" * 100 + family + "b" * 14 + "…"


def test_cut_never_separates_a_combining_mark_from_its_base() -> None:
    text = "a" * 118 + "e\u0301" + "z" * 10  # e + combining acute straddles the cut
    shown = sanitize_label(text)
    assert shown.text == "a" * 118 + "…"


def test_cut_never_separates_a_skin_tone_or_variation_selector() -> None:
    wave = "\U0001f44b\U0001f3fd"  # waving hand + medium skin tone
    assert sanitize_label("a" * 118 + wave + "zz").text == "a" * 118 + "…"
    heart = "\u2764\ufe0f"
    assert sanitize_label("a" * 118 + heart + "zz").text == "a" * 118 + "…"


def test_cut_never_splits_a_flag() -> None:
    flags = "\U0001f1ef\U0001f1f5" * 3  # three Japanese flags
    text = "a" * 114 + flags + "zz"
    # 114 + 5 = 119 kept would end mid-flag: back off to a pair boundary.
    assert sanitize_label(text).text == "a" * 114 + "\U0001f1ef\U0001f1f5" * 2 + "…"


def test_one_giant_cluster_is_cut_rather_than_dropped() -> None:
    zalgo = "z" + "\u0301" * 200
    shown = sanitize_label(zalgo, limit=10)
    assert shown.text == "z" + "\u0301" * 8 + "…"


def test_img_onerror_renders_as_literal_text() -> None:
    shown = sanitize_label("Checking <img src=x onerror=alert(1)> payload")
    assert shown.text == "Checking <img src=x onerror=alert(1)> payload"
    assert shown.title == shown.text


def test_script_tags_stay_literal_text() -> None:
    assert sanitize_label("<script>alert(1)</script>Reading").text == (
        "<script>alert(1)</script>Reading"
    )


def test_entities_stay_as_written() -> None:
    assert sanitize_label("&lt;img src=x&gt;ok").text == "&lt;img src=x&gt;ok"


def test_comparisons_keep_their_angle_brackets() -> None:
    assert sanitize_label("Checking whether x < 10 & y > 2").text == (
        "Checking whether x < 10 & y > 2"
    )


def test_markdown_and_output_references_stay_literal() -> None:
    text = "Reading **{{tool0turn0}}** [link](http://x)"
    assert sanitize_label(text).text == text


def test_lone_surrogate_becomes_a_replacement_character() -> None:
    assert sanitize_label("ab\ud83dcd").text == "ab\ufffdcd"


@pytest.mark.parametrize("value", [None, 42, b"bytes", object()])
def test_non_text_never_raises(value: object) -> None:
    shown = sanitize_label(value)
    assert isinstance(shown.text, str)
    assert sanitize_label(None) == DisplayText("", "")


def test_no_unicode_normalisation_is_applied() -> None:
    # No Unicode normalisation: stored and shown text compare equal for plain input.
    decomposed = "Cafe\u0301"
    assert sanitize_label(decomposed).text == decomposed
    assert unicodedata.normalize("NFC", decomposed) != decomposed


# --- minimum display time -----------------------------------------------------------------


def test_first_label_shows_immediately() -> None:
    display = MinimumDisplay(min_ms=200)
    assert display.offer("A", 0) == "A"
    assert display.due_ms(0) is None


def test_a_label_arriving_too_soon_is_held() -> None:
    display = MinimumDisplay(min_ms=200)
    display.offer("A", 0)
    assert display.offer("B", 50) == "A"
    assert display.held == "B"
    assert display.due_ms(50) == 150


def test_only_the_newest_held_label_survives_a_burst() -> None:
    display = MinimumDisplay(min_ms=200)
    display.offer("A", 0)
    display.offer("B", 50)
    display.offer("C", 120)
    assert display.tick(199) == "A"
    assert display.tick(200) == "C"
    assert display.due_ms(200) is None


def test_held_label_shows_when_offered_again_after_the_minimum() -> None:
    display = MinimumDisplay(min_ms=200)
    display.offer("A", 0)
    display.offer("B", 10)
    assert display.offer("B", 260) == "B"
    # The new label now has its own minimum.
    assert display.offer("C", 300) == "B"
    assert display.due_ms(300) == 160


def test_returning_to_the_shown_label_cancels_the_held_one() -> None:
    display = MinimumDisplay(min_ms=200)
    display.offer("A", 0)
    display.offer("B", 10)
    assert display.offer("A", 20) == "A"
    assert display.held is None
    assert display.tick(500) == "A"


def test_labels_after_a_quiet_period_show_at_once() -> None:
    display = MinimumDisplay(min_ms=150)
    display.offer("A", 0)
    assert display.offer("B", 1000) == "B"


def test_a_clock_going_backwards_does_not_release_early() -> None:
    display = MinimumDisplay(min_ms=200)
    display.offer("A", 1000)
    assert display.offer("B", 900) == "A"
    assert display.due_ms(900) == 200


def test_a_growing_label_is_never_held() -> None:
    display = MinimumDisplay(min_ms=200)
    assert display.offer("Searching", 0) == "Searching"
    assert display.offer("Searching for OAuth", 10) == "Searching for OAuth"
    # A different label still waits out the minimum time after the last growth.
    assert display.offer("Reading the router", 20) == "Searching for OAuth"
    assert display.due_ms(20) == 190


# --- sibling collisions -------------------------------------------------------------------

SAME = "Searching the codebase"


def sib(args: dict[str, object] | None, label: str = SAME, from_intent: bool = True) -> Sibling:
    return Sibling(label=label, from_intent=from_intent, arguments=args)


def test_identical_intents_are_told_apart_by_the_argument_that_differs() -> None:
    siblings = [
        sib({"intent": SAME, "repo": "acme/app", "query": "oauth"}),
        sib({"intent": SAME, "repo": "acme/app", "query": "mcp"}),
    ]
    assert sibling_suffixes(siblings) == [' · "oauth"', ' · "mcp"']


def test_distinct_labels_get_no_suffix() -> None:
    siblings = [sib({"query": "a"}, label=OAUTH), sib({"query": "b"}, label=MCP)]
    assert sibling_suffixes(siblings) == ["", ""]


def test_only_the_colliding_cards_are_suffixed() -> None:
    siblings = [
        sib({"query": "a"}),
        sib({"query": "x"}, label=OAUTH),
        sib({"query": "b"}),
    ]
    assert sibling_suffixes(siblings) == [' · "a"', "", ' · "b"']


def test_default_labels_are_not_intents_and_are_left_alone() -> None:
    siblings = [
        sib({"path": "a.py"}, label="Ran read_file", from_intent=False),
        sib({"path": "b.py"}, label="Ran read_file", from_intent=False),
    ]
    assert sibling_suffixes(siblings) == ["", ""]


def test_a_card_whose_arguments_do_not_parse_yet_waits_for_its_suffix() -> None:
    assert sibling_suffixes([sib({"query": "a"}), sib(None)]) == ["", ""]
    three = [sib({"query": "a"}), sib(None), sib({"query": "b"})]
    assert sibling_suffixes(three) == [' · "a"', "", ' · "b"']


def test_identical_arguments_give_nothing_to_tell_apart() -> None:
    assert sibling_suffixes([sib({"query": "a"}), sib({"query": "a"})]) == ["", ""]


def test_a_key_only_one_sibling_has_is_a_difference() -> None:
    siblings = [sib({"query": "a", "limit": 5}), sib({"query": "a"})]
    assert sibling_suffixes(siblings) == [' · "5"', ""]


def test_an_argument_named_intent_is_never_the_telling_one() -> None:
    siblings = [sib({"intent": "x", "query": "a"}), sib({"intent": "y", "query": "b"})]
    assert sibling_suffixes(siblings) == [' · "a"', ' · "b"']


def test_the_value_is_sanitised_and_capped() -> None:
    long = "oauth\n<b>" + "x" * 100
    siblings = [sib({"query": long}), sib({"query": ["a", 1]})]
    first, second = sibling_suffixes(siblings)
    assert "\n" not in first and first.endswith('…"')
    assert len(first) <= len(' · ""') + 40
    assert "<b>" in first  # shown as the characters written, never as markup
    assert second == ' · "["a", 1]"'


def test_the_suffix_is_translated() -> None:
    siblings = [sib({"query": "a"}), sib({"query": "b"})]
    assert sibling_suffixes(siblings, "ja") == ["・「a」", "・「b」"]


@pytest.mark.parametrize(
    ("text", "shows"),
    [
        ("Reading the config", True),
        ("1 file", True),
        ("a<!-- the rest is a comment -->", True),
        ("<b></b>", True),  # markup is shown as the characters written
        ("\u202eabc", True),
        ("<!-- only a comment -->", False),
        ("   \t\n", False),
        ("\u202e\u2066", False),
        ("\x00\x01", False),
        ("", False),
        (None, False),
    ],
)
def test_has_label_text_agrees_with_what_sanitising_shows(text: object, shows: bool) -> None:
    assert has_label_text(text) is shows
    assert bool(sanitize_label(text, title=False).text) is shows
