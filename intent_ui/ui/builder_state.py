"""The agents page's state: thin. Rules live in `core.builder`, costs in `core.tokens`, rows
in `store.agents` and `store.actions`; this module wires them to the page.

The form edits one agent at a time. A saved agent's tool picks and switches are written to
the database the moment they change (so a reload shows them); its name, instructions,
endpoint and model are written by Save. A new agent is a draft until Save creates it with
everything chosen so far.

Every handler resolves the signed-in user first and reaches agents and imported actions
only through the owner-filtered store. A shared agent of someone else's opens read-only:
it can be used and duplicated, not changed. Store queries, document parsing and token
counts run in a worker thread (`asyncio.to_thread`): the event loop that runs these
handlers also streams every user's turn. An upload is read up to the document cap, never
whole.

An agent's goals and scopes (`core.goals`) are edited here too: add, remove, change an id
or a description, tick the tool families a goal may use (the families of the agent's
picked tools) and the goals a scope serves. Every change validates both lists together; a
valid pair is written at once (a saved agent), an invalid one stays on screen with the
error naming the goal or scope and the rule, and is not written until it is fixed. A
renamed goal stays served by its scopes; a removed one leaves them.

`build_view` (pure) turns the catalogue of tools, an agent's `tool_options` and picks, the
enabled capabilities and the token costs into the display records the page renders, in the
reader's language. Every string the page shows comes from the locale catalogue
(`builder.*`); the language is the chat page's choice (its stored override, else the
browser's language).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import reflex as rx

from intent_ui.agent.tokenizer import get_tokenizer
from intent_ui.agent.tools.actions import (
    MAX_DOCUMENT_BYTES,
    ActionSpec,
    OpenApiError,
    fetch_openapi,
    load_action_tools,
    parse_openapi,
)
from intent_ui.agent.tools.registry import tool_family_of
from intent_ui.core.builder import (
    BuilderTool,
    describe_all,
    group_state,
    intent_ineligibility,
    option_eligible,
    option_on,
    set_option,
    visible_options,
)
from intent_ui.core.capabilities.intent import DESCRIBE_INTENT_OPTION
from intent_ui.core.goals import GoalError, goal_registry, scope_registry
from intent_ui.core.locale import DEFAULT_LANGUAGE, negotiate_language, translate
from intent_ui.core.tokens import (
    ToolTokenCost,
    agent_token_totals,
    definition_text,
    tool_token_cost,
)
from intent_ui.store import actions as action_store
from intent_ui.store import agents as agent_store
from intent_ui.ui.auth import AuthState
from intent_ui.ui.host import Host, get_host, refresh_actions
from intent_ui.ui.state import ChatState
from intent_ui.ui.uploads import read_capped_upload

__all__ = [
    "BUILDER_KEYS",
    "NATIVE_GROUP",
    "AgentRowVM",
    "AgentsState",
    "BuilderView",
    "DelegateVM",
    "GoalVM",
    "GroupVM",
    "ScopeGoalVM",
    "ScopeVM",
    "ToggleVM",
    "ToolRowVM",
    "build_goals",
    "build_scopes",
    "build_view",
    "catalogue",
    "goal_families",
]

logger = logging.getLogger(__name__)

NATIVE_GROUP = "native"
"""`data-server` of the native tools' group."""

BUILDER_KEYS = (
    "ui.agents",
    "builder.back_to_chat",
    "builder.new_agent",
    "builder.saved_agents",
    "builder.name",
    "builder.name_placeholder",
    "builder.instructions",
    "builder.instructions_placeholder",
    "builder.endpoint",
    "builder.model",
    "builder.save",
    "builder.unsaved",
    "builder.tools",
    "builder.tools_help",
    "builder.tokens_lead",
    "builder.tokens_with",
    "builder.tokens_without",
    "builder.tokens_end",
    "builder.tokens_counted",
    "builder.tokens_per_request",
    "builder.tokens_per_request_end",
    "builder.import_title",
    "builder.import_help",
    "builder.import_drop",
    "builder.import_file_label",
    "builder.import_url_label",
    "builder.import",
    "builder.importing",
    "builder.read_only_note",
    "builder.share",
    "builder.shared",
    "builder.goals",
    "builder.goals_help",
    "builder.goal_add",
    "builder.goal_id",
    "builder.goal_description",
    "builder.goal_description_placeholder",
    "builder.goal_delegates",
    "builder.goal_no_families",
    "builder.scopes",
    "builder.scopes_help",
    "builder.scope_add",
    "builder.scope_id",
    "builder.scope_description",
    "builder.scope_category",
    "builder.scope_category_placeholder",
    "builder.scope_goals",
    "builder.scope_no_goals",
)
"""The page's fixed strings (`AgentsState.t`); per-row strings are built in the view models."""

_OPTION_TEXT = {
    "describe_intent": "describe_intent",
    "run_in_background": "background",
    "defer_loading": "defer",
    "allowed_callers": "code_only",
}


