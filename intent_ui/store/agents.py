"""Saved agents: CRUD, duplication, and the builder's per-tool option switches.

`tool_options` maps a tool id (see `intent_ui.agent.tools.base.Tool.tool_id`) to its
capability switches: `describe_intent`, `defer_loading`, `run_in_background` (booleans)
and `allowed_callers` (a list of caller names), and whether the tool asks the user before
it runs, `require_approval` (a boolean; `core/pauses.py`). The builder rules, mirroring the shared
switch of the background toggles:

- setting a switch writes the value (`True` for a boolean);
- clearing it (`None`, `False`, or an empty caller list) removes the key, and removes the
  tool's entry when nothing is left in it, so "off" is stored as absence;
- sibling keys and other tools are untouched, and the stored dict is never mutated in
  place: `with_tool_option` builds a new one.

`goals` is the agent's list of turn-level goals and `scopes` the scopes they work on
(`core.goals`): every write validates both together (`goal_registry`, `scope_registry`: a
scope may serve only the agent's goals) and raises `GoalError` (a ValueError naming the
goal or scope and the rule), so an invalid list is never stored.

Ownership: every function takes the acting user (`owner`, a user id). An agent is visible
to its owner and, when `shared`, to everyone (`get_agent`, `list_agents`, and
`duplicate_agent`, whose copy belongs to the one duplicating); it is changed or deleted
only by its owner (`update_agent`, `set_tool_option`, `set_tool_options_bulk`,
`delete_agent` treat anyone else's agent as absent).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import Engine, delete, or_, update
from sqlmodel import col, select

from intent_ui.core.goals import GOAL_FIELDS, SCOPE_FIELDS, goal_registry, scope_registry
from intent_ui.store.db import add_row, open_session, owned_row, store_errors
from intent_ui.store.models import Agent, Clock, Conversation, encode_json

__all__ = [
    "BOOLEAN_TOOL_OPTIONS",
    "TOOL_OPTION_KEYS",
    "ToolOptionValue",
    "create_agent",
    "delete_agent",
    "duplicate_agent",
    "get_agent",
    "get_own_agent",
    "list_agents",
    "set_tool_option",
    "set_tool_options_bulk",
    "update_agent",
    "with_tool_option",
]

BOOLEAN_TOOL_OPTIONS: frozenset[str] = frozenset(
    {"describe_intent", "defer_loading", "run_in_background", "require_approval"}
)
TOOL_OPTION_KEYS: frozenset[str] = BOOLEAN_TOOL_OPTIONS | {"allowed_callers"}

ToolOptionValue = bool | list[str] | None

_UNSET: Any = object()


def with_tool_option(
    options: Mapping[str, Mapping[str, Any]], tool_id: str, key: str, value: ToolOptionValue
) -> dict[str, dict[str, Any]]:
    """`options` with one switch set or cleared, as a new dict (see the module rules).

    Raises ValueError naming the key or value when they are not a tool option.
    """
    stored = _option_value(key, value)
    entry = {k: v for k, v in options.get(tool_id, {}).items() if k != key}
    if stored is not None:
        entry[key] = stored
    result = {tid: dict(opts) for tid, opts in options.items() if tid != tool_id}
    if entry:
        result[tool_id] = entry
    return result


@store_errors("create the agent")
def create_agent(
    engine: Engine,
    *,
    owner: str,
    name: str,
    instructions: str = "",
    endpoint: str | None = None,
    model: str | None = None,
    tools: Iterable[str] = (),
    tool_options: Mapping[str, Mapping[str, Any]] | None = None,
    shared: bool = False,
    goals: Iterable[Mapping[str, Any]] = (),
    scopes: Iterable[Mapping[str, Any]] = (),
    now: Clock = time.time,
) -> Agent:
    """Create and return an agent. Raises ValueError for a blank name or invalid goals."""
    stored_goals, stored_scopes = _goals_and_scopes(goals, scopes)
    stamp = now()
    return add_row(
        engine,
        Agent(
            owner_id=owner,
            shared=shared,
            name=_name(name),
            instructions=instructions,
            endpoint=endpoint,
            model=model,
            tools_json=encode_json(_tool_ids(tools)),
            tool_options_json=encode_json(_copy_options(tool_options or {})),
            goals_json=encode_json(stored_goals),
            scopes_json=encode_json(stored_scopes),
            created_at=stamp,
            updated_at=stamp,
        ),
    )


@store_errors("read the agent")
def get_agent(engine: Engine, agent_id: str, *, owner: str) -> Agent | None:
    """The agent if `owner` may read it (theirs, or shared); None otherwise."""
    with open_session(engine) as session:
        agent = session.get(Agent, agent_id)
    return agent if agent is not None and (agent.owner_id == owner or agent.shared) else None


def get_own_agent(engine: Engine, agent_id: str, *, owner: str) -> Agent | None:
    """The agent if `owner` may change it (theirs); None otherwise."""
    with open_session(engine) as session:
        return owned_row(session, Agent, agent_id, owner)


@store_errors("list the agents")
def list_agents(engine: Engine, *, owner: str) -> list[Agent]:
    """The agents `owner` may read (theirs and shared ones), by name (case-insensitive),
    then oldest first."""
    statement = select(Agent).where(
        or_(col(Agent.owner_id) == owner, col(Agent.shared) == True)  # noqa: E712
    )
    with open_session(engine) as session:
        agents = list(session.exec(statement))
    return sorted(agents, key=lambda a: (a.name.casefold(), a.created_at, a.id))


@store_errors("update the agent")
def update_agent(
    engine: Engine,
    agent_id: str,
    *,
    owner: str,
    name: str = _UNSET,
    instructions: str = _UNSET,
    endpoint: str | None = _UNSET,
    model: str | None = _UNSET,
    tools: Iterable[str] = _UNSET,
    tool_options: Mapping[str, Mapping[str, Any]] = _UNSET,
    shared: bool = _UNSET,
    goals: Iterable[Mapping[str, Any]] = _UNSET,
    scopes: Iterable[Mapping[str, Any]] = _UNSET,
    now: Clock = time.time,
) -> Agent | None:
    """Change the given fields; None when the agent does not exist or is not `owner`'s.

    Raises ValueError for a blank name or invalid goals.
    """
    values: dict[str, Any] = {}
    if name is not _UNSET:
        values["name"] = _name(name)
    if instructions is not _UNSET:
        values["instructions"] = instructions
    if endpoint is not _UNSET:
        values["endpoint"] = endpoint
    if model is not _UNSET:
        values["model"] = model
    if tools is not _UNSET:
        values["tools_json"] = encode_json(_tool_ids(tools))
    if tool_options is not _UNSET:
        values["tool_options_json"] = encode_json(_copy_options(tool_options))
    if shared is not _UNSET:
        values["shared"] = bool(shared)
    if goals is not _UNSET or scopes is not _UNSET:
        current = get_own_agent(engine, agent_id, owner=owner)
        if current is None:
            return None
        stored_goals, stored_scopes = _goals_and_scopes(
            current.goals if goals is _UNSET else goals,
            current.scopes if scopes is _UNSET else scopes,
        )
        values["goals_json"] = encode_json(stored_goals)
        values["scopes_json"] = encode_json(stored_scopes)
    return _update(engine, agent_id, owner, values, now)


@store_errors("duplicate the agent")
def duplicate_agent(
    engine: Engine, agent_id: str, *, owner: str, now: Clock = time.time
) -> Agent | None:
    """A new agent of `owner`'s copying every setting, named "Copy of X" (not shared);
    None when the original is not readable by `owner`."""
    original = get_agent(engine, agent_id, owner=owner)
    if original is None:
        return None
    return create_agent(
        engine,
        owner=owner,
        name=f"Copy of {original.name}",
        instructions=original.instructions,
        endpoint=original.endpoint,
        model=original.model,
        tools=original.tools,
        tool_options=original.tool_options,
        goals=original.goals,
        scopes=original.scopes,
        now=now,
    )


@store_errors("delete the agent")
def delete_agent(engine: Engine, agent_id: str, *, owner: str) -> bool:
    """Delete an agent; chats that used it fall back to the default agent. False if absent
    or not `owner`'s."""
    with engine.begin() as connection:
        owned = connection.execute(
            select(Agent.id).where(col(Agent.id) == agent_id, col(Agent.owner_id) == owner)
        ).first()
        if owned is None:
            return False
        connection.execute(
            update(Conversation).where(col(Conversation.agent_id) == agent_id).values(agent_id=None)
        )
        result = connection.execute(delete(Agent).where(col(Agent.id) == agent_id))
    return result.rowcount > 0


