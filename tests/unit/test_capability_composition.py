"""How the capabilities compose on one tool (the pure-logic cases), plus `apply_capabilities`.

The cases: intent with background (either order, intent stays first), with deferral
(injected before counting and before discovery), with code callers (never on code-only
tools, never required on dual-caller ones), self-spawn stripping, output references,
and all four at once, with and without strict schemas.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import jsonschema
import pytest

from intent_ui.core.capabilities import (
    ALL_CAPABILITIES,
    DEFERRED_TOOLS_CAPABILITY,
    PROGRAMMATIC_TOOLS_CAPABILITY,
    RUN_IN_BACKGROUND_CAPABILITY,
    TOOL_INTENTS_CAPABILITY,
    apply_capabilities,
)
from intent_ui.core.capabilities.background import (
    apply_background_tool_calls,
    inject_run_in_background_param,
    strip_background_from_tool_definitions,
    strip_background_from_tool_registry,
    strip_run_in_background_arg,
)
from intent_ui.core.capabilities.deferred import deferred_definitions, promote_deferred_tools
from intent_ui.core.capabilities.intent import (
    apply_intent_labels,
    inject_intent_param,
    read_intent,
    strip_intent,
    strip_intent_from_tool_definitions,
    strip_intent_from_tool_registry,
)
from intent_ui.core.capabilities.output_references import substitute_output_references
from intent_ui.core.capabilities.programmatic import (
    code_bridge_definitions,
    strip_intent_for_code_bridge,
)
from tests.support.capability_helpers import deep_freeze, native, property_names, third_party

EVERYTHING_ON = {
    "search_code": {
        "describe_intent": True,
        "run_in_background": True,
        "defer_loading": True,
        "allowed_callers": ["direct", "code_execution"],
    }
}


def assert_valid_schema(schema: Any, instance: Any) -> None:
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(instance, schema)


# --- intent + run_in_background ------------------------------------------------------


def test_intent_then_background_keeps_intent_first() -> None:
    options = {"search_code": {"describe_intent": True, "run_in_background": True}}
    labelled = apply_intent_labels([third_party()], options)
    both = apply_background_tool_calls(labelled.definitions, options)
    assert property_names(both.definitions[0]) == ["intent", "query", "limit", "run_in_background"]


def test_background_then_intent_keeps_intent_first() -> None:
    options = {"search_code": {"describe_intent": True, "run_in_background": True}}
    flagged = apply_background_tool_calls([third_party()], options)
    both = apply_intent_labels(flagged.definitions, options)
    assert property_names(both.definitions[0]) == ["intent", "query", "limit", "run_in_background"]


def test_intent_and_background_order_is_stable_across_runs() -> None:
    options = {"search_code": {"describe_intent": True, "run_in_background": True}}
    first = apply_capabilities([third_party()], options, capabilities=ALL_CAPABILITIES)
    second = apply_capabilities(first.definitions, options, capabilities=ALL_CAPABILITIES)
    assert json.dumps(second.definitions, default=dict) == json.dumps(
        first.definitions, default=dict
    )
    assert property_names(second.definitions[0])[0] == "intent"


def test_poll_tool_never_gets_a_label() -> None:
    options = {"*": {"describe_intent": True, "run_in_background": True}}
    result = apply_capabilities([third_party()], options, capabilities=ALL_CAPABILITIES)
    poll = next(tool for tool in result.definitions if tool["name"] == "check_background_task")
    assert "intent" not in property_names(poll)
    assert "check_background_task" not in result.intent_tool_names


def test_call_args_strip_both_injected_keys_for_the_tool_body() -> None:
    args = '{"intent": "Searching for OAuth", "query": "oauth", "run_in_background": true}'
    assert read_intent(args) == "Searching for OAuth"
    assert strip_run_in_background_arg(strip_intent(args)) == {"query": "oauth"}


# --- intent + defer_loading ----------------------------------------------------------


def test_deferred_tool_registry_entry_is_injected_before_counting() -> None:
    tool = third_party("crm_lookup")
    options = {"crm_lookup": {"describe_intent": True, "defer_loading": True}}
    result = apply_capabilities([tool], options, capabilities=ALL_CAPABILITIES)
    assert result.definitions == []
    assert result.deferred_names == ("crm_lookup",)
    (counted,) = deferred_definitions(result.registry, result.deferred_names)
    assert property_names(counted)[0] == "intent"
    assert "crm_lookup" in result.intent_tool_names


def test_deferred_tool_discovered_later_arrives_injected() -> None:
    tool = third_party("crm_lookup")
    options = {"crm_lookup": {"describe_intent": True, "defer_loading": True}}
    result = apply_capabilities(
        [tool, native("tool_search")],
        options,
        capabilities=ALL_CAPABILITIES,
        registry={"crm_lookup": tool},
    )
    promoted = promote_deferred_tools(result.definitions, result.registry, ["crm_lookup"], options)
    discovered = promoted.loaded[-1]
    assert property_names(discovered)[0] == "intent"
    assert property_names(discovered).count("intent") == 1


# --- intent + allowed_callers --------------------------------------------------------


def test_code_only_tool_is_not_injected() -> None:
    options = {"bridge": {"describe_intent": True, "allowed_callers": ["code_execution"]}}
    result = apply_capabilities([third_party("bridge")], options, capabilities=ALL_CAPABILITIES)
    assert "intent" not in property_names(result.definitions[0])
    assert result.intent_tool_names == frozenset()


def test_dual_caller_tool_is_injected_not_required() -> None:
    options = {
        "search_code": {"describe_intent": True, "allowed_callers": ["direct", "code_execution"]}
    }
    result = apply_capabilities([third_party()], options, capabilities=ALL_CAPABILITIES)
    params = result.definitions[0]["parameters"]
    assert property_names(result.definitions[0])[0] == "intent"
    assert "intent" not in params["required"]


def test_dual_caller_native_is_not_required_either() -> None:
    options = {"write_file": {"allowed_callers": ["direct", "code_execution"]}}
    result = apply_capabilities([native("write_file")], options, capabilities=ALL_CAPABILITIES)
    assert "intent" not in result.definitions[0]["parameters"]["required"]
    assert "write_file" in result.intent_tool_names


def test_ptc_bridge_tolerates_a_call_without_intent() -> None:
    args = {"query": "oauth"}
    assert strip_intent_for_code_bridge(args) is args


def test_ptc_inner_call_body_receives_no_intent() -> None:
    inner = {"intent": "Writing the config", "path": "a.toml"}
    body_args = strip_intent_for_code_bridge(inner)
    assert body_args == {"path": "a.toml"}
    assert inner == {"intent": "Writing the config", "path": "a.toml"}


def test_ptc_bridge_schemas_carry_no_label() -> None:
    options = {"*": {"allowed_callers": ["direct", "code_execution"]}}
    result = apply_capabilities(
        [native("write_file"), third_party()], options, capabilities=ALL_CAPABILITIES
    )
    bridge = code_bridge_definitions(result.definitions)
    assert bridge
    assert all("intent" not in property_names(tool) for tool in bridge)


# --- self-spawn ----------------------------------------------------------------------


def test_self_spawn_strips_from_definitions_and_registry() -> None:
    options = {"search_code": {"describe_intent": True, "run_in_background": True}}
    tool = third_party()
    parent = apply_capabilities(
        [tool], options, capabilities=ALL_CAPABILITIES, registry={"search_code": tool}
    )
    child_defs = strip_background_from_tool_definitions(
        strip_intent_from_tool_definitions(parent.definitions, parent.injected_intent_tool_names)
    )
    child_registry = strip_background_from_tool_registry(
        strip_intent_from_tool_registry(parent.registry, parent.injected_intent_tool_names)
    )
    assert child_defs == [tool]
    assert child_registry == {"search_code": tool}
    assert parent.registry is not None
    assert property_names(parent.registry["search_code"])[0] == "intent"


# --- tool output references ----------------------------------------------------------


def test_reference_in_intent_is_not_substituted() -> None:
    outputs = {"tool0turn0": "y" * 400_000}
    args = {"intent": "Comparing with {{tool0turn0}}", "text": "{{tool0turn0}}"}
    result = substitute_output_references(args, outputs)
    assert isinstance(result, dict)
    assert result["intent"] == "Comparing with {{tool0turn0}}"
    assert len(result["text"]) == 400_000


# --- all capabilities on one tool ----------------------------------------------------


def test_all_capabilities_on_one_tool_give_a_valid_schema_with_intent_first() -> None:
    tool = third_party()
    result = apply_capabilities(
        [tool], EVERYTHING_ON, capabilities=ALL_CAPABILITIES, registry={"search_code": tool}
    )
    assert result.deferred_names == ("search_code",)
    assert result.registry is not None
    final = result.registry["search_code"]
    assert property_names(final) == ["intent", "query", "limit", "run_in_background"]
    assert final["allowed_callers"] == ["direct", "code_execution"]
    assert "intent" not in final["parameters"]["required"]
    assert_valid_schema(final["parameters"], {"query": "oauth"})
    assert result.background_tool_names == {"search_code"}
    assert result.intent_tool_names == {"search_code"}


def test_all_capabilities_under_strict_stay_valid_with_intent_first() -> None:
    tool = third_party()
    result = apply_capabilities(
        [tool],
        EVERYTHING_ON,
        capabilities=ALL_CAPABILITIES,
        registry={"search_code": tool},
        strict=True,
    )
    assert result.registry is not None
    params = result.registry["search_code"]["parameters"]
    assert list(params["properties"]) == ["intent", "query", "limit", "run_in_background"]
    assert params["required"] == ["intent", "query", "limit", "run_in_background"]
    assert params["properties"]["intent"]["type"] == ["string", "null"]
    assert params["additionalProperties"] is False
    assert_valid_schema(
        params, {"intent": None, "query": "oauth", "limit": None, "run_in_background": None}
    )


# --- apply_capabilities --------------------------------------------------------------


def test_no_capabilities_strips_native_labels_and_injects_nothing() -> None:
    options = {"*": {"describe_intent": True, "run_in_background": True, "defer_loading": True}}
    defs = [native("read_file"), third_party("execute_code")]
    result = apply_capabilities(defs, options, capabilities=frozenset())
    read_file, execute_code = result.definitions
    assert "intent" not in property_names(read_file)
    assert execute_code is defs[1]
    assert result.intent_tool_names == frozenset()
    assert result.background_tool_names == frozenset()
    assert result.deferred_names == ()


@pytest.mark.parametrize(
    "capability",
    [
        TOOL_INTENTS_CAPABILITY,
        RUN_IN_BACKGROUND_CAPABILITY,
        DEFERRED_TOOLS_CAPABILITY,
        PROGRAMMATIC_TOOLS_CAPABILITY,
    ],
)
def test_each_capability_alone_leaves_the_others_off(capability: str) -> None:
    result = apply_capabilities(
        [third_party()], EVERYTHING_ON, capabilities=frozenset({capability})
    )
    on = {
        TOOL_INTENTS_CAPABILITY: bool(result.intent_tool_names),
        RUN_IN_BACKGROUND_CAPABILITY: bool(result.background_tool_names),
        DEFERRED_TOOLS_CAPABILITY: bool(result.deferred_names),
        PROGRAMMATIC_TOOLS_CAPABILITY: any(
            "allowed_callers" in tool
            for tool in [*result.definitions, *(result.registry or {}).values()]
        ),
    }
    assert {name for name, value in on.items() if value} == {capability}


def test_default_agent_with_wildcard_labels_every_eligible_tool() -> None:
    defs = [native("read_file"), third_party(), third_party("lc_transfer_to_x")]
    result = apply_capabilities(
        defs, {"*": {"describe_intent": True}}, capabilities=ALL_CAPABILITIES
    )
    assert result.intent_tool_names == {"read_file", "search_code"}
    assert result.injected_intent_tool_names == {"search_code"}


def test_unchanged_pipeline_returns_the_same_objects() -> None:
    defs = [third_party()]
    registry = {"search_code": defs[0]}
    result = apply_capabilities(defs, {}, capabilities=ALL_CAPABILITIES, registry=registry)
    assert result.definitions is defs
    assert result.registry is registry


def test_strict_without_changes_returns_the_same_objects() -> None:
    already = {
        "name": "s",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "required": ["a"],
            "additionalProperties": False,
        },
    }
    registry = {"s": already}
    result = apply_capabilities(
        [already], {}, capabilities=frozenset(), registry=registry, strict=True
    )
    assert result.definitions[0] is already
    assert result.registry is registry


def test_strict_with_no_registry() -> None:
    result = apply_capabilities([third_party()], {}, capabilities=frozenset(), strict=True)
    assert result.registry is None
    assert result.definitions[0]["parameters"]["additionalProperties"] is False


def test_pipeline_survives_frozen_inputs() -> None:
    defs = deep_freeze([third_party(), native("read_file")])
    result = apply_capabilities(
        defs, deep_freeze(EVERYTHING_ON), capabilities=ALL_CAPABILITIES, strict=True
    )
    assert result.registry is not None
    assert property_names(result.registry["search_code"])[0] == "intent"
    assert "intent" not in defs[0]["parameters"]["properties"]


def test_background_injection_after_intent_is_append_only() -> None:
    labelled = inject_intent_param(third_party())
    both = inject_run_in_background_param(labelled)
    assert property_names(both)[: len(property_names(labelled))] == property_names(labelled)


def test_options_naming_no_tool_of_the_turn_are_warned_with_the_name(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An agent's option for a tool it does not have (a typo, a removed server's tool)
    takes no effect; whoever wrote it should learn so. An option that asks for nothing
    (a stored `false`) is no surprise and passes quietly."""
    options = {
        "*": {"describe_intent": True},
        "serch_code": {"describe_intent": True},
        "gone_mcp_old": {"run_in_background": True, "defer_loading": True},
        "quiet_one": {"require_approval": False},
        "search_code": {"describe_intent": True},
    }
    with caplog.at_level(logging.WARNING):
        apply_capabilities([third_party("search_code")], options, capabilities=ALL_CAPABILITIES)
    warned = [r.getMessage() for r in caplog.records if "no tool of this turn" in r.getMessage()]
    assert warned == [
        "tool_options['gone_mcp_old'] (defer_loading, run_in_background) names no tool of "
        "this turn, so it takes no effect.",
        "tool_options['serch_code'] (describe_intent) names no tool of this turn, so it "
        "takes no effect.",
    ]
