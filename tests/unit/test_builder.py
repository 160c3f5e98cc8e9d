"""The builder's rules (core.builder): what a switch shows and what a click writes."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from intent_ui.core.builder import (
    BuilderTool,
    describe_all,
    effective_definition,
    intent_ineligibility,
    option_default,
    option_eligible,
    option_keys,
    option_on,
    set_option,
    source_state,
    visible_options,
)
from intent_ui.core.capabilities.intent import with_intent
from intent_ui.core.capabilities.selection import canonical_tool_options, resolve_opt_in

ALL = frozenset({"tool_intents", "run_in_background", "deferred_tools", "programmatic_tools"})
SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}


def mcp(name: str, server: str = "github", **extra: Any) -> BuilderTool:
    definition = {"name": name, "description": f"{name} tool", "parameters": SCHEMA, **extra}
    return BuilderTool(f"{name}_mcp_{server}", name, "mcp", server, definition)


def native(name: str = "read_file", **extra: Any) -> BuilderTool:
    definition = {
        "name": name,
        "description": "Read a file.",
        "parameters": dict(with_intent(SCHEMA)),
        "intent": True,
        **extra,
    }
    return BuilderTool(name, name, "native", "native", definition)


def action(operation: str = "postMessage", domain: str = "slack---com") -> BuilderTool:
    definition = {"name": f"{operation}_action_slack_com", "description": "", "parameters": SCHEMA}
    return BuilderTool(f"{operation}_action_{domain}", operation, "action", "slack.com", definition)


SEARCH = mcp("search_code")
ISSUE = BuilderTool(
    "create_issue_mcp_github",
    "create_issue",
    "mcp",
    "github",
    {
        "name": "create_issue",
        "description": "Open an issue.",
        "parameters": {
            "type": "object",
            "properties": {"title": {"type": "string"}, "intent": {"type": "string"}},
        },
    },
)


# --- toggles write and clear ---------------------------------------------------------------


def test_setting_writes_true_under_the_tool_id() -> None:
    assert set_option({}, SEARCH, "describe_intent", True) == {
        "search_code_mcp_github": {"describe_intent": True}
    }


def test_setting_keeps_sibling_keys_of_the_same_tool() -> None:
    options = {"search_code_mcp_github": {"defer_loading": True}}
    assert set_option(options, SEARCH, "describe_intent", True) == {
        "search_code_mcp_github": {"defer_loading": True, "describe_intent": True}
    }


def test_clearing_removes_only_the_key_and_keeps_siblings() -> None:
    options = {"search_code_mcp_github": {"describe_intent": True, "run_in_background": True}}
    assert set_option(options, SEARCH, "describe_intent", False) == {
        "search_code_mcp_github": {"run_in_background": True}
    }


def test_clearing_the_last_key_removes_the_entry() -> None:
    options = {"search_code_mcp_github": {"describe_intent": True}, "other": {"x": True}}
    assert set_option(options, SEARCH, "describe_intent", False) == {"other": {"x": True}}


def test_writes_never_mutate_their_input() -> None:
    entry = MappingProxyType({"describe_intent": True, "defer_loading": True})
    options = MappingProxyType({"search_code_mcp_github": entry})
    set_option(options, SEARCH, "describe_intent", False)
    set_option(options, SEARCH, "run_in_background", True)
    assert dict(entry) == {"describe_intent": True, "defer_loading": True}


def test_other_tools_entries_are_shared_not_copied() -> None:
    other = {"describe_intent": True}
    result = set_option({"other_mcp_x": other}, SEARCH, "describe_intent", True)
    assert result["other_mcp_x"] is other


def test_native_tools_describe_by_default() -> None:
    assert option_on(native(), {}, "describe_intent") is True


def test_mcp_tools_do_not_describe_until_toggled_on() -> None:
    assert option_on(SEARCH, {}, "describe_intent") is False


def test_clearing_a_native_tool_writes_an_explicit_false() -> None:
    # Absence means "default", and a native tool's default is on: off must be remembered.
    result = set_option({}, native(), "describe_intent", False)
    assert result == {"read_file": {"describe_intent": False}}
    assert option_on(native(), result, "describe_intent") is False
    assert resolve_opt_in(result, "describe_intent", "read_file", markers=(True,)) is False


def test_setting_a_cleared_native_tool_writes_true() -> None:
    options = {"read_file": {"describe_intent": False}}
    assert set_option(options, native(), "describe_intent", True) == {
        "read_file": {"describe_intent": True}
    }


def test_code_only_toggle_writes_the_code_execution_caller() -> None:
    result = set_option({}, SEARCH, "allowed_callers", True)
    assert result == {"search_code_mcp_github": {"allowed_callers": ["code_execution"]}}
    assert option_on(SEARCH, result, "allowed_callers") is True
    assert set_option(result, SEARCH, "allowed_callers", False) == {}


def test_background_defaults_on_for_native_code_runners_only() -> None:
    assert option_default(native("bash_tool"), "run_in_background") is True
    assert option_default(native("read_file"), "run_in_background") is False
    assert option_default(SEARCH, "run_in_background") is False


# --- admin gate ------------------------------------------------------------------------------


def test_capability_off_hides_its_switch() -> None:
    assert visible_options({"run_in_background"}) == ("run_in_background",)
    assert "describe_intent" not in visible_options({"run_in_background"})


def test_all_capabilities_show_all_switches_in_order() -> None:
    assert visible_options(ALL) == (
        "describe_intent",
        "run_in_background",
        "defer_loading",
        "allowed_callers",
    )


def test_no_capabilities_show_no_switches() -> None:
    assert visible_options(()) == ()


# --- eligibility -----------------------------------------------------------------------------


def test_code_only_tool_is_disabled_but_keeps_its_stored_state() -> None:
    options = {
        "search_code_mcp_github": {"describe_intent": True, "allowed_callers": ["code_execution"]}
    }
    assert intent_ineligibility(SEARCH, options, ALL) == "code_only"
    assert option_eligible(SEARCH, options, ALL, "describe_intent") is False
    assert option_on(SEARCH, options, "describe_intent") is True


def test_code_only_by_definition_is_disabled() -> None:
    tool = mcp("bulk_export", allowed_callers=["code_execution"])
    assert intent_ineligibility(tool, {}, ALL) == "code_only"


def test_dual_caller_tool_stays_eligible() -> None:
    options = {"search_code_mcp_github": {"allowed_callers": ["direct", "code_execution"]}}
    assert intent_ineligibility(SEARCH, options, ALL) is None


def test_stored_callers_are_ignored_when_programmatic_tools_is_off() -> None:
    options = {"search_code_mcp_github": {"allowed_callers": ["code_execution"]}}
    caps = ALL - {"programmatic_tools"}
    assert effective_definition(SEARCH, options, caps) is SEARCH.definition
    assert intent_ineligibility(SEARCH, options, caps) is None


def test_business_intent_parameter_is_not_eligible() -> None:
    assert intent_ineligibility(ISSUE, {}, ALL) == "own_intent_param"


def test_non_object_schema_is_not_eligible() -> None:
    tool = BuilderTool("t_mcp_s", "t", "mcp", "s", {"name": "t", "parameters": {"type": "string"}})
    assert intent_ineligibility(tool, {}, ALL) == "not_object"


def test_host_machinery_is_not_eligible() -> None:
    assert intent_ineligibility(native("check_background_task"), {}, ALL) == "excluded"


def test_native_tool_with_its_label_is_eligible() -> None:
    assert intent_ineligibility(native(), {}, ALL) is None


# --- describe all ----------------------------------------------------------------------------


def test_describe_all_sets_every_eligible_tool_of_the_server() -> None:
    tools = [SEARCH, mcp("slow"), ISSUE]
    result = describe_all({}, tools, ALL)
    assert result == {
        "search_code_mcp_github": {"describe_intent": True},
        "slow_mcp_github": {"describe_intent": True},
    }


def test_describe_all_sets_all_when_only_some_are_set() -> None:
    tools = [SEARCH, mcp("slow")]
    options = {"search_code_mcp_github": {"describe_intent": True}}
    assert source_state(tools, options, ALL).all_on is False
    result = describe_all(options, tools, ALL)
    assert all(option_on(t, result, "describe_intent") for t in tools)


def test_describe_all_clears_all_when_all_are_set() -> None:
    tools = [SEARCH, mcp("slow")]
    options = {
        "search_code_mcp_github": {"describe_intent": True, "defer_loading": True},
        "slow_mcp_github": {"describe_intent": True},
    }
    assert describe_all(options, tools, ALL) == {"search_code_mcp_github": {"defer_loading": True}}


def test_describe_all_leaves_ineligible_tools_alone() -> None:
    code_only = mcp("export", allowed_callers=["code_execution"])
    options = {"export_mcp_github": {"describe_intent": True}}
    result = describe_all(options, [SEARCH, code_only], ALL)
    assert result["export_mcp_github"] == {"describe_intent": True}
    cleared = describe_all(result, [SEARCH, code_only], ALL)
    assert cleared == {"export_mcp_github": {"describe_intent": True}}


def test_describe_all_is_disabled_without_eligible_tools() -> None:
    state = source_state([ISSUE], {}, ALL)
    assert state.disabled is True
    options: dict[str, Any] = {}
    assert describe_all(options, [ISSUE], ALL) is options


def test_describe_all_over_natives_round_trips() -> None:
    tools = [native("read_file"), native("write_file")]
    assert source_state(tools, {}, ALL).all_on is True
    cleared = describe_all({}, tools, ALL)
    assert cleared == {
        "read_file": {"describe_intent": False},
        "write_file": {"describe_intent": False},
    }
    assert describe_all(cleared, tools, ALL) == {
        "read_file": {"describe_intent": True},
        "write_file": {"describe_intent": True},
    }


def test_describe_all_in_one_server_does_not_touch_another() -> None:
    other = mcp("search_code", server="gitlab")
    result = describe_all({}, [SEARCH], ALL)
    assert option_on(other, result, "describe_intent") is False


# --- action aliasing -------------------------------------------------------------------------


def test_action_option_under_underscore_spelling_shows_on() -> None:
    options = {"postMessage_action_slack_com": {"describe_intent": True}}
    assert option_on(action(), options, "describe_intent") is True


def test_action_option_under_dash_spelling_shows_on() -> None:
    options = {"postMessage_action_slack---com": {"describe_intent": True}}
    assert option_on(action(), options, "describe_intent") is True


def test_clearing_an_action_removes_every_spelling() -> None:
    options = {
        "postMessage_action_slack_com": {"describe_intent": True, "defer_loading": True},
        "postMessage_action_slack---com": {"describe_intent": True},
    }
    result = set_option(options, action(), "describe_intent", False)
    assert result == {"postMessage_action_slack_com": {"defer_loading": True}}
    assert option_on(action(), result, "describe_intent") is False


def test_setting_an_action_writes_its_own_id_and_drops_the_stale_alias() -> None:
    options = {"postMessage_action_slack_com": {"describe_intent": False}}
    result = set_option(options, action(), "describe_intent", True)
    assert result == {"postMessage_action_slack---com": {"describe_intent": True}}
    folded = canonical_tool_options(result, ["postMessage_action_slack_com"])
    assert resolve_opt_in(folded, "describe_intent", "postMessage_action_slack_com") is True


def test_operation_ids_with_dashes_stay_distinct() -> None:
    a = action("get---thing")
    options = {"get_thing_action_slack---com": {"describe_intent": True}}
    assert option_keys(a, options) == ("get---thing_action_slack---com",)
    assert option_on(a, options, "describe_intent") is False


def test_mcp_tool_named_like_an_action_is_not_aliased() -> None:
    tool = mcp("foo_action_slack---com")
    options = {"foo_action_slack_com_mcp_github": {"describe_intent": True}}
    assert option_keys(tool, options) == ("foo_action_slack---com_mcp_github",)
    assert option_on(tool, options, "describe_intent") is False
    result = set_option(options, tool, "describe_intent", True)
    assert result["foo_action_slack_com_mcp_github"] == {"describe_intent": True}


def test_mcp_tool_named_foo_action_bar_is_an_mcp_tool() -> None:
    tool = mcp("foo_action_bar")
    assert tool.kind == "mcp"
    assert set_option({}, tool, "describe_intent", True) == {
        "foo_action_bar_mcp_github": {"describe_intent": True}
    }
