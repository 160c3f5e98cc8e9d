"""intent_ui.core.capabilities.intent: the describe_intent capability.

Behaviour every capability sibling shares is tested once in test_capability_siblings.py;
this file keeps what is the intent label's own: where it goes, when it is required,
which tools carry it by default, and the public contract.
"""

from __future__ import annotations

import logging
from types import MappingProxyType

import pytest

from intent_ui.core.capabilities import intent as intent_mod
from intent_ui.core.capabilities.intent import (
    apply_intent_labels,
    inject_intent_param,
    is_intent_eligible_tool,
    is_intent_eligible_tool_name,
    read_intent,
    strip_intent,
    strip_intent_from_tool_definitions,
    strip_intent_from_tool_registry,
    synthesize_intent_tool_options,
)
from intent_ui.core.capabilities.intent_schema import INTENT_DESCRIPTION
from intent_ui.core.capabilities.selection import canonical_tool_options
from tests.support.capability_helpers import (
    business_intent_tool,
    deep_freeze,
    native,
    property_names,
    third_party,
)

LABEL = {"type": "string", "description": INTENT_DESCRIPTION}

# --- the public contract -------------------------------------------------------------

CONTRACT = [
    "INTENT_ARG",
    "INTENT_LABEL_MARKER",
    "INTENT_DESCRIPTION",
    "INTENT_PROPERTY",
    "with_intent",
    "without_intent",
    "with_intent_model",
    "is_intent_label_property",
    "read_intent",
    "strip_intent",
    "apply_outcome",
    "can_inject_intent_param",
    "inject_intent_param",
    "apply_intent_labels",
    "strip_intent_from_tool_definitions",
    "strip_intent_from_tool_registry",
    "synthesize_intent_tool_options",
    "EXCLUDED_INTENT_TOOL_NAMES",
]


@pytest.mark.parametrize("name", CONTRACT)
def test_the_contract_is_importable_from_the_intent_module(name: str) -> None:
    assert name in intent_mod.__all__
    assert getattr(intent_mod, name) is not None


def test_every_exported_name_exists() -> None:
    assert [name for name in intent_mod.__all__ if not hasattr(intent_mod, name)] == []


# --- which tools carry a label -------------------------------------------------------

NATIVE_INVENTORY = [
    # The coding suite.
    "read_file",
    "write_file",
    "edit_file",
    "grep_search",
    "glob_search",
    "list_directory",
    "compile_check",
    "bash_tool",
    "execute_code",
    "run_tools_with_code",
    "run_tools_with_bash",
    "subagent",
    "skill",
    "tool_search",
    "web_search",
    # Host tools.
    "create_file",
    "set_memory",
    "delete_memory",
    "ask_user_question",
    "file_search",
]


@pytest.mark.parametrize("name", NATIVE_INVENTORY)
def test_every_native_tool_is_labelled_by_default(name: str) -> None:
    assert apply_intent_labels([third_party(name)], None).label_tool_names == {name}


def test_a_third_party_tool_is_not_labelled_by_default() -> None:
    defs = [third_party("search_code")]
    result = apply_intent_labels(defs, None)
    assert result.definitions is defs
    assert result.label_tool_names == frozenset()


def test_the_background_poll_tool_is_never_labelled_even_when_asked() -> None:
    options = {"check_background_task": {"describe_intent": True}}
    assert not is_intent_eligible_tool_name("check_background_task")
    result = apply_intent_labels([third_party("check_background_task")], options)
    assert result.label_tool_names == frozenset()


def test_ordinary_tools_are_eligible() -> None:
    assert is_intent_eligible_tool_name("search_code")
    assert is_intent_eligible_tool(third_party())


def test_code_only_tool_is_not_eligible() -> None:
    assert not is_intent_eligible_tool(third_party(allowed_callers=["code_execution"]))


def test_dual_caller_tool_is_eligible() -> None:
    assert is_intent_eligible_tool(third_party(allowed_callers=["direct", "code_execution"]))


def test_unnamed_tool_is_not_eligible() -> None:
    assert not is_intent_eligible_tool({"parameters": {"type": "object"}})


# --- arguments -----------------------------------------------------------------------


def test_read_intent_from_dict() -> None:
    assert read_intent({"intent": "Searching for OAuth", "q": "x"}) == "Searching for OAuth"


def test_read_intent_from_json_string() -> None:
    assert read_intent('{"intent": "Reading the router", "path": "a"}') == "Reading the router"


def test_read_intent_trims_whitespace() -> None:
    assert read_intent({"intent": "  Reading the router \n"}) == "Reading the router"


