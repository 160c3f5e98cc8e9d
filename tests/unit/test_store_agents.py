"""Agents: CRUD, duplication, and the builder's tool option rules."""

from __future__ import annotations

from copy import deepcopy
from typing import Any

import pytest
from sqlalchemy import Engine, update
from sqlmodel import col

from intent_ui.store import agents
from intent_ui.store import conversations as conv
from intent_ui.store.models import LOCAL_USER_ID, Agent

OWNER = LOCAL_USER_ID


def _agent(engine: Engine, **overrides: Any) -> Agent:
    values: dict[str, Any] = {
        "name": "Researcher",
        "instructions": "Be brief.",
        "tools": ["web_search", "search_code_mcp_github"],
        "tool_options": {"search_code_mcp_github": {"describe_intent": True}},
    }
    return agents.create_agent(engine, **(values | overrides), owner=OWNER)


# --- CRUD ------------------------------------------------------------------------------------


def test_create_and_get(engine: Engine) -> None:
    created = agents.create_agent(
        engine,
        name="  Researcher ",
        instructions="Be brief.",
        endpoint="openai",
        model="gpt-x",
        tools=["web_search", "web_search", "read_file"],
        now=lambda: 5.0,
        owner=OWNER,
    )
    loaded = agents.get_agent(engine, created.id, owner=OWNER)
    assert loaded is not None
    assert (loaded.name, loaded.instructions, loaded.endpoint, loaded.model) == (
        "Researcher",
        "Be brief.",
        "openai",
        "gpt-x",
    )
    assert loaded.tools == ["web_search", "read_file"]
    assert loaded.tool_options == {}
    assert loaded.created_at == loaded.updated_at == 5.0


def test_blank_name_is_refused(engine: Engine) -> None:
    with pytest.raises(ValueError, match="needs a name"):
        agents.create_agent(engine, name="   ", owner=OWNER)


def test_get_unknown_is_none(engine: Engine) -> None:
    assert agents.get_agent(engine, "nope", owner=OWNER) is None


def test_list_is_by_name(engine: Engine) -> None:
    for name in ["writer", "Analyst", "coder"]:
        agents.create_agent(engine, name=name, owner=OWNER)
    assert [a.name for a in agents.list_agents(engine, owner=OWNER)] == [
        "Analyst",
        "coder",
        "writer",
    ]


def test_update_changes_only_given_fields(engine: Engine) -> None:
    agent = _agent(engine)
    updated = agents.update_agent(
        engine, agent.id, name="Scout", model=None, tools=["read_file"], owner=OWNER
    )
    assert updated is not None
    loaded = agents.get_agent(engine, agent.id, owner=OWNER)
    assert loaded is not None
    assert (loaded.name, loaded.instructions, loaded.model, loaded.tools) == (
        "Scout",
        "Be brief.",
        None,
        ["read_file"],
    )
    assert loaded.tool_options == {"search_code_mcp_github": {"describe_intent": True}}


def test_update_unknown_is_none(engine: Engine) -> None:
    assert agents.update_agent(engine, "nope", name="x", owner=OWNER) is None


def test_duplicate_copies_everything_under_a_new_name(engine: Engine) -> None:
    original = _agent(engine, endpoint="demo", model="demo-1")
    copy = agents.duplicate_agent(engine, original.id, owner=OWNER)
    assert copy is not None and copy.id != original.id
    assert copy.name == "Copy of Researcher"
    assert (copy.instructions, copy.endpoint, copy.model, copy.tools, copy.tool_options) == (
        original.instructions,
        original.endpoint,
        original.model,
        original.tools,
        original.tool_options,
    )


def test_changing_a_duplicate_leaves_the_original_alone(engine: Engine) -> None:
    original = _agent(engine)
    copy = agents.duplicate_agent(engine, original.id, owner=OWNER)
    assert copy is not None
    agents.set_tool_option(
        engine, copy.id, "search_code_mcp_github", "describe_intent", None, owner=OWNER
    )
    loaded = agents.get_agent(engine, original.id, owner=OWNER)
    assert loaded is not None
    assert loaded.tool_options == {"search_code_mcp_github": {"describe_intent": True}}


def test_duplicate_unknown_is_none(engine: Engine) -> None:
    assert agents.duplicate_agent(engine, "nope", owner=OWNER) is None


def test_delete_detaches_conversations(engine: Engine) -> None:
    agent = _agent(engine)
    chat = conv.create_conversation(
        engine, endpoint="demo", model="m", agent_id=agent.id, owner=OWNER
    )
    assert agents.delete_agent(engine, agent.id, owner=OWNER) is True
    assert agents.get_agent(engine, agent.id, owner=OWNER) is None
    loaded = conv.get_conversation(engine, chat.id, owner=OWNER)
    assert loaded is not None and loaded.agent_id is None


def test_delete_unknown_is_false(engine: Engine) -> None:
    assert agents.delete_agent(engine, "nope", owner=OWNER) is False


