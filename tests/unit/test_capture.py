"""Tests for `intent_ui.core.capture`: MCP intent capture (seed 001)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from intent_ui.core.capture import (
    CONTEXT_ARG,
    CONTEXT_DESCRIPTION,
    INTENT_CAPTURE_LIMIT,
    CallRecord,
    CapturedIntent,
    Coverage,
    advertise_context,
    capture_context,
    clamp_intent,
    coverage,
    coverage_by_tool,
    is_widget_invoked,
    redact_intent,
    strip_pii,
)
from intent_ui.core.text import GRAPHEME_MAX_CHARS
from tests.support.graphemes import CLUSTERS, KSHI

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city"],
    "additionalProperties": False,
}

# --- strip_pii -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "email", ["jane@example.com", "john.doe+trips@mail.example.co.uk", "a_b-c@sub-domain.io"]
)
def test_email_is_replaced(email: str) -> None:
    assert strip_pii(f"Send the itinerary to {email} today") == (
        "Send the itinerary to [email] today"
    )


@pytest.mark.parametrize(
    "card",
    [
        "4111111111111111",
        "4111 1111 1111 1111",
        "4111-1111-1111-1111",
        "3782 822463 10005",  # Amex, 15 digits
        "5555555555554444",
        "4222222222222",  # 13 digits
    ],
)
def test_luhn_valid_card_is_replaced(card: str) -> None:
    assert strip_pii(f"Pay with {card} please") == "Pay with [card] please"


@pytest.mark.parametrize("number", ["4111111111111112", "4111 1111 1111 1112", "1234567890123456"])
def test_luhn_invalid_number_is_kept(number: str) -> None:
    assert strip_pii(f"Order {number} shipped") == f"Order {number} shipped"


def test_twelve_digit_luhn_valid_number_is_not_a_card() -> None:
    assert strip_pii("ref 000000000000") == "ref 000000000000"


def test_card_after_unrelated_digits_is_still_found() -> None:
    assert strip_pii("row 12 4111111111111111") == "row 12 [card]"


def test_card_inside_a_longer_digit_string_is_not_a_card() -> None:
    assert strip_pii("id 94111111111111111119") == "id 94111111111111111119"


def test_ssn_is_replaced() -> None:
    assert strip_pii("My SSN is 123-45-6789.") == "My SSN is [ssn]."


@pytest.mark.parametrize("ssn", ["000-12-3456", "666-12-3456", "912-12-3456", "123-00-4567"])
def test_obviously_invalid_ssn_is_kept(ssn: str) -> None:
    assert strip_pii(f"code {ssn}") == f"code {ssn}"


@pytest.mark.parametrize(
    "phone",
    [
        "(415) 555-0134",
        "415-555-0134",
        "+1 415 555 0134",
        "1-415-555-0134",
        "415.555.0134",
        "4155550134",
    ],
)
def test_us_phone_shapes_are_replaced(phone: str) -> None:
    assert strip_pii(f"Call me at {phone}, thanks") == "Call me at [phone], thanks"


@pytest.mark.parametrize("text", ["+44 20 7946 0958", "555-0134", "2024-01-15", "v1.2.3"])
def test_non_us_phone_and_dates_are_kept(text: str) -> None:
    assert strip_pii(f"see {text}") == f"see {text}"


def test_everything_else_is_kept_verbatim() -> None:
    text = "Jane Smith earns $8,400 a month at Acme, lives at 12 Rue de Rivoli"
    assert strip_pii(text) == text


def test_several_kinds_in_one_text() -> None:
    text = "jane@x.org, 4111111111111111, 123-45-6789, (415) 555-0134"
    assert strip_pii(text) == "[email], [card], [ssn], [phone]"


def test_empty_text() -> None:
    assert strip_pii("") == ""


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="0123456789 -().+@abc\n", max_size=80))
def test_strip_pii_never_raises(text: str) -> None:
    assert isinstance(strip_pii(text), str)


# --- clamp_intent ------------------------------------------------------------------------------


def test_short_text_is_unchanged() -> None:
    text = "User wants a compact rental car in Munich"
    assert clamp_intent(text) is text


def test_default_limit_is_500() -> None:
    assert clamp_intent("x" * 600) == "x" * 500


@CLUSTERS
def test_clamp_counts_clusters_and_never_splits_one(cluster: str) -> None:
    # Three fit a limit of three whole, however many code points each one holds.
    assert clamp_intent(cluster * 3, 3) == cluster * 3
    # Past the limit the cut falls between two of them, never inside one.
    assert clamp_intent("ab" + cluster * 3 + "cd", 4) == "ab" + cluster * 2


def test_a_long_devanagari_intent_keeps_500_of_what_a_reader_counts() -> None:
    assert redact_intent(KSHI * 600) == KSHI * INTENT_CAPTURE_LIMIT


def test_crlf_counts_as_one() -> None:
    assert clamp_intent("a\r\nb", 2) == "a\r\n"


def test_single_oversized_cluster_is_cut_hard_not_dropped() -> None:
    zalgo = "a" + "\u0301" * 100  # far longer than any real cluster
    assert clamp_intent(zalgo + "b", 5) == zalgo[:GRAPHEME_MAX_CHARS]


def test_zero_limit_is_empty() -> None:
    assert clamp_intent("abc", 0) == ""


# --- advertise_context ---------------------------------------------------------------------------


def test_required_context_is_appended_last() -> None:
    schema, mode = advertise_context(SCHEMA)
    assert mode == "required"
    assert list(schema["properties"]) == ["city", "days", CONTEXT_ARG]
    assert schema["properties"][CONTEXT_ARG] == {
        "type": "string",
        "description": CONTEXT_DESCRIPTION,
    }
    assert schema["required"] == ["city", CONTEXT_ARG]
    assert schema["additionalProperties"] is False


def test_input_schema_is_not_mutated() -> None:
    before = copy.deepcopy(SCHEMA)
    advertise_context(SCHEMA)
    advertise_context(SCHEMA, required=False)
    assert before == SCHEMA


def test_tool_with_its_own_context_is_left_alone() -> None:
    own = {"type": "object", "properties": {"context": {"type": "object"}}}
    schema, mode = advertise_context(own)
    assert mode == "none"
    assert schema is own


def test_required_false_makes_context_optional() -> None:
    schema, mode = advertise_context(SCHEMA, required=False)
    assert mode == "optional"
    assert CONTEXT_ARG in schema["properties"]
    assert schema["required"] == ["city"]


def test_custom_description() -> None:
    schema, _ = advertise_context(SCHEMA, description="Explain the goal in one sentence.")
    assert schema["properties"][CONTEXT_ARG]["description"] == "Explain the goal in one sentence."


def test_blank_description_falls_back_to_default() -> None:
    schema, _ = advertise_context(SCHEMA, description="  ")
    assert schema["properties"][CONTEXT_ARG]["description"] == CONTEXT_DESCRIPTION


def test_schema_without_properties_gains_context() -> None:
    schema, mode = advertise_context({"type": "object"})
    assert mode == "required"
    assert schema == {
        "type": "object",
        "properties": {CONTEXT_ARG: {"type": "string", "description": CONTEXT_DESCRIPTION}},
        "required": [CONTEXT_ARG],
    }


def test_non_object_schema_is_left_alone() -> None:
    odd = {"type": "string"}
    assert advertise_context(odd) == (odd, "none")


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "allOf": [{"properties": {"a": {"type": "string"}}}]},
        {"anyOf": [{"type": "object"}, {"type": "null"}]},
        {"oneOf": [{"type": "object"}]},
        {"$ref": "#/$defs/Args", "$defs": {"Args": {"type": "object"}}},
        {"type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]}},
        {"type": "object", "patternProperties": {"^c": {"type": "string"}}},
        {"type": "object", "dependentSchemas": {"a": {"properties": {"b": {}}}}},
        {"type": "object", "properties": {}, "additionalProperties": True},
        {"type": "object", "properties": {}, "additionalProperties": {"type": "string"}},
    ],
    ids=["allOf", "anyOf", "oneOf", "ref", "if-then", "pattern", "dependent", "open", "open-typed"],
)
def test_schema_that_might_accept_its_own_context_is_left_alone(schema: dict[str, Any]) -> None:
    assert advertise_context(schema) == (schema, "none")


@pytest.mark.parametrize(
    "schema",
    [
        {"type": ["object", "null"], "properties": {}},
        {"type": "object", "properties": ["a", "b"]},
        {"type": "object", "properties": {}, "required": "a"},
        {"type": "object", "properties": {}, "required": [1]},
    ],
    ids=["type-list", "properties-list", "required-string", "required-non-string"],
)
def test_unreadable_schema_is_left_alone(schema: dict[str, Any]) -> None:
    assert advertise_context(schema) == (schema, "none")


def test_closed_schema_still_gains_context() -> None:
    closed = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "additionalProperties": False,
    }
    schema, mode = advertise_context(closed)
    assert mode == "required"
    assert CONTEXT_ARG in schema["properties"]


WIDGET_META: list[dict[str, Any]] = [
    {"openai/widgetAccessible": True},
    {"ui": {"visibility": ["model", "app"]}},
    {"ui": {"visibility": ["app"], "resourceUri": "ui://widget/map.html"}},
    {"ui": {"resourceUri": "ui://widget/map.html"}},
]


@pytest.mark.parametrize("meta", WIDGET_META)
def test_widget_invoked_tool_gets_optional_context(meta: dict[str, Any]) -> None:
    schema, mode = advertise_context(SCHEMA, meta=meta)
    assert mode == "optional"
    assert CONTEXT_ARG in schema["properties"]
    assert CONTEXT_ARG not in schema["required"]


@pytest.mark.parametrize(
    "meta",
    [
        None,
        {},
        {"openai/widgetAccessible": False},
        {"ui": {"visibility": ["model"], "resourceUri": "ui://widget/map.html"}},
        {"ui": {"visibility": []}},
        {"ui": "not a mapping"},
    ],
)
def test_model_only_tool_keeps_context_required(meta: dict[str, Any] | None) -> None:
    assert advertise_context(SCHEMA, meta=meta)[1] == "required"
    assert not is_widget_invoked(meta)


def test_context_already_required_is_not_listed_twice() -> None:
    schema = {**SCHEMA, "required": ["city", CONTEXT_ARG]}
    del schema["additionalProperties"]
    result, _ = advertise_context(schema)
    assert result["required"] == ["city", CONTEXT_ARG]


# --- capture_context -----------------------------------------------------------------------------


def test_context_is_read_and_removed() -> None:
    args = {"city": "Munich", CONTEXT_ARG: "User wants a compact rental car in Munich"}
    stripped, intent = capture_context(args, "required", tool_name="rent_car")
    assert stripped == {"city": "Munich"}
    assert intent == CapturedIntent(
        "User wants a compact rental car in Munich", "context_parameter", "required"
    )
    assert CONTEXT_ARG in args  # the caller's dict is untouched


def test_captured_context_is_pii_stripped_and_clamped() -> None:
    text = "Email jane@example.com about it " + "x" * 600
    _, intent = capture_context({CONTEXT_ARG: text}, "required", tool_name="t")
    assert intent is not None
    assert intent.text.startswith("Email [email] about it ")
    assert len(intent.text) == 500


def test_pii_straddling_the_clamp_is_still_stripped() -> None:
    text = "x" * 490 + " jane@example.com"
    _, intent = capture_context({CONTEXT_ARG: text}, "required", tool_name="t")
    assert intent is not None
    assert "jane" not in intent.text


def test_call_without_context_passes_args_through() -> None:
    args = {"city": "Munich"}
    stripped, intent = capture_context(args, "required", tool_name="t")
    assert stripped is args
    assert intent is None


def test_fallback_infers_intent_for_required_tool() -> None:
    calls: list[tuple[str, Mapping[str, Any]]] = []

    def fallback(tool: str, args: Mapping[str, Any]) -> str:
        calls.append((tool, dict(args)))
        return f"Called {tool}"

    _, intent = capture_context({"city": "Munich"}, "required", fallback=fallback, tool_name="t")
    assert intent == CapturedIntent("Called t", "inferred", "required")
    assert calls == [("t", {"city": "Munich"})]


def test_fallback_is_not_called_for_optional_tool() -> None:
    def fallback(tool: str, args: Mapping[str, Any]) -> str:
        raise AssertionError("fallback must not run for optional-mode tools")

    stripped, intent = capture_context(
        {"city": "Munich"}, "optional", fallback=fallback, tool_name="t"
    )
    assert stripped == {"city": "Munich"}
    assert intent is None


def test_optional_tool_still_captures_when_model_fills_context() -> None:
    _, intent = capture_context({CONTEXT_ARG: "Plan a trip"}, "optional", tool_name="t")
    assert intent == CapturedIntent("Plan a trip", "context_parameter", "optional")


def test_fallback_is_not_called_when_context_present() -> None:
    def fallback(tool: str, args: Mapping[str, Any]) -> str:
        raise AssertionError("not needed")

    _, intent = capture_context(
        {CONTEXT_ARG: "Plan a trip"}, "required", fallback=fallback, tool_name="t"
    )
    assert intent is not None
    assert intent.source == "context_parameter"


def test_failing_fallback_captures_nothing() -> None:
    def fallback(tool: str, args: Mapping[str, Any]) -> str:
        raise RuntimeError("bug in user code")

    stripped, intent = capture_context({"a": 1}, "required", fallback=fallback, tool_name="t")
    assert stripped == {"a": 1}
    assert intent is None


def test_fallback_output_is_pii_stripped() -> None:
    _, intent = capture_context(
        {}, "required", fallback=lambda tool, args: "Mail jane@x.org", tool_name="t"
    )
    assert intent == CapturedIntent("Mail [email]", "inferred", "required")


def test_fallback_cannot_mutate_args() -> None:
    def fallback(tool: str, args: Mapping[str, Any]) -> str:
        args["city"] = "Paris"  # type: ignore[index]
        return "x"

    args = {"city": "Munich"}
    stripped, intent = capture_context(args, "required", fallback=fallback, tool_name="t")
    assert args == {"city": "Munich"}
    assert stripped is args
    assert intent is None


@pytest.mark.parametrize("value", [None, "", "   ", 42, {"why": "x"}])
def test_blank_or_non_string_context_is_removed_and_not_captured(value: object) -> None:
    stripped, intent = capture_context({"a": 1, CONTEXT_ARG: value}, "required", tool_name="t")
    assert stripped == {"a": 1}
    assert intent is None


def test_blank_context_falls_back_on_required_tool() -> None:
    _, intent = capture_context(
        {CONTEXT_ARG: " "}, "required", fallback=lambda tool, args: "Guess", tool_name="t"
    )
    assert intent == CapturedIntent("Guess", "inferred", "required")


def test_tool_owning_context_is_not_stripped() -> None:
    args = {CONTEXT_ARG: {"thread": 7}}
    stripped, intent = capture_context(args, "none", fallback=lambda tool, a: "no", tool_name="t")
    assert stripped is args
    assert intent is None


def test_none_args_never_fail() -> None:
    assert capture_context(None, "required", tool_name="t") == (None, None)


# --- coverage ------------------------------------------------------------------------------------


def test_coverage_splits_required_and_optional() -> None:
    events = [
        CallRecord("required", True),
        CallRecord("required", True),
        CallRecord("required", False),
        CallRecord("optional", False),
        CallRecord("optional", True),
        CallRecord("optional", False),
        CallRecord("optional", False),
        CallRecord("none", False),
    ]
    assert coverage(events) == Coverage(
        required_calls=3,
        required_with_intent=2,
        call_coverage=2 / 3,
        optional_calls=4,
        optional_with_intent=1,
        optional_share=0.25,
    )


def test_coverage_without_calls_is_none_not_zero() -> None:
    assert coverage([]) == Coverage(0, 0, None, 0, 0, None)


def test_inferred_intent_does_not_count_as_covered() -> None:
    inferred = CapturedIntent("Called t", "inferred", "required")
    filled = CapturedIntent("Plan a trip", "context_parameter", "required")
    records = [
        CallRecord.from_capture("required", inferred),
        CallRecord.from_capture("required", filled),
        CallRecord.from_capture("required", None),
    ]
    assert coverage(records).required_with_intent == 1


def test_coverage_skips_malformed_records() -> None:
    events: list[Any] = [CallRecord("required", True), {"mode": "required"}, None]
    assert coverage(events).required_calls == 1


def test_coverage_by_tool_groups_and_sorts_by_tool_name() -> None:
    per_tool = coverage_by_tool(
        [
            ("zeta", CallRecord("required", True)),
            ("alpha", CallRecord("optional", False)),
            ("zeta", CallRecord("required", False)),
        ]
    )
    assert list(per_tool) == ["alpha", "zeta"]
    assert per_tool["zeta"].call_coverage == 0.5
    assert (per_tool["alpha"].optional_calls, per_tool["alpha"].optional_share) == (1, 0.0)


def test_redact_intent_strips_pii_clamps_and_trims() -> None:
    text = "  Calling (415) 555-2671 for 123-45-6789 " + "y" * 1000
    redacted = redact_intent(text)
    assert redacted.startswith("Calling [phone] for [ssn] yyy")
    assert len(redacted) == INTENT_CAPTURE_LIMIT
    assert redact_intent("   ") == ""
    assert redact_intent(None) == ""  # type: ignore[arg-type]
