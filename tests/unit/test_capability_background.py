"""intent_ui.core.capabilities.background: the run_in_background capability.

Behaviour every capability sibling shares is tested once in test_capability_siblings.py;
this file keeps what is background's own: the flag goes LAST, only a literal `true`
asks for it, which tools default in or are excluded, and the poll tool.
"""

from __future__ import annotations

import logging

import pytest

from intent_ui.core.capabilities import background as background_mod
from intent_ui.core.capabilities.background import (
    CHECK_BACKGROUND_TASK_DEFINITION,
    RUN_IN_BACKGROUND_PROPERTY,
    apply_background_tool_calls,
    inject_run_in_background_param,
    is_background_eligible_tool_name,
    is_background_requested,
    is_run_in_background_property,
    register_background_task_tool,
    strip_background_from_tool_definitions,
    strip_background_from_tool_registry,
    strip_run_in_background_arg,
)
from tests.support.capability_helpers import property_names, third_party

POLL = "check_background_task"

# --- which tools carry the flag ----------------------------------------------------


def test_the_injected_flag_is_a_boolean_the_shared_copy_read_only() -> None:
    injected = inject_run_in_background_param(third_party())
    assert injected["parameters"]["properties"]["run_in_background"]["type"] == "boolean"
    with pytest.raises(TypeError):
        RUN_IN_BACKGROUND_PROPERTY["type"] = "string"  # type: ignore[index]


@pytest.mark.parametrize("name", ["execute_code", "bash_tool"])
def test_the_code_pair_runs_in_the_background_by_default(name: str) -> None:
    assert apply_background_tool_calls([third_party(name)], None).background_tool_names == {name}


def test_a_third_party_tool_is_not_backgroundable_by_default() -> None:
    defs = [third_party("search_code")]
    assert apply_background_tool_calls(defs, None).definitions is defs


@pytest.mark.parametrize(
    "name",
    [
        "read_file",
        "skill",
        "tool_search",
        "run_tools_with_code",
        "run_tools_with_bash",
        "subagent",
        "create_file",
        "edit_file",
        "set_memory",
        "delete_memory",
        "ask_user_question",
        "web_search",
        "file_search",
        POLL,
    ],
)
def test_tools_whose_results_the_foreground_needs_are_never_backgrounded(name: str) -> None:
    """A detached run would drop the artifact, citation or file the foreground makes."""
    options = {name: {"run_in_background": True}}
    assert not is_background_eligible_tool_name(name)
    assert apply_background_tool_calls([third_party(name)], options).background_tool_names == (
        frozenset()
    )


# --- arguments -----------------------------------------------------------------------


def test_requested_only_for_literal_true() -> None:
    assert is_background_requested({"run_in_background": True})
    assert is_background_requested('{"run_in_background": true}')
    assert not is_background_requested({"run_in_background": "true"})
    assert not is_background_requested({"run_in_background": None})
    assert not is_background_requested("garbage")


def test_strip_keeps_intent() -> None:
    assert strip_run_in_background_arg({"intent": "Building", "run_in_background": True}) == {
        "intent": "Building"
    }


# --- inject: appended LAST -----------------------------------------------------------


def test_inject_appends_last_never_first() -> None:
    injected = inject_run_in_background_param(third_party())
    assert property_names(injected) == ["query", "limit", "run_in_background"]
    assert injected["parameters"]["required"] == ["query"]


def test_property_recognition() -> None:
    assert is_run_in_background_property(RUN_IN_BACKGROUND_PROPERTY)
    assert not is_run_in_background_property({"type": "boolean"})
    assert not is_run_in_background_property(None)


# --- apply_background_tool_calls and the poll tool -----------------------------------


def test_opted_in_tool_gets_the_flag_and_the_poll_tool_is_registered() -> None:
    result = apply_background_tool_calls(
        [third_party()], {"search_code": {"run_in_background": True}}
    )
    search, poll = result.definitions
    assert property_names(search)[-1] == "run_in_background"
    assert poll is CHECK_BACKGROUND_TASK_DEFINITION
    assert result.background_tool_names == {"search_code"}


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


def test_strip_from_registry() -> None:
    registry = {"search_code": inject_run_in_background_param(third_party())}
    registry[POLL] = CHECK_BACKGROUND_TASK_DEFINITION
    stripped = strip_background_from_tool_registry(registry)
    assert stripped == {"search_code": third_party()}
    assert POLL in registry