def test_corrupt_stored_options_read_as_empty(engine: Engine) -> None:
    agent = _agent(engine)
    with engine.begin() as connection:
        connection.execute(
            update(Agent).where(col(Agent.id) == agent.id).values(tool_options_json="{not json")
        )
    loaded = agents.get_agent(engine, agent.id, owner=OWNER)
    assert loaded is not None and loaded.tool_options == {}


# --- tool option rules -------------------------------------------------------------------------


def test_setting_a_switch_writes_true() -> None:
    assert agents.with_tool_option({}, "web_search", "describe_intent", True) == {
        "web_search": {"describe_intent": True}
    }


def test_clearing_removes_the_key_and_keeps_siblings() -> None:
    options = {"web_search": {"describe_intent": True, "defer_loading": True}}
    assert agents.with_tool_option(options, "web_search", "describe_intent", None) == {
        "web_search": {"defer_loading": True}
    }


def test_false_clears_like_none() -> None:
    options = {"web_search": {"describe_intent": True, "defer_loading": True}}
    assert agents.with_tool_option(options, "web_search", "describe_intent", False) == {
        "web_search": {"defer_loading": True}
    }


def test_clearing_the_last_key_removes_the_tool_entry() -> None:
    options = {"web_search": {"describe_intent": True}, "read_file": {"defer_loading": True}}
    assert agents.with_tool_option(options, "web_search", "describe_intent", None) == {
        "read_file": {"defer_loading": True}
    }


def test_clearing_an_absent_key_adds_nothing() -> None:
    assert agents.with_tool_option({}, "web_search", "run_in_background", None) == {}


def test_allowed_callers_takes_a_list_and_empty_clears() -> None:
    set_ = agents.with_tool_option({}, "run_sql", "allowed_callers", ["code_execution"])
    assert set_ == {"run_sql": {"allowed_callers": ["code_execution"]}}
    assert agents.with_tool_option(set_, "run_sql", "allowed_callers", []) == {}


def test_the_input_dict_is_never_mutated() -> None:
    options: dict[str, dict[str, Any]] = {
        "web_search": {"describe_intent": True, "allowed_callers": ["direct"]},
        "read_file": {"defer_loading": True},
    }
    before = deepcopy(options)
    result = agents.with_tool_option(options, "web_search", "describe_intent", None)
    result["read_file"]["defer_loading"] = False
    assert options == before


def test_unknown_option_key_is_refused() -> None:
    with pytest.raises(ValueError, match="Unknown tool option 'describe'"):
        agents.with_tool_option({}, "web_search", "describe", True)


@pytest.mark.parametrize(
    ("key", "value"),
    [("describe_intent", "yes"), ("describe_intent", 1), ("allowed_callers", True)],
)
def test_wrong_value_type_is_refused(key: str, value: Any) -> None:
    with pytest.raises(ValueError, match=repr(key)):
        agents.with_tool_option({}, "web_search", key, value)


def test_set_tool_option_persists_and_keeps_other_tools(engine: Engine) -> None:
    agent = _agent(engine)
    held = agent.tool_options
    agents.set_tool_option(engine, agent.id, "web_search", "run_in_background", True, owner=OWNER)
    agents.set_tool_option(engine, agent.id, "web_search", "describe_intent", True, owner=OWNER)
    loaded = agents.get_agent(engine, agent.id, owner=OWNER)
    assert loaded is not None
    assert loaded.tool_options == {
        "search_code_mcp_github": {"describe_intent": True},
        "web_search": {"run_in_background": True, "describe_intent": True},
    }
    assert held == {"search_code_mcp_github": {"describe_intent": True}}


def test_set_tool_option_clear_removes_the_entry(engine: Engine) -> None:
    agent = _agent(engine)
    agents.set_tool_option(
        engine, agent.id, "search_code_mcp_github", "describe_intent", False, owner=OWNER
    )
    loaded = agents.get_agent(engine, agent.id, owner=OWNER)
    assert loaded is not None and loaded.tool_options == {}


def test_set_tool_option_unknown_agent_is_none(engine: Engine) -> None:
    assert (
        agents.set_tool_option(engine, "nope", "web_search", "describe_intent", True, owner=OWNER)
        is None
    )


def test_bulk_turns_a_switch_on_and_off_for_many_tools(engine: Engine) -> None:
    agent = _agent(engine, tool_options={"a_mcp_gh": {"defer_loading": True}})
    tools = ["a_mcp_gh", "b_mcp_gh"]
    agents.set_tool_options_bulk(engine, agent.id, tools, "describe_intent", True, owner=OWNER)
    loaded = agents.get_agent(engine, agent.id, owner=OWNER)
    assert loaded is not None
    assert loaded.tool_options == {
        "a_mcp_gh": {"defer_loading": True, "describe_intent": True},
        "b_mcp_gh": {"describe_intent": True},
    }
    agents.set_tool_options_bulk(engine, agent.id, tools, "describe_intent", False, owner=OWNER)
    loaded = agents.get_agent(engine, agent.id, owner=OWNER)
    assert loaded is not None
    assert loaded.tool_options == {"a_mcp_gh": {"defer_loading": True}}