@store_errors("save the tool option")
def set_tool_option(
    engine: Engine,
    agent_id: str,
    tool_id: str,
    key: str,
    value: ToolOptionValue,
    *,
    owner: str,
    now: Clock = time.time,
) -> Agent | None:
    """Set or clear one switch of one tool (module rules); None when the agent is absent.

    Raises ValueError for an unknown key or a value of the wrong type.
    """
    _option_value(key, value)  # validate before touching the database
    with open_session(engine) as session:
        agent = owned_row(session, Agent, agent_id, owner)
        if agent is None:
            return None
        agent.tool_options_json = encode_json(
            with_tool_option(agent.tool_options, tool_id, key, value)
        )
        agent.updated_at = now()
        session.add(agent)
        session.commit()
        return agent


@store_errors("save the tool options")
def set_tool_options_bulk(
    engine: Engine,
    agent_id: str,
    tool_ids: Iterable[str],
    key: str,
    on: bool,
    *,
    owner: str,
    now: Clock = time.time,
) -> Agent | None:
    """Turn one boolean switch on or off for many tools at once ("Describe all")."""
    if key not in BOOLEAN_TOOL_OPTIONS:
        raise ValueError(
            f"Bulk tool option {key!r} is not a switch; use one of "
            f"{', '.join(sorted(BOOLEAN_TOOL_OPTIONS))}."
        )
    with open_session(engine) as session:
        agent = owned_row(session, Agent, agent_id, owner)
        if agent is None:
            return None
        options: dict[str, dict[str, Any]] = agent.tool_options
        for tool_id in tool_ids:
            options = with_tool_option(options, tool_id, key, bool(on))
        agent.tool_options_json = encode_json(options)
        agent.updated_at = now()
        session.add(agent)
        session.commit()
        return agent


