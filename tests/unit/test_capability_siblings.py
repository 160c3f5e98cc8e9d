"""The capability siblings' shared shape, tested once across every sibling it applies to.

Each behaviour here is one the siblings promise alike (docs/capabilities.md): how an
option resolves, what the kill switch does, non-mutating idempotent injection,
marker-guarded removal, registry parity and self-spawn stripping. What differs (where
a property is placed, which tools are excluded) stays in each sibling's own test file.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest

from intent_ui.core.capabilities import background, deferred, intent, programmatic
from intent_ui.core.capabilities._definitions import mirror_registry
from tests.support.capability_helpers import (
    business_intent_tool,
    deep_freeze,
    own_flag_tool,
    property_names,
    snapshot,
    string_input_tool,
    thaw,
    third_party,
)

Tool = Mapping[str, Any]

DUAL = ["direct", "code_execution"]


# --- every sibling: option resolution and the kill switch ----------------------------


@dataclass(frozen=True)
class OptionSibling:
    """A capability as `tool_options` switch it: which tools it affected."""

    option: str
    on: object
    """The option value that switches the capability on for a tool."""
    marker: str
    """The definition-level flag a tool opts itself in with."""
    affected: Callable[..., frozenset[str]]
    """`affected(definitions, tool_options, **kwargs)`: names the capability applied to."""

    def options(self, tool_id: str, value: object | None = None) -> dict[str, Any]:
        return {tool_id: {self.option: self.on if value is None else value}}


def _labelled(defs: Any, options: Any, **kwargs: Any) -> frozenset[str]:
    return intent.apply_intent_labels(defs, options, **kwargs).label_tool_names


def _backgrounded(defs: Any, options: Any, **kwargs: Any) -> frozenset[str]:
    return background.apply_background_tool_calls(defs, options, **kwargs).background_tool_names


def _deferred(defs: Any, options: Any, **kwargs: Any) -> frozenset[str]:
    return frozenset(deferred.apply_deferred_tools(defs, options, **kwargs).deferred_names)


def _code_callable(defs: Any, options: Any, **kwargs: Any) -> frozenset[str]:
    return programmatic.apply_allowed_callers(defs, options, **kwargs).code_callable_names


INTENT_OPTION = OptionSibling("describe_intent", True, "intent", _labelled)
BACKGROUND_OPTION = OptionSibling("run_in_background", True, "run_in_background", _backgrounded)
DEFERRED_OPTION = OptionSibling("defer_loading", True, "defer_loading", _deferred)
PROGRAMMATIC_OPTION = OptionSibling("allowed_callers", DUAL, "allowed_callers", _code_callable)

EVERY_SIBLING = pytest.mark.parametrize(
    "sibling",
    [INTENT_OPTION, BACKGROUND_OPTION, DEFERRED_OPTION, PROGRAMMATIC_OPTION],
    ids=["intent", "background", "deferred", "programmatic"],
)
BOOLEAN_SIBLINGS = pytest.mark.parametrize(
    "sibling",
    [INTENT_OPTION, BACKGROUND_OPTION, DEFERRED_OPTION],
    ids=["intent", "background", "deferred"],
)


@EVERY_SIBLING
def test_an_explicit_entry_switches_only_that_tool_on(sibling: OptionSibling) -> None:
    defs = [third_party("a"), third_party("b")]
    assert sibling.affected(defs, sibling.options("a")) == {"a"}


@EVERY_SIBLING
def test_tool_ids_key_the_options(sibling: OptionSibling) -> None:
    options = sibling.options("a_mcp_server")
    assert sibling.affected([third_party("a")], options, tool_ids={"a": "a_mcp_server"}) == {"a"}
    assert sibling.affected([third_party("a")], options) == frozenset()


@EVERY_SIBLING
def test_the_wildcard_switches_every_tool_without_its_own_entry(sibling: OptionSibling) -> None:
    options = {"*": {sibling.option: sibling.on}}
    assert sibling.affected([third_party("a"), third_party("b")], options) == {"a", "b"}


@EVERY_SIBLING
def test_capability_off_applies_to_nothing(sibling: OptionSibling) -> None:
    options = {"*": {sibling.option: sibling.on}}
    assert sibling.affected([third_party("a")], options, enabled=False) == frozenset()


@EVERY_SIBLING
def test_non_mapping_entries_do_not_crash(sibling: OptionSibling) -> None:
    options = {"*": {sibling.option: sibling.on}}
    assert sibling.affected(["junk", third_party("a")], options) == {"a"}


@BOOLEAN_SIBLINGS
def test_the_definition_marker_opts_in_and_an_explicit_entry_beats_it(
    sibling: OptionSibling,
) -> None:
    marked = third_party("a", **{sibling.marker: True})
    assert sibling.affected([marked], None) == {"a"}
    assert sibling.affected([marked], sibling.options("a", False)) == frozenset()


@BOOLEAN_SIBLINGS
@pytest.mark.parametrize("name", ["lc_transfer_to_writer", "check_background_task"])
def test_handoff_and_poll_tools_are_never_touched(sibling: OptionSibling, name: str) -> None:
    """Handoffs are labelled by the agent update; the poll tool is host machinery."""
    assert sibling.affected([third_party(name)], {"*": {sibling.option: True}}) == frozenset()


# --- model-spec synthesis ------------------------------------------------------------

SYNTHESIZERS = pytest.mark.parametrize(
    ("option", "synthesize"),
    [
        ("describe_intent", intent.synthesize_intent_tool_options),
        ("run_in_background", background.synthesize_background_tool_options),
        ("defer_loading", deferred.synthesize_deferred_tool_options),
    ],
    ids=["intent", "background", "deferred"],
)


@SYNTHESIZERS
def test_synthesized_true_is_the_wildcard(option: str, synthesize: Callable[..., Any]) -> None:
    assert synthesize(True) == {"*": {option: True}}


@SYNTHESIZERS
def test_synthesized_none_is_no_policy(option: str, synthesize: Callable[..., Any]) -> None:
    assert synthesize(None) is None


@SYNTHESIZERS
def test_synthesized_list_names_only_those_tools(
    option: str, synthesize: Callable[..., Any]
) -> None:
    assert synthesize(["a"], ["a", "b"]) == {
        "*": {option: False},
        "a": {option: True},
        "b": {option: False},
    }


@pytest.mark.parametrize(
    ("synthesize", "sibling", "native_name"),
    [
        (intent.synthesize_intent_tool_options, INTENT_OPTION, "web_search"),
        (background.synthesize_background_tool_options, BACKGROUND_OPTION, "execute_code"),
    ],
    ids=["intent", "background"],
)
@pytest.mark.parametrize("selection", [False, []])
def test_a_spec_selecting_nothing_opts_native_tools_out_too(
    synthesize: Callable[..., Any], sibling: OptionSibling, native_name: str, selection: object
) -> None:
    defs = [third_party(native_name)]
    assert sibling.affected(defs, None) == {native_name}
    assert sibling.affected(defs, synthesize(selection, [native_name])) == frozenset()


# --- the injecting pair: intent and background ---------------------------------------


@dataclass(frozen=True)
class Injecting:
    """A sibling that injects a property into schemas, as these tests drive it."""

    module: ModuleType
    arg: str
    option: str
    prop: Mapping[str, Any]
    own_param_tool: Callable[[], dict[str, Any]]
    """A tool whose OWN parameter has the injected property's name (no marker)."""
    inject: Callable[[Tool], Tool]
    can_inject: Callable[[Tool], bool]
    remove: Callable[[Tool], Tool]
    strip_definitions: Callable[..., Any]
    strip_registry: Callable[..., Any]
    strip_arg: Callable[[object], object]
    apply: Callable[..., Any]
    carrying: Callable[[Any], frozenset[str]]

    def injected_property(self, tool: Tool) -> object:
        return tool["parameters"]["properties"][self.arg]