@pytest.mark.parametrize(
    "args",
    [
        {"intent": ""},
        {"intent": "   "},
        {"intent": 42},
        {"intent": None},
        {"intent": ["Searching"]},
        {"query": "no intent"},
        '{"intent": "unterminated',
        "not json at all",
        '["intent", "a list"]',
        "42",
        None,
        17,
        ["intent"],
    ],
)
def test_read_intent_returns_none_for_blank_non_string_or_malformed(args: object) -> None:
    assert read_intent(args) is None


def test_strip_intent_accepts_read_only_args() -> None:
    args = MappingProxyType({"intent": "Searching", "q": 1})
    assert strip_intent(args) == {"q": 1}


# --- inject: first, optional unless asked --------------------------------------------


def test_inject_places_intent_first() -> None:
    injected = inject_intent_param(third_party())
    assert property_names(injected) == ["intent", "query", "limit"]
    assert injected["parameters"]["properties"]["intent"] == LABEL


def test_inject_is_optional_by_default() -> None:
    assert inject_intent_param(third_party())["parameters"]["required"] == ["query"]


def test_inject_survives_deep_frozen_input() -> None:
    tool = deep_freeze(third_party(allowed_callers=["direct"]))
    injected = inject_intent_param(tool, required=True)
    assert property_names(injected) == ["intent", "query", "limit"]
    assert injected["parameters"]["required"] == ["intent", "query"]
    assert "intent" not in tool["parameters"]["properties"]


def test_host_inject_over_sdk_native_edit_file_is_the_same_object() -> None:
    sdk_edit_file = native("edit_file")
    assert inject_intent_param(sdk_edit_file) is sdk_edit_file
    assert sdk_edit_file["parameters"]["required"][0] == "intent"


def test_inject_moves_a_label_that_is_not_first() -> None:
    tool = {
        "name": "t",
        "parameters": {"type": "object", "properties": {"a": {"type": "string"}, "intent": LABEL}},
    }
    assert property_names(inject_intent_param(tool)) == ["intent", "a"]


def test_inject_required_on_a_direct_only_tool() -> None:
    injected = inject_intent_param(third_party(), required=True)
    assert injected["parameters"]["required"] == ["intent", "query"]


def test_inject_required_adds_required_to_a_tool_without_it() -> None:
    injected = inject_intent_param({"name": "ping"}, required=True)
    assert injected["parameters"]["required"] == ["intent"]


def test_inject_never_requires_on_a_dual_caller_tool() -> None:
    tool = third_party(allowed_callers=["direct", "code_execution"])
    injected = inject_intent_param(tool, required=True)
    assert property_names(injected)[0] == "intent"
    assert "intent" not in injected["parameters"]["required"]


# --- apply_intent_labels -------------------------------------------------------------


def test_opted_in_third_party_tool_gets_an_optional_label() -> None:
    result = apply_intent_labels([third_party()], {"search_code": {"describe_intent": True}})
    (tool,) = result.definitions
    assert property_names(tool)[0] == "intent"
    assert tool["parameters"]["required"] == ["query"]
    assert result.injected_tool_names == {"search_code"}
    assert result.label_tool_names == {"search_code"}


def test_native_tool_defaults_on_and_is_not_host_injected() -> None:
    defs = [native("read_file")]
    result = apply_intent_labels(defs, None)
    assert result.definitions is defs
    assert result.injected_tool_names == frozenset()
    assert result.label_tool_names == {"read_file"}


def test_native_tool_opted_out_is_stripped() -> None:
    result = apply_intent_labels([native("read_file")], {"read_file": {"describe_intent": False}})
    assert property_names(result.definitions[0]) == ["path"]
    assert result.definitions[0]["parameters"]["required"] == ["path"]
    assert result.label_tool_names == frozenset()


def test_host_native_without_schema_label_is_injected_by_default() -> None:
    result = apply_intent_labels([third_party("web_search")], None)
    assert property_names(result.definitions[0])[0] == "intent"
    assert result.injected_tool_names == {"web_search"}


def test_default_native_false_strips_native_labels() -> None:
    result = apply_intent_labels([native("read_file")], None, default_native=False)
    assert "intent" not in property_names(result.definitions[0])


def test_kill_switch_strips_every_label_but_keeps_business_intent() -> None:
    injected = inject_intent_param(third_party())
    crm = business_intent_tool()
    result = apply_intent_labels(
        [native("read_file"), injected, crm], {"*": {"describe_intent": True}}, enabled=False
    )
    read_file, search, ticket = result.definitions
    assert "intent" not in property_names(read_file)
    assert "intent" not in property_names(search)
    assert ticket is crm
    assert result.label_tool_names == frozenset()


