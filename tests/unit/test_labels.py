from __future__ import annotations

from typing import Any

import pytest

from intent_ui.core.labels import card_is_in_flight, card_label, default_label
from intent_ui.core.states import CALL_STATES, FINAL_STATES, IN_FLIGHT_STATES
from tests.support.label_helpers import MCP, OAUTH, SEARCHED, call

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


# --- card labels: the table in docs/labels.md ---------------------------------------------


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
    crm = call(tool="create_ticket", server="crm", carries_intent=False, intent="billing_inquiry")
    assert card_label(crm) == "Running create_ticket in crm"
    settled = call(
        state="settled",
        tool="create_ticket",
        server="crm",
        carries_intent=False,
        intent="billing_inquiry",
        outcome="Created",
    )
    assert card_label(settled) == "Ran create_ticket in crm"


def test_gate_applies_to_error_framing() -> None:
    view = call(state="error", carries_intent=False, intent="billing_inquiry")
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
    ("state", "in_flight"),
    [
        ("streaming", True),
        ("running", True),
        ("background", True),
        ("settled", False),
        ("error", False),
        ("cancelled", False),
    ],
)
def test_card_is_in_flight(state: Any, in_flight: bool) -> None:
    assert card_is_in_flight(call(state=state)) is in_flight


def test_every_state_has_a_label_and_each_ending_reads_differently() -> None:
    labels = {state: card_label(call(state=state)) for state in CALL_STATES}
    running = default_label("search_code", "github", settled=False)
    assert {labels[state] for state in IN_FLIGHT_STATES} == {running}
    endings = [labels[state] for state in FINAL_STATES]
    assert running not in endings and len(set(endings)) == len(endings), labels
