"""An agent's turn-level goals: the stored shape, its validation, and tool families.

A goal is a registration in the goal registry (`core.registry`, whose API calls it an
intent) whose delegates are tool *families*. An agent stores its goals as a list of
registrations (`{"id", "description", "delegates"}`, the builder's fields, and any other
registry field but `resolve`, which is code); when it has any, each turn starts with the
model choosing one through the registry's `select_intent` tool, and the goal narrows the
turn's tools to its families. A stored goal is offered for selection unless it says
otherwise (`as_intent` defaults to true).

One function derives a tool's family, for the builder (which lists the families a goal
may delegate to) and the run loop (which filters by them) alike, so the two cannot
disagree:

- native tools by what they do: the file readers -> `read`, the file writers -> `write`,
  the memory tools -> `memory`, `web_search` -> `web`;
- an MCP tool -> `mcp:{server}`, so a goal can delegate to a whole server;
- an action -> `action:{domain}`;
- any other tool -> its own tool id (a delegate may always name one tool).

An agent may also store scopes (`core.registry.ScopeRegistry` registrations): the bodies
of material its goals work on. `scope_registry(scopes, goal_ids)` validates them, and that
every goal a scope serves is one of the agent's goals.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import Any

from intent_ui.core.registry import (
    IntentDescription,
    IntentRegistry,
    RegistryError,
    ScopeDescription,
    ScopeRegistry,
)

__all__ = [
    "GOAL_FIELDS",
    "NATIVE_FAMILIES",
    "SCOPE_FIELDS",
    "GoalError",
    "goal_line",
    "goal_registry",
    "scope_registry",
    "tool_family",
]

NATIVE_FAMILIES: Mapping[str, str] = {
    "read_file": "read",
    "grep_search": "read",
    "glob_search": "read",
    "list_directory": "read",
    "write_file": "write",
    "edit_file": "write",
    "delete_file": "write",
    "create_file": "write",
    "set_memory": "memory",
    "delete_memory": "memory",
    "web_search": "web",
}
"""Native tool name -> its family."""

GOAL_FIELDS: tuple[str, ...] = tuple(
    item.name for item in fields(IntentDescription) if item.name != "resolve"
)
"""The keys a stored goal may have: the registry's fields, but not its code (`resolve`)."""


SCOPE_FIELDS: tuple[str, ...] = tuple(item.name for item in fields(ScopeDescription))
"""The keys a stored scope may have."""


class GoalError(ValueError):
    """An invalid goal list; the message names the goal and the broken rule."""


def tool_family(kind: str, name: str, group: str | None, tool_id: str) -> str:
    """The family a goal delegates to for this tool (see the module docstring).

    `group` is the MCP server of an MCP tool or the domain of an action.
    """
    if kind == "native":
        return NATIVE_FAMILIES.get(name, tool_id)
    if kind == "mcp" and group:
        return f"mcp:{group}"
    if kind == "action" and group:
        return f"action:{group}"
    return tool_id


def goal_registry(goals: Sequence[Mapping[str, Any]]) -> IntentRegistry:
    """The sealed registry of an agent's goals, each offered by `select_intent`.

    Raises `GoalError` naming the goal (its id, or its position while it has none) and
    the rule it breaks: a blank id or description, a repeated id, an unknown key, or
    delegates that are not a list of distinct family names.
    """
    seen: set[str] = set()
    registrations = []
    for position, goal in enumerate(goals, start=1):
        if not isinstance(goal, Mapping):
            raise GoalError(f"Goal #{position}: expected an object with an id and a description")
        ident = goal.get("id")
        where = f"Goal #{position}"
        if not isinstance(ident, str) or not ident.strip():
            raise GoalError(f"{where}: give it an id (a short name such as 'research')")
        where = f"Goal '{ident}'"
        if ident != ident.strip():
            raise GoalError(f"{where}: the id must not start or end with spaces")
        if ident in seen:
            raise GoalError(f"{where}: another goal already has this id; ids must be unique")
        seen.add(ident)
        for key in goal:
            if key not in GOAL_FIELDS:
                hint = re.sub(r"(?<!^)(?=[A-Z])", "_", str(key)).lower()
                fix = f"; did you mean {hint!r}?" if hint in GOAL_FIELDS else ""
                raise GoalError(
                    f"{where}: unknown field {key!r}{fix} (a goal has {', '.join(GOAL_FIELDS)})"
                )
        description = goal.get("description")
        if not isinstance(description, str) or not description.strip():
            raise GoalError(f"{where}: describe when the model should choose it")
        registrations.append({"as_intent": True, **goal, "description": description.strip()})
    try:
        return IntentRegistry.create(registrations)
    except RegistryError as exc:  # the rest of the rules: the registry's own
        raise GoalError(str(exc).replace("intent ", "Goal ", 1)) from exc


def goal_line(goal: IntentDescription) -> str:
    """The turn's goal line for a chosen goal: its description."""
    return goal.description


def scope_registry(scopes: Sequence[Mapping[str, Any]], goal_ids: Sequence[str]) -> ScopeRegistry:
    """The registry of an agent's scopes. Raises `GoalError` naming the scope and the rule:
    the registry's own (a blank id, description or category, a name used twice, ...), or a
    scope serving a goal the agent does not have."""
    try:
        registry = ScopeRegistry.create(scopes)
    except RegistryError as exc:
        raise GoalError(str(exc).replace("scope ", "Scope ", 1)) from exc
    for scope_id in registry.ids():
        for goal_id in registry.require(scope_id).goal_ids:
            if goal_id not in goal_ids:
                raise GoalError(
                    f"Scope '{scope_id}': it serves the goal '{goal_id}', which this agent "
                    f"does not have (its goals: {', '.join(goal_ids) or 'none'})"
                )
    return registry