# One row per injecting sibling; the two mirror each other field for field on purpose.
INTENT = Injecting(
    module=intent,
    arg="intent",
    option="describe_intent",
    prop=intent.INTENT_PROPERTY,
    own_param_tool=business_intent_tool,
    inject=intent.inject_intent_param,
    can_inject=intent.can_inject_intent_param,
    remove=intent.remove_intent_param,
    strip_definitions=intent.strip_intent_from_tool_definitions,
    strip_registry=intent.strip_intent_from_tool_registry,
    strip_arg=intent.strip_intent,
    apply=intent.apply_intent_labels,
    carrying=lambda result: result.label_tool_names,
)
BACKGROUND = Injecting(
    module=background,
    arg="run_in_background",
    option="run_in_background",
    prop=background.RUN_IN_BACKGROUND_PROPERTY,
    own_param_tool=own_flag_tool,
    inject=background.inject_run_in_background_param,
    can_inject=background.can_inject_run_in_background_param,
    remove=background.remove_run_in_background_param,
    strip_definitions=background.strip_background_from_tool_definitions,
    strip_registry=background.strip_background_from_tool_registry,
    strip_arg=background.strip_run_in_background_arg,
    apply=background.apply_background_tool_calls,
    carrying=lambda result: result.background_tool_names,
)

