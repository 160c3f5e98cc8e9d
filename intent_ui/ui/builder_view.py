"""What the agents page shows of tools and agents: view models and the pure functions that
build them from the catalogue, an agent's stored choices and the store's agent rows.

`build_view` turns the catalogue of tools, an agent's `tool_options` and picks, the enabled
capabilities and the token costs into one section per tool source (the native tools, one
MCP server, one action domain), each switch with its state, texts and cost, and the
agent's token totals. The switch rules are `core.builder`'s, the costs `core.tokens`';
this module only lays them out.

Every string comes from the locale catalogue (`builder.*`) in the reader's language. No
Reflex state, store or clock: the state (`ui.builder_state`) copies what these return
into its vars.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from intent_ui.core.builder import (
    BuilderTool,
    intent_ineligibility,
    option_eligible,
    option_on,
    source_state,
    visible_options,
    workspace_approval,
)
from intent_ui.core.capabilities.intent import DESCRIBE_INTENT_OPTION
from intent_ui.core.locale import DEFAULT_LANGUAGE, translate
from intent_ui.core.pauses import REQUIRE_APPROVAL_OPTION
from intent_ui.core.tokens import ToolTokenCost, agent_token_totals
from intent_ui.store.models import Agent

__all__ = [
    "BUILDER_KEYS",
    "NATIVE_SOURCE",
    "AgentRowVM",
    "BuilderView",
    "SourceVM",
    "ToggleVM",
    "ToolRowVM",
    "agent_rows",
    "build_view",
]

NATIVE_SOURCE = "native"
"""`data-server` of the native tools' section."""

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
"""Each switch's option -> the word of its `builder.*` texts."""

_INELIGIBLE_TEXT = {
    "code_only": "code_only",
    "own_intent_param": "own_param",
    "not_object": "not_object",
    "excluded": "excluded",
}

_SOURCE_RANK = {"native": 0, "mcp": 1, "action": 2}


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
    approval: ToggleVM = field(default_factory=ToggleVM)


@dataclass
class SourceVM:
    """Where tools come from, listed together: the native tools, one MCP server or one
    action domain (`key`), with its "Describe all" switch."""

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


@dataclass(frozen=True)
class BuilderView:
    """What `build_view` computes: the tool sources and the agent's token totals."""

    sources: list[SourceVM]
    tokens_with: int
    tokens_without: int
    describing: int
    approval_default: ToggleVM = field(default_factory=ToggleVM)
    """The agent's "Ask before changing the workspace" (`core.builder.workspace_approval`)."""


def agent_rows(
    agents: Iterable[Agent], *, selected: str, user: str, lang: str = DEFAULT_LANGUAGE
) -> list[AgentRowVM]:
    """One row per agent `user` may see (as the store lists them); `selected` is open."""
    return [
        AgentRowVM(
            id=str(agent.id),
            name=agent.name,
            summary=translate("builder.agent_tools", lang, n=len(agent.tools)),
            selected=str(agent.id) == selected,
            edit_label=translate("builder.edit_agent", lang, name=agent.name),
            duplicate_label=translate("builder.duplicate_agent", lang, name=agent.name),
            delete_label=translate("builder.delete_agent", lang, name=agent.name),
            shared=agent.shared,
            own=agent.owner_id == user,
        )
        for agent in agents
    ]


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


def _approval_toggle(
    tool: BuilderTool, tool_options: Mapping[str, Any], capabilities: frozenset[str], lang: str
) -> ToggleVM:
    """ "Ask first": every agent has it, whatever the admin enables (`core.builder`)."""
    text = translate("builder.approval_short", lang)
    purpose = translate("builder.approval_label", lang, tool=tool.name)
    return ToggleVM(
        pressed=option_on(tool, tool_options, REQUIRE_APPROVAL_OPTION),
        disabled=not option_eligible(tool, tool_options, capabilities, REQUIRE_APPROVAL_OPTION),
        tooltip=translate("builder.approval_info", lang),
        text=text,
        label=translate("builder.toggle_name", lang, text=text, purpose=purpose),
    )


def _approval_default(tool_options: Mapping[str, Any], lang: str) -> ToggleVM:
    text = translate("builder.approval_default", lang)
    return ToggleVM(
        pressed=workspace_approval(tool_options),
        tooltip=translate("builder.approval_default_info", lang),
        text=text,
        label=translate(
            "builder.toggle_name",
            lang,
            text=text,
            purpose=translate("builder.approval_default_label", lang),
        ),
    )


