"""intent_ui.core.capabilities.background: the run_in_background capability (§2, §10.3).

Mirrors test_capability_intent.py section for section.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from intent_ui.core.capabilities import background as background_mod
from intent_ui.core.capabilities.background import (
    CHECK_BACKGROUND_TASK_DEFINITION,
    EXCLUDED_BACKGROUND_TOOL_NAMES,
    NATIVE_BACKGROUND_TOOL_NAMES,
    RUN_IN_BACKGROUND_ARG,
    RUN_IN_BACKGROUND_PROPERTY,
    apply_background_tool_calls,
    can_inject_run_in_background_param,
    has_run_in_background_arg,
    inject_run_in_background_param,
    is_background_eligible_tool_name,
    is_background_requested,
    is_run_in_background_property,
    register_background_task_tool,
    remove_run_in_background_param,
    strip_background_from_tool_definitions,
    strip_background_from_tool_registry,
    strip_run_in_background_arg,
    synthesize_background_tool_options,
)
from tests.unit._capability_helpers import (
    deep_freeze,
    property_names,
    snapshot,
    string_input_tool,
    thaw,
    third_party,
)

POLL = "check_background_task"


def own_flag_tool() -> dict[str, Any]:
    """A tool whose own parameter happens to be called run_in_background."""
    return {
        "name": "job",
        "parameters": {
            "type": "object",
            "properties": {RUN_IN_BACKGROUND_ARG: {"type": "boolean", "description": "nohup"}},
        },
    }


# --- constants -----------------------------------------------------------------------


def test_arg_name() -> None:
    assert RUN_IN_BACKGROUND_ARG == "run_in_background"


def test_property_is_a_read_only_boolean() -> None:
    assert RUN_IN_BACKGROUND_PROPERTY["type"] == "boolean"
    with pytest.raises(TypeError):
        RUN_IN_BACKGROUND_PROPERTY["type"] = "string"  # type: ignore[index]


def test_code_pair_is_background_native() -> None:
    assert frozenset({"execute_code", "bash_tool"}) == NATIVE_BACKGROUND_TOOL_NAMES


def test_exclusions_and_eligibility() -> None:
    assert POLL in EXCLUDED_BACKGROUND_TOOL_NAMES
    assert not is_background_eligible_tool_name("web_search")
    assert not is_background_eligible_tool_name("lc_transfer_to_writer")
    assert is_background_eligible_tool_name("search_code")


# --- arguments -----------------------------------------------------------------------


def test_requested_only_for_literal_true() -> None:
    assert is_background_requested({"run_in_background": True})
    assert is_background_requested('{"run_in_background": true}')
    assert not is_background_requested({"run_in_background": "true"})
    assert not is_background_requested({"run_in_background": None})
    assert not is_background_requested("garbage")


def test_has_arg_sees_any_value() -> None:
    assert has_run_in_background_arg({"run_in_background": False})
    assert not has_run_in_background_arg({"q": 1})
    assert not has_run_in_background_arg(None)


def test_strip_removes_the_key_without_mutating() -> None:
    args = {"run_in_background": True, "q": 1}
    assert strip_run_in_background_arg(args) == {"q": 1}
    assert args == {"run_in_background": True, "q": 1}


def test_strip_parses_json_and_keeps_absent_as_same_object() -> None:
    assert strip_run_in_background_arg('{"run_in_background": true}') == {}
    args = {"q": 1}
    assert strip_run_in_background_arg(args) is args


def test_strip_keeps_intent() -> None:
    assert strip_run_in_background_arg({"intent": "Building", "run_in_background": True}) == {
        "intent": "Building"
    }


# --- can_inject / inject / remove ----------------------------------------------------


def test_schema_less_tool_is_injectable() -> None:
    assert can_inject_run_in_background_param({"name": "ping"})


def test_non_object_schema_is_skipped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=background_mod.__name__):
        assert not can_inject_run_in_background_param(string_input_tool("legacy_tool"))
    assert "legacy_tool" in caplog.text


def test_own_parameter_is_skipped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=background_mod.__name__):
        assert not can_inject_run_in_background_param(own_flag_tool())
    assert "job" in caplog.text


def test_code_only_tool_is_skipped() -> None:
    assert not can_inject_run_in_background_param(third_party(allowed_callers=["code_execution"]))


@pytest.mark.parametrize(
    "tool",
    [
        {"name": "t", "parameters": "string"},
        {"name": "t", "parameters": {"type": "object", "properties": ["a"]}},
        "not a tool",
    ],
)
def test_malformed_tools_are_not_injectable(tool: Any) -> None:
    assert not can_inject_run_in_background_param(tool)
    assert inject_run_in_background_param(tool) is tool


def test_inject_appends_last_never_first() -> None:
    injected = inject_run_in_background_param(third_party())
    assert property_names(injected) == ["query", "limit", "run_in_background"]
    assert injected["parameters"]["required"] == ["query"]


def test_inject_does_not_mutate_and_survives_frozen_input() -> None:
    tool = deep_freeze(third_party())
    before = snapshot(tool)
    injected = inject_run_in_background_param(tool)
    assert thaw(tool) == before
    assert property_names(injected)[-1] == "run_in_background"


def test_each_schema_gets_its_own_property_copy() -> None:
    a = inject_run_in_background_param(third_party("a"))["parameters"]["properties"]
    b = inject_run_in_background_param(third_party("b"))["parameters"]["properties"]
    assert a[RUN_IN_BACKGROUND_ARG] is not b[RUN_IN_BACKGROUND_ARG]
    assert a[RUN_IN_BACKGROUND_ARG] is not RUN_IN_BACKGROUND_PROPERTY


def test_inject_is_idempotent() -> None:
    once = inject_run_in_background_param(third_party())
    assert inject_run_in_background_param(once) is once


def test_inject_into_schema_less_tool_makes_an_object_schema() -> None:
    injected = inject_run_in_background_param({"name": "ping"})
    assert injected["parameters"] == {
        "type": "object",
        "properties": {RUN_IN_BACKGROUND_ARG: dict(RUN_IN_BACKGROUND_PROPERTY)},
    }


def test_inject_leaves_own_parameter_alone() -> None:
    tool = own_flag_tool()
    assert inject_run_in_background_param(tool) is tool


def test_remove_is_guarded_by_the_description() -> None:
    tool = own_flag_tool()
    assert remove_run_in_background_param(tool) is tool
    plain = third_party()
    assert remove_run_in_background_param(inject_run_in_background_param(plain)) == plain
    assert remove_run_in_background_param(plain) is plain


def test_property_recognition() -> None:
    assert is_run_in_background_property(RUN_IN_BACKGROUND_PROPERTY)
    assert not is_run_in_background_property({"type": "boolean"})
    assert not is_run_in_background_property(None)


# --- apply_background_tool_calls -----------------------------------------------------


def test_opted_in_tool_gets_the_flag_and_the_poll_tool_is_registered() -> None:
    result = apply_background_tool_calls(
        [third_party()], {"search_code": {"run_in_background": True}}
    )
    search, poll = result.definitions
    assert property_names(search)[-1] == "run_in_background"
    assert poll is CHECK_BACKGROUND_TASK_DEFINITION
    assert result.background_tool_names == {"search_code"}


def test_nothing_opted_in_is_a_noop() -> None:
    defs = [third_party()]
    result = apply_background_tool_calls(defs, {})
    assert result.definitions is defs
    assert result.background_tool_names == frozenset()


def test_native_code_pair_defaults_on() -> None:
    result = apply_background_tool_calls([third_party("execute_code")], None)
    assert result.background_tool_names == {"execute_code"}


def test_native_code_pair_opted_out() -> None:
    defs = [third_party("execute_code")]
    result = apply_background_tool_calls(defs, {"execute_code": {"run_in_background": False}})
    assert result.definitions is defs


def test_excluded_and_code_only_tools_never_get_the_flag() -> None:
    defs = [
        third_party("web_search"),
        third_party("lc_transfer_to_x"),
        third_party("c", allowed_callers=["code_execution"]),
    ]
    result = apply_background_tool_calls(defs, {"*": {"run_in_background": True}})
    assert result.definitions is defs


def test_non_object_opted_in_is_skipped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=background_mod.__name__):
        result = apply_background_tool_calls(
            [string_input_tool("legacy")], {"legacy": {"run_in_background": True}}
        )
    assert result.background_tool_names == frozenset()
    assert "legacy" in caplog.text


def test_own_parameter_opted_in_is_skipped() -> None:
    tool = own_flag_tool()
    result = apply_background_tool_calls([tool], {"job": {"run_in_background": True}})
    assert result.definitions == [tool]
    assert result.background_tool_names == frozenset()


def test_kill_switch_removes_injected_flags_only() -> None:
    injected = inject_run_in_background_param(third_party())
    own = own_flag_tool()
    result = apply_background_tool_calls(
        [injected, own], {"*": {"run_in_background": True}}, enabled=False
    )
    search, job = result.definitions
    assert "run_in_background" not in property_names(search)
    assert job is own
    assert result.background_tool_names == frozenset()


def test_already_flagged_tool_stays_the_same_object() -> None:
    injected = inject_run_in_background_param(third_party())
    result = apply_background_tool_calls([injected], {"search_code": {"run_in_background": True}})
    assert result.definitions[0] is injected


def test_tool_ids_and_definition_marker() -> None:
    result = apply_background_tool_calls(
        [third_party("a"), third_party("b", run_in_background=True)],
        {"a_mcp_srv": {"run_in_background": True}},
        tool_ids={"a": "a_mcp_srv"},
    )
    assert result.background_tool_names == {"a", "b"}


def test_registry_parity_and_poll_tool_in_registry() -> None:
    search = third_party()
    registry = {"search_code": search, "deferred": third_party("deferred")}
    result = apply_background_tool_calls(
        [search], {"*": {"run_in_background": True}}, registry=registry
    )
    assert result.registry is not None
    assert result.registry["search_code"]["parameters"] is result.definitions[0]["parameters"]
    assert property_names(result.registry["deferred"])[-1] == "run_in_background"
    assert result.registry[POLL] is CHECK_BACKGROUND_TASK_DEFINITION
    assert result.background_tool_names == {"search_code", "deferred"}
    assert POLL not in registry


def test_poll_tool_is_registered_once() -> None:
    first = apply_background_tool_calls([third_party()], {"*": {"run_in_background": True}})
    second = apply_background_tool_calls(first.definitions, {"*": {"run_in_background": True}})
    assert [tool["name"] for tool in second.definitions].count(POLL) == 1
    assert second.definitions is first.definitions


def test_foreign_poll_tool_is_shadowed_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    foreign = {"name": POLL, "description": "someone else's", "parameters": {"type": "object"}}
    with caplog.at_level(logging.WARNING, logger=background_mod.__name__):
        defs, registry = register_background_task_tool([third_party(), foreign], {POLL: foreign})
    assert [tool["name"] for tool in defs] == ["search_code", POLL]
    assert defs[-1] is CHECK_BACKGROUND_TASK_DEFINITION
    assert registry is not None and registry[POLL] is CHECK_BACKGROUND_TASK_DEFINITION
    assert POLL in caplog.text


def test_registering_into_a_registry_only() -> None:
    defs = [CHECK_BACKGROUND_TASK_DEFINITION]
    out_defs, registry = register_background_task_tool(defs, {})
    assert out_defs is defs
    assert registry == {POLL: CHECK_BACKGROUND_TASK_DEFINITION}


# --- self-spawn stripping ------------------------------------------------------------


def test_strip_from_definitions_removes_flag_and_poll_tool() -> None:
    applied = apply_background_tool_calls([third_party()], {"*": {"run_in_background": True}})
    stripped = strip_background_from_tool_definitions(applied.definitions)
    assert stripped == [third_party()]


def test_strip_from_definitions_limited_to_names_and_keeps_own_parameter() -> None:
    defs = [inject_run_in_background_param(third_party()), own_flag_tool()]
    stripped = strip_background_from_tool_definitions(defs, ["other"])
    assert stripped is defs
    stripped_all = strip_background_from_tool_definitions(defs)
    assert stripped_all[1] is defs[1]


def test_strip_from_registry() -> None:
    registry = {"search_code": inject_run_in_background_param(third_party())}
    registry[POLL] = CHECK_BACKGROUND_TASK_DEFINITION
    stripped = strip_background_from_tool_registry(registry)
    assert stripped == {"search_code": third_party()}
    assert POLL in registry


def test_strip_from_registry_limited_to_names() -> None:
    registry = {"search_code": inject_run_in_background_param(third_party())}
    assert strip_background_from_tool_registry(registry, ["other"]) is registry


def test_strip_from_registry_noop_and_none() -> None:
    registry = {"a": third_party("a")}
    assert strip_background_from_tool_registry(registry) is registry
    assert strip_background_from_tool_registry(None) is None


# --- synthesis -----------------------------------------------------------------------


def test_synthesize_modes() -> None:
    assert synthesize_background_tool_options(True) == {"*": {"run_in_background": True}}
    assert synthesize_background_tool_options(None) is None
    assert synthesize_background_tool_options(["a"]) == {
        "*": {"run_in_background": False},
        "a": {"run_in_background": True},
    }


def test_spec_false_opts_the_native_pair_out() -> None:
    options = synthesize_background_tool_options(False, ["execute_code"])
    defs = [third_party("execute_code")]
    assert apply_background_tool_calls(defs, options).definitions is defs


def test_non_mapping_entries_do_not_crash() -> None:
    defs: list[Any] = ["junk"]
    result = apply_background_tool_calls(defs, {"*": {"run_in_background": True}})
    assert result.definitions is defs