INJECTING = pytest.mark.parametrize("sib", [INTENT, BACKGROUND], ids=["intent", "background"])


def _warnings_of(sib: Injecting, caplog: pytest.LogCaptureFixture) -> Any:
    return caplog.at_level(logging.WARNING, logger=sib.module.__name__)


# arguments


@INJECTING
def test_strip_arg_removes_the_key_without_mutating(sib: Injecting) -> None:
    args = {sib.arg: True, "q": 1}
    assert sib.strip_arg(args) == {"q": 1}
    assert args == {sib.arg: True, "q": 1}


@INJECTING
def test_strip_arg_parses_a_json_string(sib: Injecting) -> None:
    assert sib.strip_arg(f'{{"{sib.arg}": true, "q": 1}}') == {"q": 1}


@INJECTING
@pytest.mark.parametrize("args", [{"q": 1}, '{"q": 1}', '{"q": "unterminated', "42", None])
def test_strip_arg_returns_args_without_the_key_as_the_same_object(
    sib: Injecting, args: object
) -> None:
    assert sib.strip_arg(args) is args


# can_inject / inject / remove


@INJECTING
def test_a_schema_less_tool_is_injectable(sib: Injecting) -> None:
    assert sib.can_inject({"name": "ping", "description": "no args"})
    assert sib.inject({"name": "ping"})["parameters"] == {
        "type": "object",
        "properties": {sib.arg: dict(sib.prop)},
    }


@INJECTING
def test_an_untyped_schema_is_made_explicit(sib: Injecting) -> None:
    assert sib.inject({"name": "t", "parameters": {"properties": {}}})["parameters"]["type"] == (
        "object"
    )


@INJECTING
def test_a_non_object_schema_is_skipped_with_a_warning_naming_the_tool(
    sib: Injecting, caplog: pytest.LogCaptureFixture
) -> None:
    tool = string_input_tool("legacy_tool")
    with _warnings_of(sib, caplog):
        assert not sib.can_inject(tool)
    assert "legacy_tool" in caplog.text
    assert "'string'" in caplog.text
    assert sib.inject(tool) is tool


@INJECTING
def test_a_tools_own_parameter_of_that_name_blocks_injection(
    sib: Injecting, caplog: pytest.LogCaptureFixture
) -> None:
    tool = sib.own_param_tool()
    with _warnings_of(sib, caplog):
        assert not sib.can_inject(tool)
    assert str(tool["name"]) in caplog.text
    assert sib.inject(tool) is tool