def _tool_row(
    tool: BuilderTool,
    tool_options: Mapping[str, Any],
    capabilities: frozenset[str],
    shown: set[str],
    cost: ToolTokenCost | None,
    picked: bool,
    lang: str,
) -> ToolRowVM:
    toggles = {
        option: _toggle(tool, tool_options, capabilities, option, cost, lang)
        if option in shown
        else ToggleVM()
        for option in _OPTION_TEXT
    }
    return ToolRowVM(
        tool_id=tool.tool_id,
        name=tool.name,
        description=str(tool.definition.get("description") or ""),
        kind=tool.kind,
        picked=picked,
        intent=toggles["describe_intent"],
        background=toggles["run_in_background"],
        defer=toggles["defer_loading"],
        code_only=toggles["allowed_callers"],
        approval=_approval_toggle(tool, tool_options, capabilities, lang),
    )


def _describe_all(
    key: str,
    members: Sequence[BuilderTool],
    tool_options: Mapping[str, Any],
    capabilities: frozenset[str],
    costs: Mapping[str, ToolTokenCost],
    lang: str,
) -> ToggleVM:
    state = source_state(members, tool_options, capabilities)
    source_tokens = sum(
        costs[t.tool_id].intent
        for t in members
        if t.tool_id in costs and intent_ineligibility(t, tool_options, capabilities) is None
    )
    return ToggleVM(
        pressed=state.all_on,
        disabled=state.disabled,
        tooltip=translate(
            "builder.describe_all_none" if state.disabled else "builder.describe_all_info",
            lang,
            tokens=source_tokens,
        ),
        text=translate("builder.describe_all", lang),
        label=translate("builder.describe_all_label", lang, source=key),
        cost="",
    )


def _source_title(kind: str, key: str, lang: str) -> str:
    if kind == "native":
        return translate("builder.source_native", lang)
    if kind == "mcp":
        return translate("builder.source_mcp", lang, server=key)
    return translate("builder.source_actions", lang, domain=key)


def build_view(
    tools: Sequence[BuilderTool],
    *,
    tool_options: Mapping[str, Any],
    picked: Iterable[str],
    capabilities: Iterable[str],
    costs: Mapping[str, ToolTokenCost],
    unavailable: Mapping[str, str] | None = None,
    sandbox_unavailable: str | None = None,
    lang: str = DEFAULT_LANGUAGE,
) -> BuilderView:
    """List the tools by source (native first, then MCP servers, then action domains, in
    catalogue order) and compute every switch's state, texts and cost, and the agent's
    totals.

    `unavailable` maps an MCP server that failed to start to the reason; its section gets
    a note saying so. `sandbox_unavailable` is why the sandboxed tools are not offered
    (`AgentRuntime.sandbox_unavailable`): the native section says so, since they are
    missing from it."""
    caps = frozenset(capabilities)
    chosen = set(picked)
    shown = set(visible_options(caps))
    down = unavailable or {}
    order: dict[tuple[str, str], list[BuilderTool]] = {}
    for tool in tools:
        order.setdefault((tool.kind, tool.source), []).append(tool)
    for server in down:
        order.setdefault(("mcp", server), [])
    if sandbox_unavailable is not None:
        order.setdefault(("native", NATIVE_SOURCE), [])
    sources: list[SourceVM] = []
    for (kind, key), members in sorted(order.items(), key=lambda item: _SOURCE_RANK[item[0][0]]):
        reason = down.get(key) if kind == "mcp" else None
        note = ""
        if reason is not None:
            note = translate("builder.server_unavailable", lang, reason=reason)
        if kind == "native" and sandbox_unavailable is not None:
            note = translate("builder.sandbox_unavailable", lang, reason=sandbox_unavailable)
        sources.append(
            SourceVM(
                key=key,
                title=_source_title(kind, key, lang),
                kind=kind,
                note=note,
                describe_all=_describe_all(key, members, tool_options, caps, costs, lang),
                tools=[
                    _tool_row(
                        tool,
                        tool_options,
                        caps,
                        shown,
                        costs.get(tool.tool_id),
                        tool.tool_id in chosen,
                        lang,
                    )
                    for tool in members
                ],
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
    return BuilderView(
        sources,
        totals.with_intents,
        totals.without_intents,
        totals.describing,
        _approval_default(tool_options, lang),
    )