def test_wildcard_opts_in_every_eligible_tool() -> None:
    defs = [
        third_party("a"),
        third_party("check_background_task"),
        third_party("lc_transfer_to_writer"),
        third_party("c", allowed_callers=["code_execution"]),
    ]
    result = apply_intent_labels(defs, {"*": {"describe_intent": True}})
    assert result.label_tool_names == {"a"}
    assert [property_names(tool)[0] for tool in result.definitions] == [
        "intent",
        "query",
        "query",
        "query",
    ]


@pytest.mark.parametrize(
    ("tool", "reason"),
    [
        (third_party("c", allowed_callers=["code_execution"]), "callable only from code"),
        (third_party("check_background_task"), "host machinery"),
        (third_party("lc_transfer_to_writer"), "handoff"),
    ],
)
def test_naming_a_tool_that_cannot_carry_a_label_is_warned_with_its_name(
    tool: dict[str, object], reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    name = str(tool["name"])
    with caplog.at_level(logging.WARNING, logger=intent_mod.__name__):
        result = apply_intent_labels([tool], {name: {"describe_intent": True}})
    assert result.label_tool_names == frozenset()
    assert f"describe_intent is on for {name!r}" in caplog.text
    assert reason in caplog.text


def test_the_wildcard_passing_over_such_a_tool_says_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tool = third_party("c", allowed_callers=["code_execution"])
    with caplog.at_level(logging.WARNING, logger=intent_mod.__name__):
        apply_intent_labels([tool], {"*": {"describe_intent": True}})
    assert caplog.text == ""


def test_code_only_native_loses_its_label() -> None:
    result = apply_intent_labels([native("grep_search", allowed_callers=["code_execution"])], None)
    assert "intent" not in property_names(result.definitions[0])
    assert result.label_tool_names == frozenset()


def test_dual_caller_native_label_is_made_optional() -> None:
    tool = native("write_file", allowed_callers=["direct", "code_execution"])
    result = apply_intent_labels([tool], None)
    params = result.definitions[0]["parameters"]
    assert next(iter(params["properties"])) == "intent"
    assert "intent" not in params["required"]


def test_action_alias_with_encoded_domain_resolves() -> None:
    stored = {"getPets_action_medium---com": {"describe_intent": True}}
    result = apply_intent_labels(
        [third_party("getPets_action_medium_com")],
        canonical_tool_options(stored, ["getPets_action_medium_com"]),
    )
    assert result.label_tool_names == {"getPets_action_medium_com"}


def test_a_tool_not_named_as_an_action_is_not_aliased_by_its_shape() -> None:
    stored = {"foo_action_medium---com": {"describe_intent": True}}
    result = apply_intent_labels([third_party("foo_action_medium_com")], stored)
    assert result.label_tool_names == frozenset()


def test_business_intent_survives_opt_out() -> None:
    crm = business_intent_tool()
    result = apply_intent_labels([crm], {crm["name"]: {"describe_intent": False}})
    assert result.definitions[0] is crm


def test_registry_only_deferred_tool_is_injected_too() -> None:
    registry = {"deferred_tool": third_party("deferred_tool")}
    result = apply_intent_labels([], {"*": {"describe_intent": True}}, registry=registry)
    assert result.registry is not None
    assert property_names(result.registry["deferred_tool"])[0] == "intent"
    assert result.label_tool_names == {"deferred_tool"}
    assert result.injected_tool_names == {"deferred_tool"}


# --- self-spawn stripping ------------------------------------------------------------


def test_strip_from_definitions_removes_every_label() -> None:
    defs = [native("read_file"), inject_intent_param(third_party()), business_intent_tool()]
    stripped = strip_intent_from_tool_definitions(defs)
    assert ["intent" in property_names(tool) for tool in stripped] == [False, False, True]


def test_strip_from_registry_returns_a_new_registry() -> None:
    registry = {"read_file": native("read_file"), "b": third_party("b")}
    stripped = strip_intent_from_tool_registry(registry)
    assert stripped is not registry
    assert stripped is not None
    assert "intent" not in property_names(stripped["read_file"])
    assert stripped["b"] is registry["b"]
    assert "intent" in property_names(registry["read_file"])


# --- synthesis (model specs and ephemeral agents) ------------------------------------


def test_ephemeral_agent_describes_every_eligible_tool() -> None:
    options = synthesize_intent_tool_options(True, ["read_file", "search_code"])
    result = apply_intent_labels([native("read_file"), third_party()], options)
    assert result.label_tool_names == {"read_file", "search_code"}


def test_model_spec_list_describes_only_those_tools() -> None:
    names = ["read_file", "search_code", "other"]
    options = synthesize_intent_tool_options(["search_code"], names)
    result = apply_intent_labels(
        [native("read_file"), third_party(), third_party("other")], options
    )
    assert result.label_tool_names == {"search_code"}