@INJECTING
def test_a_code_only_tool_is_skipped_with_a_warning(
    sib: Injecting, caplog: pytest.LogCaptureFixture
) -> None:
    tool = third_party("bridge_only", allowed_callers=["code_execution"])
    with _warnings_of(sib, caplog):
        assert not sib.can_inject(tool)
    assert "bridge_only" in caplog.text
    assert sib.inject(tool) is tool


@INJECTING
def test_a_tool_that_already_carries_it_is_not_injectable_again(
    sib: Injecting, caplog: pytest.LogCaptureFixture
) -> None:
    once = sib.inject(third_party("search_code"))
    with _warnings_of(sib, caplog):
        assert not sib.can_inject(once)
    assert "search_code" in caplog.text


@INJECTING
@pytest.mark.parametrize(
    "tool",
    [
        {"name": "t", "parameters": "string"},
        {"name": "t", "parameters": {"type": "object", "properties": ["a"]}},
        "not a tool",
    ],
)
def test_malformed_tools_are_not_injectable(sib: Injecting, tool: Any) -> None:
    assert not sib.can_inject(tool)
    assert sib.inject(tool) is tool


@INJECTING
def test_inject_does_not_mutate_and_survives_frozen_input(sib: Injecting) -> None:
    tool = deep_freeze(third_party())
    before = snapshot(tool)
    injected = sib.inject(tool)
    assert thaw(tool) == before
    assert sib.arg in property_names(injected)
    assert list(injected["parameters"]["required"]) == ["query"]


@INJECTING
def test_each_schema_gets_its_own_property_copy(sib: Injecting) -> None:
    first = sib.injected_property(sib.inject(third_party("a")))
    second = sib.injected_property(sib.inject(third_party("b")))
    assert first is not second
    assert first is not sib.prop
    assert isinstance(first, dict)
    first["description"] = "mutated by a dereferencer"
    assert sib.prop["description"] != "mutated by a dereferencer"


@INJECTING
def test_inject_is_idempotent(sib: Injecting) -> None:
    once = sib.inject(third_party())
    assert sib.inject(once) is once
    assert property_names(once).count(sib.arg) == 1


@INJECTING
def test_remove_takes_out_only_the_injected_property(sib: Injecting) -> None:
    plain = third_party()
    assert sib.remove(sib.inject(plain)) == plain
    assert sib.remove(plain) is plain
    own = sib.own_param_tool()
    assert sib.remove(own) is own


@INJECTING
def test_remove_tolerates_non_tools(sib: Injecting) -> None:
    junk: object = "x"
    assert sib.remove(junk) == junk  # type: ignore[arg-type]


# apply


@INJECTING
def test_an_opted_in_tool_carries_it_and_others_are_untouched(sib: Injecting) -> None:
    other = third_party("other")
    result = sib.apply([third_party(), other], {"search_code": {sib.option: True}})
    assert sib.arg in property_names(result.definitions[0])
    assert result.definitions[1] is other
    assert sib.carrying(result) == {"search_code"}


@INJECTING
def test_nothing_opted_in_returns_the_same_objects(sib: Injecting) -> None:
    defs = [third_party()]
    registry = {"search_code": defs[0]}
    result = sib.apply(defs, {}, registry=registry)
    assert result.definitions is defs
    assert result.registry is registry
    assert sib.carrying(result) == frozenset()


@INJECTING
def test_an_already_carrying_tool_stays_the_same_object(sib: Injecting) -> None:
    once = sib.inject(third_party())
    result = sib.apply([once], {"search_code": {sib.option: True}})
    assert result.definitions[0] is once


@INJECTING
def test_kill_switch_removes_injected_properties_but_not_a_tools_own(sib: Injecting) -> None:
    injected = sib.inject(third_party())
    own = sib.own_param_tool()
    result = sib.apply([injected, own], {"*": {sib.option: True}}, enabled=False)
    search, kept = result.definitions
    assert sib.arg not in property_names(search)
    assert kept is own
    assert sib.carrying(result) == frozenset()