_INELIGIBLE_TEXT = {
    "code_only": "code_only",
    "own_intent_param": "own_param",
    "not_object": "not_object",
    "excluded": "excluded",
}


@dataclass
class ToggleVM:
    pressed: bool = False
    disabled: bool = False
    tooltip: str = ""
    text: str = ""
    label: str = ""
    cost: str = ""


@dataclass
class ToolRowVM:
    tool_id: str = ""
    name: str = ""
    description: str = ""
    kind: str = ""
    picked: bool = False
    intent: ToggleVM = field(default_factory=ToggleVM)
    background: ToggleVM = field(default_factory=ToggleVM)
    defer: ToggleVM = field(default_factory=ToggleVM)
    code_only: ToggleVM = field(default_factory=ToggleVM)


@dataclass
class GroupVM:
    key: str = ""
    title: str = ""
    kind: str = ""
    note: str = ""
    describe_all: ToggleVM = field(default_factory=ToggleVM)
    tools: list[ToolRowVM] = field(default_factory=list)


@dataclass
class AgentRowVM:
    id: str = ""
    name: str = ""
    summary: str = ""
    selected: bool = False
    edit_label: str = ""
    duplicate_label: str = ""
    delete_label: str = ""
    shared: bool = False
    own: bool = True


@dataclass
class DelegateVM:
    family: str = ""
    checked: bool = False
    tools: str = ""  # the picked tools of the family (its title), or why there are none
    label: str = ""  # the checkbox's accessible name


@dataclass
class GoalVM:
    key: str = ""  # stable while the goal is on screen, so typing is never remounted away
    index: int = 0
    id: str = ""
    description: str = ""
    delegates: list[DelegateVM] = field(default_factory=list)
    remove_label: str = ""


@dataclass
class ScopeGoalVM:
    goal_id: str = ""
    checked: bool = False
    label: str = ""  # the checkbox's accessible name


@dataclass
class ScopeVM:
    key: str = ""
    index: int = 0
    id: str = ""
    description: str = ""
    category: str = ""
    goals: list[ScopeGoalVM] = field(default_factory=list)
    remove_label: str = ""


@dataclass(frozen=True)
class BuilderView:
    """What `build_view` computes: the groups and the agent's token totals."""

    groups: list[GroupVM]
    tokens_with: int
    tokens_without: int
    describing: int


# --- pure view building ------------------------------------------------------------------


def _toggle(
    tool: BuilderTool,
    tool_options: Mapping[str, Any],
    capabilities: frozenset[str],
    option: str,
    cost: ToolTokenCost | None,
    lang: str,
) -> ToggleVM:
    word = _OPTION_TEXT[option]
    pressed = option_on(tool, tool_options, option)
    eligible = option_eligible(tool, tool_options, capabilities, option)
    if option == DESCRIBE_INTENT_OPTION:
        reason = intent_ineligibility(tool, tool_options, capabilities)
        tokens = cost.intent if cost else 0
        key = "info" if reason is None else _INELIGIBLE_TEXT[reason]
        tooltip = translate(f"builder.describe_intent_{key}", lang, tokens=tokens)
        shown_cost = translate("builder.tokens", lang, n=tokens) if eligible and tokens else ""
    else:
        tooltip = translate(f"builder.{word}_{'info' if eligible else 'unavailable'}", lang)
        shown_cost = ""
    text = translate(f"builder.{word}_short", lang)
    # The accessible name starts with what the switch shows (its text, then its cost).
    shown = f"{text} {shown_cost}" if shown_cost else text
    purpose = translate(f"builder.{word}_label", lang, tool=tool.name)
    return ToggleVM(
        pressed=pressed,
        disabled=not eligible,
        tooltip=tooltip,
        text=text,
        label=translate("builder.toggle_name", lang, text=shown, purpose=purpose),
        cost=shown_cost,
    )


def _group_title(kind: str, key: str, lang: str) -> str:
    if kind == "native":
        return translate("builder.group_native", lang)
    if kind == "mcp":
        return translate("builder.group_mcp", lang, server=key)
    return translate("builder.group_actions", lang, domain=key)