def test_bulk_refuses_a_non_switch_key(engine: Engine) -> None:
    agent = _agent(engine)
    with pytest.raises(ValueError, match="not a switch"):
        agents.set_tool_options_bulk(engine, agent.id, ["x"], "allowed_callers", True, owner=OWNER)


# --- ownership and sharing ---------------------------------------------------------------


def test_another_users_private_agent_is_absent(engine: Engine) -> None:
    agent = agents.create_agent(engine, owner="alice", name="Reviewer", tools=["read_file"])
    assert agents.get_agent(engine, agent.id, owner="bob") is None
    assert agents.list_agents(engine, owner="bob") == []
    assert agents.duplicate_agent(engine, agent.id, owner="bob") is None
    assert agents.update_agent(engine, agent.id, owner="bob", name="pwned") is None
    assert (
        agents.set_tool_option(engine, agent.id, "read_file", "describe_intent", True, owner="bob")
        is None
    )
    assert (
        agents.set_tool_options_bulk(
            engine, agent.id, ["read_file"], "describe_intent", True, owner="bob"
        )
        is None
    )
    assert agents.delete_agent(engine, agent.id, owner="bob") is False
    kept = agents.get_agent(engine, agent.id, owner="alice")
    assert kept is not None and (kept.name, kept.tool_options) == ("Reviewer", {})


def test_a_shared_agent_is_readable_by_everyone_but_changed_only_by_its_owner(
    engine: Engine,
) -> None:
    agent = agents.create_agent(engine, owner="alice", name="Reviewer", shared=True)
    assert [a.id for a in agents.list_agents(engine, owner="bob")] == [agent.id]
    assert agents.get_agent(engine, agent.id, owner="bob") is not None
    assert agents.get_own_agent(engine, agent.id, owner="bob") is None
    assert agents.update_agent(engine, agent.id, owner="bob", name="pwned") is None
    assert agents.delete_agent(engine, agent.id, owner="bob") is False
    copy = agents.duplicate_agent(engine, agent.id, owner="bob")
    assert copy is not None and (copy.owner_id, copy.shared) == ("bob", False)
    assert agents.get_own_agent(engine, copy.id, owner="bob") is not None


def test_the_owner_can_stop_sharing(engine: Engine) -> None:
    agent = agents.create_agent(engine, owner="alice", name="Reviewer", shared=True)
    assert agents.update_agent(engine, agent.id, owner="alice", shared=False) is not None
    assert agents.get_agent(engine, agent.id, owner="bob") is None


# --- goals -----------------------------------------------------------------------------------

GOALS = [
    {"id": "research", "description": "Find things in the code", "delegates": ["read"]},
    {"id": "remember", "description": "Remember a fact", "delegates": ["memory"]},
]


def test_goals_are_stored_updated_and_duplicated(engine: Engine) -> None:
    created = _agent(engine, goals=GOALS)
    assert agents.get_agent(engine, created.id, owner=OWNER).goals == GOALS  # type: ignore[union-attr]
    updated = agents.update_agent(engine, created.id, owner=OWNER, goals=GOALS[:1])
    assert updated is not None and updated.goals == GOALS[:1]
    copy = agents.duplicate_agent(engine, created.id, owner=OWNER)
    assert copy is not None and copy.goals == GOALS[:1]
    assert _agent(engine).goals == []


def test_invalid_goals_are_refused_and_the_stored_ones_kept(engine: Engine) -> None:
    created = _agent(engine, goals=GOALS)
    twice = [GOALS[0], {**GOALS[1], "id": "research"}]
    with pytest.raises(ValueError, match="Goal 'research': another goal already has this id"):
        agents.update_agent(engine, created.id, owner=OWNER, goals=twice)
    with pytest.raises(ValueError, match="Goal #1: give it an id"):
        _agent(engine, goals=[{"description": "no id"}])
    assert agents.get_agent(engine, created.id, owner=OWNER).goals == GOALS  # type: ignore[union-attr]


SCOPES = [
    {"id": "code", "description": "The repository", "category": "source", "goal_ids": ["research"]}
]


def test_scopes_are_stored_with_the_goals_they_serve_and_duplicated(engine: Engine) -> None:
    created = _agent(engine, goals=GOALS, scopes=SCOPES)
    copy = agents.duplicate_agent(engine, created.id, owner=OWNER)
    assert copy is not None and copy.scopes == SCOPES
    # Removing the goal a scope serves is refused while the scope still names it.
    with pytest.raises(ValueError, match="Scope 'code': it serves the goal 'research'"):
        agents.update_agent(engine, created.id, owner=OWNER, goals=GOALS[1:])
    updated = agents.update_agent(engine, created.id, owner=OWNER, goals=GOALS[1:], scopes=[])
    assert updated is not None and (updated.goals, updated.scopes) == (GOALS[1:], [])
