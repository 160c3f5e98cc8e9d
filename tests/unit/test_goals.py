"""An agent's goals: validation with errors naming the goal, and the one family rule."""

from __future__ import annotations

from typing import Any

import pytest

from intent_ui.core.goals import GoalError, goal_registry, scope_registry, tool_family
from intent_ui.core.registry import tools_for_goal


@pytest.mark.parametrize(
    ("kind", "name", "group", "tool_id", "family"),
    [
        ("native", "grep_search", None, "grep_search", "read"),
        ("native", "read_file", None, "read_file", "read"),
        ("native", "edit_file", None, "edit_file", "write"),
        ("native", "set_memory", None, "set_memory", "memory"),
        ("native", "web_search", None, "web_search", "web"),
        ("native", "execute_code", None, "execute_code", "execute_code"),
        ("mcp", "search_code", "github", "search_code_mcp_github", "mcp:github"),
        ("action", "getPet", "pets.example.com", "getPet_action_x", "action:pets.example.com"),
        ("mcp", "orphan", None, "orphan_mcp_", "orphan_mcp_"),
    ],
)
def test_each_tool_gets_one_family(
    kind: str, name: str, group: str | None, tool_id: str, family: str
) -> None:
    assert tool_family(kind, name, group, tool_id) == family


def test_goals_become_advertised_intents_narrowing_tools_by_family() -> None:
    registry = goal_registry(
        [
            {"id": "research", "description": " Find code ", "delegates": ["read", "mcp:github"]},
            {"id": "chat", "description": "Just talk"},
        ]
    )
    assert registry.ids() == ["research", "chat"]
    research = registry.get("research")
    assert research is not None and research.description == "Find code"
    assert registry.with_intent()["parameters"]["properties"]["intent_id"]["enum"] == [
        "research",
        "chat",
    ]
    families = {
        "grep_search": "read",
        "set_memory": "memory",
        "search_code_mcp_github": "mcp:github",
    }
    assert tools_for_goal(registry, "research", list(families), families) == (
        "grep_search",
        "search_code_mcp_github",
    )
    assert tools_for_goal(registry, "chat", list(families), families) == ()


@pytest.mark.parametrize(
    ("goals", "message"),
    [
        ([{"id": "", "description": "x"}], "Goal #1: give it an id"),
        ([{"description": "x"}], "Goal #1: give it an id"),
        ([{"id": " a", "description": "x"}], "Goal ' a': the id must not start or end"),
        ([{"id": "a", "description": "  "}], "Goal 'a': describe when the model should choose"),
        (
            [{"id": "a", "description": "x"}, {"id": "a", "description": "y"}],
            "Goal 'a': another goal already has this id",
        ),
        (
            [{"id": "a", "description": "x", "asIntent": True}],
            "Goal 'a': unknown field 'asIntent'; did you mean 'as_intent'?",
        ),
        ([{"id": "a", "description": "x", "delegates": "read"}], "Goal 'a': 'delegates' must be"),
        (
            [{"id": "a", "description": "x", "delegates": ["read", "read"]}],
            "Goal 'a': 'delegates' lists 'read' twice",
        ),
        (["research"], "Goal #1: expected an object"),
        ([{"id": "a", "description": "x", "resolve": "code"}], "Goal 'a': unknown field 'resolve'"),
        ([{"id": "a", "description": "x", "active": "yes"}], "Goal 'a': 'active' must be"),
    ],
)
def test_an_invalid_goal_is_refused_naming_the_goal_and_the_rule(
    goals: list[Any], message: str
) -> None:
    with pytest.raises(GoalError) as caught:
        goal_registry(goals)
    assert str(caught.value).startswith(message)


def test_a_stored_goal_may_carry_other_registry_fields_and_opt_out_of_selection() -> None:
    registry = goal_registry(
        [
            {"id": "research", "description": "Find code", "as_intent": "The user asks where"},
            {"id": "hidden", "description": "Not offered", "as_intent": False},
        ]
    )
    offered = registry.with_intent()["parameters"]["properties"]["intent_id"]["enum"]
    assert offered == ["research"]


def test_scopes_are_validated_and_serve_only_the_agents_goals() -> None:
    scopes = scope_registry(
        [{"id": "sdk", "description": "SDK manual", "category": "knowledge", "goal_ids": ["a"]}],
        ["a", "b"],
    )
    assert scopes.require("sdk").goal_ids == ("a",)
    with pytest.raises(GoalError, match="Scope 'sdk': it serves the goal 'c', which this agent"):
        scope_registry(
            [{"id": "sdk", "description": "d", "category": "k", "goal_ids": ["c"]}], ["a"]
        )
    with pytest.raises(GoalError, match="Scope 'sdk': 'category' must be a non-blank string"):
        scope_registry([{"id": "sdk", "description": "d", "category": " "}], [])