@INJECTING
def test_opted_in_tools_that_cannot_carry_it_are_left_alone(
    sib: Injecting, caplog: pytest.LogCaptureFixture
) -> None:
    legacy, own = string_input_tool("legacy"), sib.own_param_tool()
    with _warnings_of(sib, caplog):
        result = sib.apply([legacy, own], {"*": {sib.option: True}})
    assert result.definitions[:2] == [legacy, own]
    assert sib.carrying(result) == frozenset()
    assert "legacy" in caplog.text


@INJECTING
def test_registry_entries_follow_the_definitions(sib: Injecting) -> None:
    search = third_party()
    registry = {"search_code": search, "deferred_tool": third_party("deferred_tool")}
    result = sib.apply([search], {"*": {sib.option: True}}, registry=registry)
    assert result.registry is not None
    assert result.registry["search_code"]["parameters"] is result.definitions[0]["parameters"]
    assert sib.arg in property_names(result.registry["deferred_tool"])
    assert sib.carrying(result) == {"search_code", "deferred_tool"}
    assert registry["search_code"] is search


@INJECTING
def test_an_opt_out_is_mirrored_into_the_registry(sib: Injecting) -> None:
    tool = sib.inject(third_party())
    result = sib.apply([tool], {"search_code": {sib.option: False}}, registry={"search_code": tool})
    assert result.registry is not None
    assert sib.arg not in property_names(result.registry["search_code"])


@INJECTING
def test_frozen_definitions_survive_apply(sib: Injecting) -> None:
    defs = deep_freeze([third_party()])
    result = sib.apply(defs, {"*": {sib.option: True}})
    assert sib.arg in property_names(result.definitions[0])
    assert sib.arg not in defs[0]["parameters"]["properties"]


def test_a_registry_entry_already_in_parity_is_kept() -> None:
    changed = intent.inject_intent_param(third_party())
    registry = {"search_code": {**changed, "extra": "registry-only field"}}
    assert mirror_registry(registry, {"search_code": changed}, lambda tool: tool) is registry


# self-spawn stripping


@INJECTING
def test_strip_from_definitions_removes_every_injected_property(sib: Injecting) -> None:
    own = sib.own_param_tool()
    defs = [sib.inject(third_party()), own]
    stripped = sib.strip_definitions(defs)
    assert stripped[0] == third_party()
    assert stripped[1] is own


@INJECTING
def test_strip_from_definitions_limited_to_names(sib: Injecting) -> None:
    defs = [sib.inject(third_party("a")), sib.inject(third_party("b"))]
    stripped = sib.strip_definitions(defs, ["b"])
    assert stripped[0] is defs[0]
    assert sib.arg not in property_names(stripped[1])
    assert sib.strip_definitions(defs, ["other"]) is defs


@INJECTING
def test_strip_from_definitions_noop_is_the_same_list(sib: Injecting) -> None:
    defs = [third_party(), sib.own_param_tool()]
    assert sib.strip_definitions(defs) is defs


@INJECTING
def test_strip_from_registry_returns_a_new_registry(sib: Injecting) -> None:
    registry = {"a": sib.inject(third_party("a")), "b": third_party("b")}
    stripped = sib.strip_registry(registry)
    assert stripped is not registry
    assert stripped == {"a": third_party("a"), "b": registry["b"]}
    assert stripped["b"] is registry["b"]
    assert sib.arg in property_names(registry["a"])


@INJECTING
def test_strip_from_registry_limited_to_names(sib: Injecting) -> None:
    registry = {"a": sib.inject(third_party("a"))}
    assert sib.strip_registry(registry, ["other"]) is registry


@INJECTING
def test_strip_from_registry_noop_and_none(sib: Injecting) -> None:
    registry = {"b": third_party("b")}
    assert sib.strip_registry(registry) is registry
    assert sib.strip_registry(None) is None
