"""intent_ui.core.capabilities.deferred: the defer_loading capability.

Behaviour every capability sibling shares is tested once in test_capability_siblings.py.
"""

from __future__ import annotations

import logging

import pytest

from intent_ui.core.capabilities import deferred as deferred_mod
from intent_ui.core.capabilities.deferred import (
    apply_deferred_tools,
    deferred_definitions,
    is_defer_eligible_tool_name,
    promote_deferred_tools,
)
from intent_ui.core.capabilities.intent import apply_intent_labels, inject_intent_param
from tests.support.capability_helpers import native, property_names, third_party


@pytest.mark.parametrize("name", ["tool_search", "check_background_task"])
def test_tool_search_and_the_poll_tool_are_never_deferred(name: str) -> None:
    """Tool search is how deferred tools are found; the poll tool is host machinery."""
    defs = [third_party(name)]
    assert not is_defer_eligible_tool_name(name)
    assert apply_deferred_tools(defs, {name: {"defer_loading": True}}).loaded is defs


def test_opted_in_tool_is_withheld() -> None:
    defs = [third_party("a"), third_party("b")]
    loaded, deferred_names = apply_deferred_tools(defs, {"b": {"defer_loading": True}})
    assert [tool["name"] for tool in loaded] == ["a"]
    assert deferred_names == ("b",)


def test_nothing_deferred_returns_the_same_list() -> None:
    defs = [third_party("a")]
    result = apply_deferred_tools(defs, {})
    assert result.loaded is defs
    assert result.deferred_names == ()


def test_capability_off_defers_nothing() -> None:
    defs = [third_party("a", defer_loading=True)]
    assert apply_deferred_tools(defs, {"*": {"defer_loading": True}}, False).loaded is defs


def test_definition_flag_and_wildcard_and_exclusions() -> None:
    defs = [third_party("a", defer_loading=True), third_party("tool_search"), third_party("c")]
    result = apply_deferred_tools(
        defs, {"c": {"defer_loading": False}, "*": {"defer_loading": True}}
    )
    assert result.deferred_names == ("a",)
    assert [tool["name"] for tool in result.loaded] == ["tool_search", "c"]


def test_non_mapping_entries_stay_loaded() -> None:
    junk: list[object] = ["junk"]
    result = apply_deferred_tools(junk, {"*": {"defer_loading": True}})  # type: ignore[arg-type]
    assert result.loaded == junk


def test_deferred_definitions_come_from_the_registry() -> None:
    registry = {"a": third_party("a")}
    assert deferred_definitions(registry, ["a", "missing"]) == [registry["a"]]
    assert deferred_definitions(None, ["a"]) == []


def test_counted_deferred_schema_contains_the_injected_intent() -> None:
    """Token accounting reads the registry entry after injection, so it counts the label."""
    tool = third_party("crm_lookup")
    labelled = apply_intent_labels(
        [tool], {"*": {"describe_intent": True}}, registry={"crm_lookup": tool}
    )
    _, deferred_names = apply_deferred_tools(labelled.definitions, {"*": {"defer_loading": True}})
    (counted,) = deferred_definitions(labelled.registry, deferred_names)
    assert property_names(counted)[0] == "intent"


def test_discovered_tool_arrives_with_intent_first() -> None:
    registry = {"crm_lookup": third_party("crm_lookup")}
    loaded = [native("read_file")]
    result = promote_deferred_tools(
        loaded, registry, ["crm_lookup"], {"crm_lookup": {"describe_intent": True}}
    )
    assert [tool["name"] for tool in result.loaded] == ["read_file", "crm_lookup"]
    assert property_names(result.loaded[1])[0] == "intent"
    assert result.promoted_names == ("crm_lookup",)
    assert result.intent_tool_names == {"crm_lookup"}


def test_promoting_an_already_injected_entry_is_idempotent() -> None:
    entry = inject_intent_param(third_party("crm_lookup"))
    result = promote_deferred_tools(
        [], {"crm_lookup": entry}, ["crm_lookup"], {"*": {"describe_intent": True}}
    )
    assert result.loaded[0] is entry
    assert property_names(entry).count("intent") == 1


def test_promotion_with_intents_off_strips_labels() -> None:
    entry = inject_intent_param(third_party("crm_lookup"))
    result = promote_deferred_tools(
        [], {"crm_lookup": entry}, ["crm_lookup"], intents_enabled=False
    )
    assert "intent" not in property_names(result.loaded[0])
    assert result.intent_tool_names == frozenset()


def test_already_loaded_and_duplicate_names_are_skipped() -> None:
    loaded = [third_party("a")]
    result = promote_deferred_tools(loaded, {"a": third_party("a")}, ["a", "a"])
    assert result.loaded is loaded
    assert result.promoted_names == ()


def test_unknown_names_are_skipped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=deferred_mod.__name__):
        result = promote_deferred_tools([], None, ["ghost"])
    assert result.loaded == []
    assert "ghost" in caplog.text