def build_view(
    tools: Sequence[BuilderTool],
    *,
    tool_options: Mapping[str, Any],
    picked: Iterable[str],
    capabilities: Iterable[str],
    costs: Mapping[str, ToolTokenCost],
    unavailable: Mapping[str, str] | None = None,
    lang: str = DEFAULT_LANGUAGE,
) -> BuilderView:
    """Group the tools (native first, then MCP servers, then action domains, in catalogue
    order) and compute every switch's state, texts and cost, and the agent's totals.

    `unavailable` maps an MCP server that failed to start to the reason; its group gets a
    note saying so."""
    caps = frozenset(capabilities)
    chosen = set(picked)
    shown = set(visible_options(caps))
    order: dict[tuple[str, str], list[BuilderTool]] = {}
    for tool in tools:
        order.setdefault((tool.kind, tool.group), []).append(tool)
    for server in unavailable or {}:
        order.setdefault(("mcp", server), [])
    rank = {"native": 0, "mcp": 1, "action": 2}
    groups: list[GroupVM] = []
    for (kind, key), members in sorted(order.items(), key=lambda item: rank[item[0][0]]):
        rows = []
        for tool in members:
            cost = costs.get(tool.tool_id)
            toggles = {
                option: _toggle(tool, tool_options, caps, option, cost, lang)
                if option in shown
                else ToggleVM()
                for option in _OPTION_TEXT
            }
            rows.append(
                ToolRowVM(
                    tool_id=tool.tool_id,
                    name=tool.name,
                    description=str(tool.definition.get("description") or ""),
                    kind=tool.kind,
                    picked=tool.tool_id in chosen,
                    intent=toggles["describe_intent"],
                    background=toggles["run_in_background"],
                    defer=toggles["defer_loading"],
                    code_only=toggles["allowed_callers"],
                )
            )
        state = group_state(members, tool_options, caps)
        group_tokens = sum(
            costs[t.tool_id].intent
            for t in members
            if t.tool_id in costs and intent_ineligibility(t, tool_options, caps) is None
        )
        bulk = ToggleVM(
            pressed=state.all_on,
            disabled=state.disabled,
            tooltip=translate(
                "builder.describe_all_none" if state.disabled else "builder.describe_all_info",
                lang,
                tokens=group_tokens,
            ),
            text=translate("builder.describe_all", lang),
            label=translate("builder.describe_all_label", lang, group=key),
            cost="",
        )
        reason = (unavailable or {}).get(key) if kind == "mcp" else None
        groups.append(
            GroupVM(
                key=key,
                title=_group_title(kind, key, lang),
                kind=kind,
                note=translate("builder.server_unavailable", lang, reason=reason)
                if reason is not None
                else "",
                describe_all=bulk,
                tools=rows,
            )
        )
    intents_on = DESCRIBE_INTENT_OPTION in shown
    totals = agent_token_totals(
        (
            costs[t.tool_id],
            intents_on
            and intent_ineligibility(t, tool_options, caps) is None
            and option_on(t, tool_options, DESCRIBE_INTENT_OPTION),
        )
        for t in tools
        if t.tool_id in chosen and t.tool_id in costs
    )
    return BuilderView(groups, totals.with_intents, totals.without_intents, totals.describing)


def goal_families(tools: Sequence[BuilderTool], picked: Iterable[str]) -> dict[str, list[str]]:
    """The families a goal may delegate to: those of the picked tools, in catalogue order,
    each with its picked tools' names."""
    chosen = set(picked)
    families: dict[str, list[str]] = {}
    for tool in tools:
        if tool.tool_id in chosen:
            families.setdefault(tool.family or tool.tool_id, []).append(tool.name)
    return families


def build_goals(
    goals: Sequence[Mapping[str, Any]],
    keys: Sequence[str],
    families: Mapping[str, Sequence[str]],
    lang: str = DEFAULT_LANGUAGE,
    picked_names: Mapping[str, str] | None = None,
) -> list[GoalVM]:
    """One row per goal, each listing the families it may use: the picked tools' families,
    then what it already names beyond them: a picked tool's own id (`picked_names` maps
    those ids to names; a delegate may name one tool), or a family no picked tool has
    (kept, so unpicking a tool never silently drops a goal's choice)."""
    singles = picked_names or {}
    rows = []
    for index, goal in enumerate(goals):
        ident = str(goal.get("id") or "")
        named = [str(d) for d in goal.get("delegates") or ()]
        shown = [*families, *(d for d in named if d not in families)]
        name = ident or f"#{index + 1}"
        delegates = [
            DelegateVM(
                family=family,
                checked=family in named,
                tools=", ".join(families[family])
                if family in families
                else singles.get(family) or translate("builder.goal_family_unpicked", lang),
                label=translate("builder.goal_delegate_label", lang, goal=name, family=family),
            )
            for family in shown
        ]
        rows.append(
            GoalVM(
                key=keys[index] if index < len(keys) else f"goal-{index}",
                index=index,
                id=ident,
                description=str(goal.get("description") or ""),
                delegates=delegates,
                remove_label=translate("builder.goal_remove", lang, goal=name),
            )
        )
    return rows


def build_scopes(
    scopes: Sequence[Mapping[str, Any]],
    keys: Sequence[str],
    goal_ids: Sequence[str],
    lang: str = DEFAULT_LANGUAGE,
) -> list[ScopeVM]:
    """One row per scope, each listing the agent's goals it may serve."""
    rows = []
    for index, scope in enumerate(scopes):
        ident = str(scope.get("id") or "")
        name = ident or f"#{index + 1}"
        served = [str(g) for g in scope.get("goal_ids") or ()]
        shown = [*goal_ids, *(g for g in served if g not in goal_ids)]
        rows.append(
            ScopeVM(
                key=keys[index] if index < len(keys) else f"scope-{index}",
                index=index,
                id=ident,
                description=str(scope.get("description") or ""),
                category=str(scope.get("category") or ""),
                goals=[
                    ScopeGoalVM(
                        goal_id=goal_id,
                        checked=goal_id in served,
                        label=translate("builder.scope_goal_label", lang, scope=name, goal=goal_id),
                    )
                    for goal_id in shown
                    if goal_id
                ],
                remove_label=translate("builder.scope_remove", lang, scope=name),
            )
        )
    return rows