def _update(
    engine: Engine, agent_id: str, owner: str, values: dict[str, Any], now: Clock
) -> Agent | None:
    with open_session(engine) as session:
        agent = owned_row(session, Agent, agent_id, owner)
        if agent is None:
            return None
        for name, value in values.items():
            setattr(agent, name, value)
        agent.updated_at = now()
        session.add(agent)
        session.commit()
        return agent


def _option_value(key: str, value: ToolOptionValue) -> bool | list[str] | None:
    """The value to store for `key`, None to remove it; ValueError for bad input."""
    if key not in TOOL_OPTION_KEYS:
        raise ValueError(
            f"Unknown tool option {key!r}; expected one of {', '.join(sorted(TOOL_OPTION_KEYS))}."
        )
    if value is None or value is False:
        return None
    if key in BOOLEAN_TOOL_OPTIONS:
        if value is True:
            return True
        raise ValueError(f"Tool option {key!r} takes true, false or null, not {value!r}.")
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return list(value) or None
    raise ValueError(
        f"Tool option 'allowed_callers' takes a list of caller names (e.g. ['direct', "
        f"'code_execution']) or null, not {value!r}."
    )


def _name(name: str) -> str:
    cleaned = name.strip() if isinstance(name, str) else ""
    if not cleaned:
        raise ValueError("An agent needs a name; type at least one character.")
    return cleaned


def _tool_ids(tools: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for tool in tools:
        if isinstance(tool, str) and tool:
            seen.setdefault(tool, None)
    return list(seen)


def _goals_and_scopes(
    goals: Iterable[Mapping[str, Any]], scopes: Iterable[Mapping[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The goals and scopes as stored (their registry fields, in the registry's order),
    once validated together."""
    listed = [dict(goal) if isinstance(goal, Mapping) else goal for goal in goals]
    registry = goal_registry(listed)
    scoped = [dict(scope) if isinstance(scope, Mapping) else scope for scope in scopes]
    scope_registry(scoped, registry.ids())
    return (
        [{key: goal[key] for key in GOAL_FIELDS if key in goal} for goal in listed],
        [{key: scope[key] for key in SCOPE_FIELDS if key in scope} for scope in scoped],
    )


def _copy_options(options: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """A deep-enough copy that drops malformed entries and empty tool entries."""
    copied: dict[str, dict[str, Any]] = {}
    for tool_id, entry in options.items():
        if isinstance(tool_id, str) and isinstance(entry, Mapping) and entry:
            copied[tool_id] = {k: list(v) if isinstance(v, list) else v for k, v in entry.items()}
    return copied
