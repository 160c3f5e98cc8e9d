"""An agent's goals and scopes on the agents page (ui.builder_goals): the edits, what
stays valid, and the rows the page shows."""

from __future__ import annotations

from intent_ui.core.builder import BuilderTool
from intent_ui.ui.builder_goals import GOAL, SCOPE, GoalsDraft, build_goals, goals_view

RESEARCH = {"id": "research", "description": "Find things", "delegates": ["read"]}
REPO = {"id": "repo", "description": "The repository", "category": "source", "goal_ids": []}


def draft(*, goals: tuple[dict, ...] = (RESEARCH,), scopes: tuple[dict, ...] = ()) -> GoalsDraft:
    return GoalsDraft.stored(goals, scopes, "form")


def test_stored_rows_are_keyed_by_the_form_and_their_position() -> None:
    stored = draft(scopes=(REPO,))
    assert (stored.goal_keys, stored.scope_keys) == (("form:0",), ("form:0",))


def test_a_new_goal_takes_the_next_number_no_goal_uses() -> None:
    edited = draft(goals=({**RESEARCH, "id": "goal-2"},)).add(GOAL, "k")
    assert edited is not None
    assert [g["id"] for g in edited.goals] == ["goal-2", "goal-3"]
    assert edited.goal_keys == ("form:0", "k")
    assert edited.goals[1] == {"id": "goal-3", "description": "", "delegates": []}


def test_a_new_goal_is_refused_until_it_is_described() -> None:
    edited = draft(goals=()).add(GOAL, "k")
    assert edited is not None
    assert edited.problem() == "Goal 'goal-1': describe when the model should choose it"
    described = edited.set_text(GOAL, 0, "description", "Look around")
    assert described is not None and described.problem() == ""


def test_a_renamed_goal_stays_served_and_a_removed_one_leaves_its_scopes() -> None:
    served = draft(scopes=({**REPO, "goal_ids": ["research"]},))
    renamed = served.set_text(GOAL, 0, "id", "study")
    assert renamed is not None
    assert renamed.scopes[0]["goal_ids"] == ["study"] and renamed.problem() == ""
    removed = renamed.remove(GOAL, 0)
    assert removed is not None
    assert (removed.goals, removed.goal_keys, removed.scopes[0]["goal_ids"]) == ((), (), [])


def test_an_edit_that_changes_nothing_or_misses_every_row_is_none() -> None:
    stored = draft(scopes=(REPO,))
    assert stored.set_text(GOAL, 0, "id", " research ") is None  # the id is trimmed
    assert stored.set_text(GOAL, 0, "delegates", "read") is None  # not a typed field
    assert stored.set_text("agent", 0, "id", "x") is None
    assert stored.add("agent", "k") is None
    assert stored.set_text(GOAL, 0, "id", "research") is None
    assert stored.set_text(GOAL, 3, "id", "other") is None
    assert stored.remove(GOAL, -1) is None
    assert stored.toggle(GOAL, 1, "read") is None
    assert stored.set_text(SCOPE, 0, "category", "source") is None
    assert stored.remove(SCOPE, 1) is None
    assert stored.toggle(SCOPE, 1, "research") is None


def test_toggles_add_at_the_end_and_remove_in_place() -> None:
    stored = draft(scopes=(REPO,))
    on = stored.toggle(GOAL, 0, "web")
    assert on is not None and on.goals[0]["delegates"] == ["read", "web"]
    off = on.toggle(GOAL, 0, "read")
    assert off is not None and off.goals[0]["delegates"] == ["web"]
    serving = stored.toggle(SCOPE, 0, "research")
    assert serving is not None and serving.scopes[0]["goal_ids"] == ["research"]


def test_a_scope_serving_a_goal_the_agent_lacks_is_refused() -> None:
    scope = draft(scopes=(REPO,)).toggle(SCOPE, 0, "missing")
    assert scope is not None and scope.problem().startswith(
        "Scope 'repo': it serves the goal 'missing'"
    )


def test_removing_a_scope_drops_its_key_with_it() -> None:
    two = draft(scopes=(REPO,)).add(SCOPE, "new")
    assert two is not None
    assert [s["id"] for s in two.scopes] == ["repo", "scope-2"]
    one = two.remove(SCOPE, 0)
    assert one is not None and (one.scope_keys, one.scopes[0]["id"]) == (("new",), "scope-2")


def test_edits_leave_the_draft_they_came_from_as_it_was() -> None:
    stored = draft(scopes=({**REPO, "goal_ids": ["research"]},))
    stored.set_text(GOAL, 0, "id", "study")
    stored.toggle(GOAL, 0, "web")
    assert stored == draft(scopes=({**REPO, "goal_ids": ["research"]},))


# --- the rows -------------------------------------------------------------------------------


def test_a_goal_naming_one_picked_tool_shows_that_tool() -> None:
    (goal,) = build_goals(
        [{"id": "g", "description": "d", "delegates": ["read", "slow_mcp_github"]}],
        ["k"],
        {"mcp:github": ["search_code", "slow"]},
        picked_names={"slow_mcp_github": "slow"},
    )
    assert [(d.family, d.tools, d.checked) for d in goal.delegates] == [
        ("mcp:github", "search_code, slow", False),
        ("read", "No picked tool is in this family", True),
        ("slow_mcp_github", "slow", True),
    ]
    assert goal.delegates[2].label == "g may use slow_mcp_github"


def test_goals_offer_the_picked_tools_families_and_scopes_the_agents_goals() -> None:
    tools = [
        BuilderTool("read_file", "read_file", "native", "native", {}, family="read"),
        BuilderTool("grep_search", "grep_search", "native", "native", {}, family="read"),
        BuilderTool("web_fetch", "web_fetch", "native", "native", {}, family="web"),
    ]
    goals, scopes = goals_view(
        draft(scopes=({**REPO, "goal_ids": ["research"]},)), tools, ["grep_search", "read_file"]
    )
    (goal,) = goals
    assert [(d.family, d.tools, d.checked) for d in goal.delegates] == [
        ("read", "read_file, grep_search", True)
    ]
    assert (goal.key, goal.remove_label) == ("form:0", "Remove goal research")
    (scope,) = scopes
    assert [(g.goal_id, g.checked, g.label) for g in scope.goals] == [
        ("research", True, "repo serves research")
    ]