def _next_id(prefix: str, rows: Sequence[Mapping[str, Any]]) -> str:
    """`{prefix}-{n}` for a new row: its number, or the next one no row uses yet."""
    taken = {row.get("id") for row in rows}
    number = len(rows) + 1
    while f"{prefix}-{number}" in taken:
        number += 1
    return f"{prefix}-{number}"


# --- the catalogue of tools ---------------------------------------------------------------


def _builder_tool(tool: Any) -> BuilderTool:
    kind = tool.kind
    if kind == "mcp":
        group = tool.server or "mcp"
    elif kind == "action":
        group = getattr(tool, "domain", "") or "actions"
    else:
        group = NATIVE_GROUP
    return BuilderTool(
        tool_id=tool.tool_id,
        name=tool.name,
        kind=kind,
        group=group,
        definition=tool.definition,
        family=tool_family_of(tool),
    )


def catalogue(
    host: Host, user: str, *, refresh: bool = False
) -> tuple[list[BuilderTool], dict[str, str]]:
    """Every tool `user`'s agents may pick (runtime tools, then the actions they imported),
    and why each unavailable MCP server is unavailable. Cached per host and user (kept out
    of the Reflex state, which is pickled); `refresh` rebuilds it after an import. Blocking
    (the database, and parsing a stored document not parsed before): call it from a worker
    thread."""
    cached = _catalogue_cache.get(user)
    if not refresh and cached is not None and cached[0] is host:
        return cached[1], cached[2]
    if refresh:
        refresh_actions(host)
    runtime_tools = host.runtime.tools
    tools = [_builder_tool(t) for t in runtime_tools]
    known = {t.tool_id for t in tools}
    stored = action_store.list_action_documents(host.engine, owner=user)
    actions, _problems = load_action_tools((d.source, d.document_json) for d in stored)
    tools.extend(_builder_tool(a) for a in actions if a.tool_id not in known)
    unavailable = dict(host.runtime.mcp_failures)
    _catalogue_cache[user] = (host, tools, unavailable)
    return tools, unavailable


_catalogue_cache: dict[str, tuple[Host, list[BuilderTool], dict[str, str]]] = {}


_COSTS: dict[tuple[str, str], ToolTokenCost] = {}


def _priced_catalogue(
    host: Host, user: str
) -> tuple[list[BuilderTool], dict[str, str], dict[str, ToolTokenCost]]:
    """`catalogue` and the token costs of its tools. Blocking (the database on a cold cache,
    the tokenizer for a definition not counted before): call it from a worker thread."""
    tools, unavailable = catalogue(host, user)
    return tools, unavailable, _costs(tools)


def _costs(tools: Sequence[BuilderTool]) -> dict[str, ToolTokenCost]:
    """Token costs per tool id, cached per process by definition text."""
    count = get_tokenizer().count
    out: dict[str, ToolTokenCost] = {}
    for tool in tools:
        key = (tool.tool_id, definition_text(tool.definition))
        cost = _COSTS.get(key)
        if cost is None:
            cost = _COSTS[key] = tool_token_cost(tool.definition, count)
        out[tool.tool_id] = cost
    return out


# --- the state ----------------------------------------------------------------------------


