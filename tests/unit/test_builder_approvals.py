"""The builder's "Ask first" switches: per tool, and the agent's default for the tools
that change the workspace; what they show and what a click stores."""

from __future__ import annotations

from typing import Any

from intent_ui.core.builder import (
    BuilderTool,
    option_eligible,
    option_on,
    set_option,
    set_workspace_approval,
    workspace_approval,
)
from intent_ui.core.capabilities.intent import with_intent
from intent_ui.core.pauses import REQUIRE_APPROVAL_OPTION, requires_approval
from intent_ui.ui.builder_view import build_view

ASK = REQUIRE_APPROVAL_OPTION
NONE: frozenset[str] = frozenset()


def tool(name: str, *, writes: bool = False, **extra: Any) -> BuilderTool:
    definition: dict[str, Any] = {
        "name": name,
        "parameters": dict(with_intent({"type": "object", "properties": {}})),
        **extra,
    }
    if writes:
        definition["changes_workspace"] = True
    return BuilderTool(name, name, "native", "native", definition)


DELETE, READ = tool("delete_file", writes=True), tool("read_file")


def test_every_agent_has_the_switch_whatever_the_admin_enables() -> None:
    view = build_view(
        [DELETE, READ], tool_options={}, picked=[], capabilities=NONE, costs={}, lang="en"
    )
    (source,) = view.sources
    switches = {row.tool_id: row.approval for row in source.tools}
    assert not switches["delete_file"].pressed and not switches["delete_file"].disabled
    assert switches["delete_file"].text == "Ask first"
    assert switches["delete_file"].label == "Ask first: ask before each call of delete_file"
    assert view.approval_default.text == "Ask before changing the workspace"


def test_a_click_stores_the_option_the_run_loop_reads() -> None:
    options = set_option({}, DELETE, ASK, True)
    assert options == {"delete_file": {ASK: True}}
    assert requires_approval(options, "delete_file", DELETE.definition)
    assert set_option(options, DELETE, ASK, False) == {}


def test_the_workspace_default_asks_for_the_tools_that_change_the_workspace_only() -> None:
    options = set_workspace_approval({"*": {"describe_intent": True}}, True)
    assert workspace_approval(options)
    assert option_on(DELETE, options, ASK) and not option_on(READ, options, ASK)
    # Switching one such tool off is remembered against the default.
    off = set_option(options, DELETE, ASK, False)
    assert off["delete_file"] == {ASK: False}
    assert not requires_approval(off, "delete_file", DELETE.definition)
    cleared = set_workspace_approval(options, False)
    assert cleared == {"*": {"describe_intent": True}} and not workspace_approval(cleared)


def test_tools_that_cannot_wait_for_a_person_have_it_disabled() -> None:
    code_only = tool("lookup", allowed_callers=["code_execution"])
    assert not option_eligible(code_only, {}, NONE, ASK)
    assert not option_eligible(tool("ask_user_question"), {}, NONE, ASK)
    assert option_eligible(READ, {}, NONE, ASK)