class AgentsState(AuthState):
    """The agents page (`/agents`)."""

    agents: list[AgentRowVM] = []
    agent_id: str = ""
    editing: bool = False
    form_key: str = "new"
    name: str = ""
    instructions: str = ""
    endpoint: str = ""
    model: str = ""
    endpoints: list[str] = []
    models: list[str] = []
    groups: list[GroupVM] = []
    show_intent: bool = True
    show_background: bool = True
    show_defer: bool = True
    show_code_only: bool = True
    tokenizer: str = ""
    tokens_with: int = 0
    tokens_without: int = 0
    describing: int = 0
    error: str = ""
    notice: str = ""
    import_url: str = ""
    importing: bool = False
    lang: str = DEFAULT_LANGUAGE
    shared: bool = False
    read_only: bool = False
    goals: list[GoalVM] = []
    goal_error: str = ""
    _tool_options: dict[str, Any] = {}
    _picked: list[str] = []
    _goals: list[dict[str, Any]] = []
    _goal_keys: list[str] = []
    scopes: list[ScopeVM] = []
    _scopes: list[dict[str, Any]] = []
    _scope_keys: list[str] = []

    @rx.var
    def t(self) -> dict[str, str]:
        return {key: translate(key, self.lang) for key in BUILDER_KEYS}

    def _text(self, key: str, **params: object) -> str:
        return translate(key, self.lang, **params)

    # --- lifecycle ------------------------------------------------------------------------

    async def _user(self, host: Host) -> str | None:
        user = await self.current_user(host)
        if user is None:
            self.agents, self.groups, self.agent_id = [], [], ""
            self.error = self.auth_error
        return user

    @rx.event
    async def load_page(self) -> Any:
        host = await get_host()
        user = await self._user(host)
        if user is None:
            return await self.sign_in_redirect(host)
        caps = frozenset(host.config.capabilities)
        shown = set(visible_options(caps))
        self.show_intent = "describe_intent" in shown
        self.show_background = "run_in_background" in shown
        self.show_defer = "defer_loading" in shown
        self.show_code_only = "allowed_callers" in shown
        self.endpoints = [e.name for e in host.config.endpoints]
        await asyncio.to_thread(catalogue, host, user, refresh=True)
        self.tokenizer = (await asyncio.to_thread(get_tokenizer)).name
        await self._refresh_agents(host, user)
        reopen = self.agent_id if any(a.id == self.agent_id for a in self.agents) else ""
        if not reopen and not self.editing:
            listed = await asyncio.to_thread(agent_store.list_agents, host.engine, owner=user)
            own = [a for a in listed if a.owner_id == user]
            if own:
                reopen = str(max(own, key=lambda a: a.updated_at).id)
        if reopen:
            await self._open(host, user, reopen)
        elif not self.editing or self.agent_id:
            await self._start_draft(host, user)
        else:
            await self._render(host, user)
        return rx.call_script("navigator.language || ''", callback=AgentsState.set_browser_lang)

    @rx.event
    async def set_browser_lang(self, value: str) -> None:
        # The chat page owns the reader's choice of language; the builder follows it.
        chat = await self.get_state(ChatState)
        lang = chat.lang_override or negotiate_language(value or "")
        if lang != self.lang:
            self.lang = lang
            host = await get_host()
            user = await self._user(host)
            if user is None:
                return
            await self._refresh_agents(host, user)
            await self._render(host, user)

    # --- agents ---------------------------------------------------------------------------

    async def _refresh_agents(self, host: Host, user: str) -> None:
        rows = []
        for agent in await asyncio.to_thread(agent_store.list_agents, host.engine, owner=user):
            rows.append(
                AgentRowVM(
                    id=str(agent.id),
                    name=agent.name,
                    summary=self._text("builder.agent_tools", n=len(agent.tools)),
                    selected=str(agent.id) == self.agent_id,
                    edit_label=self._text("builder.edit_agent", name=agent.name),
                    duplicate_label=self._text("builder.duplicate_agent", name=agent.name),
                    delete_label=self._text("builder.delete_agent", name=agent.name),
                    shared=agent.shared,
                    own=agent.owner_id == user,
                )
            )
        self.agents = rows

    def _sync_models(self, host: Host) -> None:
        endpoint = host.config.endpoint(self.endpoint) if self.endpoint else None
        self.models = list(endpoint.models) if endpoint else []
        if self.model not in self.models:
            self.model = self.models[0] if self.models else ""

    async def _start_draft(self, host: Host, user: str) -> None:
        self.agent_id = ""
        self.editing = True
        self.form_key = f"new-{time.monotonic_ns()}"
        self.name = ""
        self.instructions = ""
        self.endpoint = self.endpoints[0] if self.endpoints else ""
        self.model = ""
        self._sync_models(host)
        self._tool_options = {}
        self._picked = []
        self._set_goals([])
        self.shared = False
        self.read_only = False
        self.error = ""
        await self._render(host, user)

    async def _open(self, host: Host, user: str, agent_id: str) -> None:
        agent = await asyncio.to_thread(agent_store.get_agent, host.engine, agent_id, owner=user)
        if agent is None:
            self.error = self._text("builder.error_agent_gone")
            await self._refresh_agents(host, user)
            await self._start_draft(host, user)
            return
        self.agent_id = str(agent.id)
        self.editing = True
        self.form_key = f"{agent.id}-{agent.updated_at}"
        self.name = agent.name
        self.instructions = agent.instructions
        self.endpoint = agent.endpoint or (self.endpoints[0] if self.endpoints else "")
        self.model = agent.model or ""
        self._sync_models(host)
        self._tool_options = agent.tool_options
        self._picked = agent.tools
        self._set_goals(agent.goals, agent.scopes)
        self.shared = agent.shared
        self.read_only = agent.owner_id != user
        self.error = ""
        await self._refresh_agents(host, user)
        await self._render(host, user)

    async def _render(self, host: Host, user: str) -> None:
        tools, unavailable, costs = await asyncio.to_thread(_priced_catalogue, host, user)
        view = build_view(
            tools,
            tool_options=self._tool_options,
            picked=self._picked,
            capabilities=host.config.capabilities,
            costs=costs,
            unavailable=unavailable,
            lang=self.lang,
        )
        self.groups = view.groups
        self.tokens_with = view.tokens_with
        self.tokens_without = view.tokens_without
        self.describing = view.describing
        self.goals = build_goals(
            self._goals,
            self._goal_keys,
            goal_families(tools, self._picked),
            self.lang,
            {t.tool_id: t.name for t in tools if t.tool_id in set(self._picked)},
        )
        self.scopes = build_scopes(
            self._scopes, self._scope_keys, [str(g.get("id") or "") for g in self._goals], self.lang
        )

    @rx.event
    async def new_agent(self) -> None:
        host = await get_host()
        user = await self._user(host)
        if user is None:
            return
        self.notice = ""
        await self._start_draft(host, user)
        await self._refresh_agents(host, user)

    @rx.event
    async def open_agent(self, agent_id: str) -> None:
        host = await get_host()
        user = await self._user(host)
        if user is None:
            return
        self.notice = ""
        await self._open(host, user, agent_id)

    @rx.event
    async def set_endpoint(self, value: str) -> None:
        host = await get_host()
        if host.config.endpoint(value) is None:
            return  # only configured endpoints
        self.endpoint = value
        self._sync_models(host)

    @rx.event
    def set_model(self, value: str) -> None:
        # `models` is the chosen endpoint's list, computed on the server.
        if value in self.models:
            self.model = value

    @rx.event
    async def save(self, form: dict[str, Any]) -> None:
        host = await get_host()
        user = await self._user(host)
        if user is None:
            return
        if self.read_only:
            self.error = self._text("builder.read_only")
            return
        name = str(form.get("name") or "").strip()
        instructions = str(form.get("instructions") or "")
        endpoint = str(form.get("endpoint") or self.endpoint)
        if host.config.endpoint(endpoint) is not None:
            self.endpoint = endpoint
            self._sync_models(host)
        model = str(form.get("model") or self.model)
        if model in self.models:
            self.model = model
        if not name:
            self.error = self._text("builder.error_name_required")
            return
        if self.goal_error:
            self.error = self.goal_error  # an invalid goal is never written: fix it first
            return
        self.name, self.instructions = name, instructions
        fields: dict[str, Any] = {
            "name": name,
            "instructions": instructions,
            "endpoint": self.endpoint or None,
            "model": self.model or None,
            "goals": self._goals,
            "scopes": self._scopes,
        }
        if self.agent_id:
            agent = await asyncio.to_thread(
                agent_store.update_agent, host.engine, self.agent_id, owner=user, **fields
            )
            if agent is None:
                self.error = self._text("builder.error_deleted_save_again")
                self.agent_id = ""
                return
        else:
            created = await asyncio.to_thread(
                agent_store.create_agent,
                host.engine,
                owner=user,
                **fields,
                tools=self._picked,
                tool_options=self._tool_options,
                shared=self.shared,
            )
            self.agent_id = str(created.id)
        self.error = ""
        self.notice = self._text("builder.saved", name=name)
        await self._refresh_agents(host, user)

    @rx.event
    async def toggle_shared(self) -> None:
        host = await get_host()
        user = await self._user(host)
        if user is None:
            return
        if self.read_only:
            self.error = self._text("builder.read_only")
            return
        self.shared = not self.shared
        await self._persist(host, user, shared=self.shared)
        await self._refresh_agents(host, user)

    @rx.event
    async def duplicate(self, agent_id: str) -> None:
        host = await get_host()
        user = await self._user(host)
        if user is None:
            return
        copy = await asyncio.to_thread(
            agent_store.duplicate_agent, host.engine, agent_id, owner=user
        )
        if copy is None:
            self.error = self._text("builder.error_cannot_duplicate")
            await self._refresh_agents(host, user)
            return
        self.notice = self._text("builder.created", name=copy.name)
        await self._open(host, user, str(copy.id))

    @rx.event
    async def delete(self, agent_id: str) -> None:
        host = await get_host()
        user = await self._user(host)
        if user is None:
            return
        if not await asyncio.to_thread(agent_store.delete_agent, host.engine, agent_id, owner=user):
            self.error = self._text("builder.error_not_owner_delete")
            await self._refresh_agents(host, user)
            return
        self.notice = self._text("builder.deleted")
        if agent_id == self.agent_id:
            await self._start_draft(host, user)
        await self._refresh_agents(host, user)

    # --- tools and switches ---------------------------------------------------------------

    async def _tool(self, host: Host, user: str, tool_id: str) -> BuilderTool | None:
        tools, _unavailable = await asyncio.to_thread(catalogue, host, user)
        return next((t for t in tools if t.tool_id == tool_id), None)

    async def _persist(self, host: Host, user: str, **fields: Any) -> None:
        if not self.agent_id:
            return  # a draft: Save writes everything
        updated = await asyncio.to_thread(
            agent_store.update_agent, host.engine, self.agent_id, owner=user, **fields
        )
        if updated is None:
            self.error = self._text("builder.error_deleted_save")
            self.agent_id = ""

    async def _current_options(self, host: Host, user: str) -> dict[str, Any]:
        # Re-read a saved agent, so two tabs editing one agent do not undo each other.
        if self.agent_id:
            agent = await asyncio.to_thread(
                agent_store.get_own_agent, host.engine, self.agent_id, owner=user
            )
            if agent is not None:
                return agent.tool_options
        return dict(self._tool_options)

    async def _editor(self) -> tuple[Host, str] | None:
        """The host and user when the open agent may be changed by this user."""
        host = await get_host()
        user = await self._user(host)
        if user is None:
            return None
        if self.read_only:
            self.error = self._text("builder.read_only")
            return None
        return host, user

    @rx.event
    async def toggle_pick(self, tool_id: str) -> None:
        found = await self._editor()
        if found is None:
            return
        host, user = found
        picked = list(self._picked)
        picked = [t for t in picked if t != tool_id] if tool_id in picked else [*picked, tool_id]
        self._picked = picked
        await self._persist(host, user, tools=picked)
        if self.agent_id:
            await self._refresh_agents(host, user)
        await self._render(host, user)

    @rx.event
    async def toggle_option(self, tool_id: str, option: str) -> None:
        found = await self._editor()
        if found is None:
            return
        host, user = found
        tool = await self._tool(host, user, tool_id)
        caps = frozenset(host.config.capabilities)
        if tool is None or option not in visible_options(caps):
            return
        options = await self._current_options(host, user)
        if not option_eligible(tool, options, caps, option):
            return  # aria-disabled: the stored state stays as it is
        updated = set_option(options, tool, option, not option_on(tool, options, option))
        self._tool_options = dict(updated)
        await self._persist(host, user, tool_options=self._tool_options)
        await self._render(host, user)

    @rx.event
    async def toggle_describe_all(self, group: str) -> None:
        found = await self._editor()
        if found is None:
            return
        host, user = found
        caps = frozenset(host.config.capabilities)
        if DESCRIBE_INTENT_OPTION not in visible_options(caps):
            return
        tools, _unavailable = await asyncio.to_thread(catalogue, host, user)
        members = [t for t in tools if t.group == group]
        options = await self._current_options(host, user)
        updated = describe_all(options, members, caps)
        if updated is options:
            return
        self._tool_options = dict(updated)
        await self._persist(host, user, tool_options=self._tool_options)
        await self._render(host, user)

    # --- goals ----------------------------------------------------------------------------

    def _set_goals(
        self, goals: Sequence[Mapping[str, Any]], scopes: Sequence[Mapping[str, Any]] = ()
    ) -> None:
        """Show an agent's stored goals and scopes (valid: the store writes only valid ones)."""
        self._goals = [dict(goal) for goal in goals]
        self._goal_keys = [f"{self.form_key}:{index}" for index in range(len(self._goals))]
        self._scopes = [dict(scope) for scope in scopes]
        self._scope_keys = [f"{self.form_key}:{index}" for index in range(len(self._scopes))]
        self.goal_error = ""

    async def _change_goals(
        self,
        host: Host,
        user: str,
        goals: list[dict[str, Any]],
        scopes: list[dict[str, Any]] | None = None,
    ) -> None:
        """Validate the edited lists together; write them when valid, else show why
        (keeping the edit on screen)."""
        self._goals = goals
        if scopes is not None:
            self._scopes = scopes
        try:
            scope_registry(self._scopes, goal_registry(goals).ids())
        except GoalError as exc:
            self.goal_error = str(exc)
        else:
            self.goal_error = ""
            await self._persist(host, user, goals=goals, scopes=self._scopes)
        await self._render(host, user)

    def _goal_at(self, index: int) -> dict[str, Any] | None:
        return dict(self._goals[index]) if 0 <= index < len(self._goals) else None

    def _scopes_serving(self, rename: Mapping[str, str | None]) -> list[dict[str, Any]]:
        """The scopes with renamed goals followed (`None`: the goal was removed)."""
        scopes = []
        for scope in self._scopes:
            served = [rename.get(g, g) for g in scope.get("goal_ids") or ()]
            scopes.append({**scope, "goal_ids": [g for g in served if g is not None]})
        return scopes

    @rx.event
    async def add_goal(self) -> None:
        found = await self._editor()
        if found is None:
            return
        self._goal_keys = [*self._goal_keys, f"{self.form_key}:new:{time.monotonic_ns()}"]
        goal = {"id": _next_id("goal", self._goals), "description": "", "delegates": []}
        await self._change_goals(*found, [*self._goals, goal])

    @rx.event
    async def remove_goal(self, index: int) -> None:
        found = await self._editor()
        goal = self._goal_at(index)
        if found is None or goal is None:
            return
        del self._goal_keys[index : index + 1]
        goals = [g for i, g in enumerate(self._goals) if i != index]
        await self._change_goals(*found, goals, self._scopes_serving({str(goal.get("id")): None}))

    async def _edit_goal(self, index: int, key: str, value: Any) -> None:
        found = await self._editor()
        goal = self._goal_at(index)
        if found is None or goal is None or goal.get(key) == value:
            return
        before = str(goal.get("id"))
        goal[key] = value
        goals = [goal if i == index else g for i, g in enumerate(self._goals)]
        # A renamed goal stays served by its scopes.
        scopes = self._scopes_serving({before: str(value)}) if key == "id" else None
        await self._change_goals(*found, goals, scopes)

    @rx.event
    async def set_goal_id(self, index: int, value: str) -> None:
        await self._edit_goal(index, "id", str(value).strip())

    @rx.event
    async def set_goal_description(self, index: int, value: str) -> None:
        await self._edit_goal(index, "description", str(value))

    @rx.event
    async def toggle_goal_delegate(self, index: int, family: str) -> None:
        goal = self._goal_at(index)
        if goal is None:
            return
        await self._edit_goal(index, "delegates", _toggled(goal.get("delegates"), family))

    # --- scopes ---------------------------------------------------------------------------

    @rx.event
    async def add_scope(self) -> None:
        found = await self._editor()
        if found is None:
            return
        self._scope_keys = [*self._scope_keys, f"{self.form_key}:new:{time.monotonic_ns()}"]
        scope = {
            "id": _next_id("scope", self._scopes),
            "description": "",
            "category": "",
            "goal_ids": [],
        }
        await self._change_goals(*found, self._goals, [*self._scopes, scope])

    @rx.event
    async def remove_scope(self, index: int) -> None:
        found = await self._editor()
        if found is None or not 0 <= index < len(self._scopes):
            return
        del self._scope_keys[index : index + 1]
        scopes = [scope for i, scope in enumerate(self._scopes) if i != index]
        await self._change_goals(*found, self._goals, scopes)

    async def _edit_scope(self, index: int, key: str, value: Any) -> None:
        found = await self._editor()
        if found is None or not 0 <= index < len(self._scopes):
            return
        scope = dict(self._scopes[index])
        if scope.get(key) == value:
            return
        scope[key] = value
        scopes = [scope if i == index else other for i, other in enumerate(self._scopes)]
        await self._change_goals(*found, self._goals, scopes)

    @rx.event
    async def set_scope_id(self, index: int, value: str) -> None:
        await self._edit_scope(index, "id", str(value).strip())

    @rx.event
    async def set_scope_description(self, index: int, value: str) -> None:
        await self._edit_scope(index, "description", str(value))

    @rx.event
    async def set_scope_category(self, index: int, value: str) -> None:
        await self._edit_scope(index, "category", str(value).strip())

    @rx.event
    async def toggle_scope_goal(self, index: int, goal_id: str) -> None:
        if not 0 <= index < len(self._scopes):
            return
        served = self._scopes[index].get("goal_ids")
        await self._edit_scope(index, "goal_ids", _toggled(served, goal_id))

    # --- OpenAPI actions ------------------------------------------------------------------

    @rx.event
    def set_import_url(self, value: str) -> None:
        self.import_url = value

    async def _import(
        self, host: Host, user: str, spec_source: str, loader: Awaitable[ActionSpec]
    ) -> None:
        try:
            spec = await loader
        except OpenApiError as exc:
            self.error = str(exc)
            self.notice = ""
            return
        await asyncio.to_thread(
            action_store.save_action_document,
            host.engine,
            owner=user,
            encoded_domain=spec.encoded_domain,
            domain=spec.domain,
            title=spec.title,
            source=spec_source,
            document=spec.document,
            now=time.time,
        )
        await asyncio.to_thread(catalogue, host, user, refresh=True)
        self.error = ""
        self.notice = self._text("builder.imported", n=len(spec.operations), title=spec.title)
        await self._render(host, user)

    @rx.event
    async def import_from_url(self) -> AsyncIterator[None]:
        host = await get_host()
        user = await self._user(host)
        if user is None:
            return
        url = self.import_url.strip()
        if not url:
            self.error = self._text("builder.error_url_required")
            return
        self.importing = True
        yield
        allow = host.config.actions.allow_private_networks
        await self._import(host, user, url, fetch_openapi(url, allow_private_networks=allow))
        self.importing = False

    @rx.event
    async def handle_upload(self, files: list[rx.UploadFile]) -> None:
        host = await get_host()
        user = await self._user(host)
        if user is None:
            return
        for upload in files:
            name = getattr(upload, "filename", None) or upload.name or "uploaded file"
            await self._import(host, user, name, _uploaded_spec(upload, name))


async def _uploaded_spec(upload: rx.UploadFile, name: str) -> ActionSpec:
    """An uploaded document, read up to the cap (never whole) and parsed off the loop."""
    data, more = await read_capped_upload(upload, MAX_DOCUMENT_BYTES)
    if more:
        raise OpenApiError(
            f"{name}: the file is larger than {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB "
            "(reading stopped there); import a smaller OpenAPI file"
        )
    return await asyncio.to_thread(parse_openapi, data, source=name)


def _toggled(items: Iterable[object] | None, item: str) -> list[str]:
    """`items` (as strings) without `item` if it was there, else with it at the end."""
    named = [str(i) for i in items or ()]
    return [i for i in named if i != item] if item in named else [*named, item]
