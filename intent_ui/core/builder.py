"""The agent builder's rules: what each capability toggle shows and what a click writes.

Pure functions over an agent's `tool_options` (`{tool_id: {option: value}}`, the shape the
runtime reads) and a list of `BuilderTool`s. Nothing here mutates its input: every write
returns a new mapping, with the untouched entries shared.

The rules:

- Four capabilities, four options: `tool_intents` -> `describe_intent`, `run_in_background`
  -> `run_in_background`, `deferred_tools` -> `defer_loading`, `programmatic_tools` ->
  `allowed_callers`. A capability the admin configuration does not enable shows no toggle
  (`visible_options`).
- Setting writes `True` (for `allowed_callers`: `["code_execution"]`, i.e. only from code).
  Clearing removes the key and drops the tool's entry once it is empty; sibling keys are
  never touched. The one exception is a tool whose default is ON (native tools describe
  their intent by default): clearing it must be remembered, so it writes `False`.
- An action's options may be stored under its `---` domain spelling or the runtime's `_`
  spelling; both speak for the same tool, and a write replaces every spelling with the
  tool's own id. Whether a tool is an action is decided by its `kind`, never by finding
  `_action_` in an id: an MCP tool may be called `foo_action_bar`.
- A tool that cannot carry an intent (callable only from code, a business parameter named
  `intent`, a non-object schema, host machinery) shows its intent toggle disabled, with its
  stored state still visible (docs/capabilities.md, Intent rules).
- "Describe all" over a source (an MCP server, the native tools, an action domain) sets every
  eligible tool when not all are set, otherwise clears them all; with no eligible tool it is
  disabled and changes nothing.
- "Ask first" (`require_approval`) is no admin capability: every agent shows it, on every
  tool but those that cannot wait for a person (a tool only code calls, and
  `ask_user_question`, which waits for the user anyway). Its default is the agent's
  "Ask before changing the workspace" (`workspace_approval`, the `"*"` entry) for the tools
  that change the workspace, and off for the rest (`core/pauses.py`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from intent_ui.core.capabilities.background import (
    NATIVE_BACKGROUND_TOOL_NAMES,
    RUN_IN_BACKGROUND_ARG,
    RUN_IN_BACKGROUND_OPTION,
    is_background_eligible_tool_name,
)
from intent_ui.core.capabilities.deferred import DEFER_LOADING_OPTION, is_defer_eligible_tool_name
from intent_ui.core.capabilities.intent import (
    DESCRIBE_INTENT_OPTION,
    INTENT_ARG,
    NATIVE_INTENT_TOOL_NAMES,
    inject_intent_param,
    is_intent_eligible_tool_name,
    is_intent_label_property,
)
from intent_ui.core.capabilities.programmatic import (
    ALLOWED_CALLERS_OPTION,
    CODE_EXECUTION_CALLER,
    DIRECT_CALLER,
    PTC_RUNNER_TOOL_NAMES,
)
from intent_ui.core.capabilities.selection import (
    TOOL_SELECTION_WILDCARD,
    is_code_only,
    normalize_action_tool_id,
)
from intent_ui.core.pauses import ASK_USER_QUESTION_NAME, REQUIRE_APPROVAL_OPTION, changes_workspace

__all__ = [
    "CAPABILITY_OPTIONS",
    "OPTION_CAPABILITIES",
    "BuilderTool",
    "Ineligible",
    "SourceState",
    "ToolKind",
    "describe_all",
    "effective_definition",
    "intent_ineligibility",
    "option_default",
    "option_eligible",
    "option_keys",
    "option_on",
    "set_option",
    "set_workspace_approval",
    "source_state",
    "visible_options",
    "workspace_approval",
]

ToolKind = Literal["native", "mcp", "action"]
Ineligible = Literal["code_only", "own_intent_param", "not_object", "excluded"]
"""Why a tool cannot carry an intent (keys of the tooltip texts)."""

CAPABILITY_OPTIONS: Mapping[str, str] = {
    "tool_intents": DESCRIBE_INTENT_OPTION,
    "run_in_background": RUN_IN_BACKGROUND_OPTION,
    "deferred_tools": DEFER_LOADING_OPTION,
    "programmatic_tools": ALLOWED_CALLERS_OPTION,
}
"""Admin capability -> the `tool_options` key it gates, in display order."""

OPTION_CAPABILITIES: Mapping[str, str] = {o: c for c, o in CAPABILITY_OPTIONS.items()}

CODE_ONLY_CALLERS: tuple[str, ...] = (CODE_EXECUTION_CALLER,)
"""What the programmatic toggle writes when set: callable only from code."""

_MARKER_KEYS: Mapping[str, str] = {
    DESCRIBE_INTENT_OPTION: INTENT_ARG,
    RUN_IN_BACKGROUND_OPTION: RUN_IN_BACKGROUND_ARG,
    DEFER_LOADING_OPTION: DEFER_LOADING_OPTION,
}
"""Definition-level flags a tool may carry itself (e.g. native tools' `"intent": True`)."""


@dataclass(frozen=True, slots=True)
class BuilderTool:
    """A tool as the builder lists it.

    `source`: where the tool comes from: the native tools (`"native"`), the MCP server's
    name, or an action's domain.
    `definition`: the definition before the capability pipeline.
    `family`: what a goal delegates to for this tool (`core.goals.tool_family`; empty
    means the tool id).
    """

    tool_id: str
    name: str
    kind: ToolKind
    source: str
    definition: Mapping[str, Any]
    family: str = ""


def visible_options(capabilities: Iterable[str]) -> tuple[str, ...]:
    """The options whose capability the admin configuration enables, in display order."""
    enabled = frozenset(capabilities)
    return tuple(option for cap, option in CAPABILITY_OPTIONS.items() if cap in enabled)


# --- reading ---------------------------------------------------------------------------


def option_keys(tool: BuilderTool, tool_options: Mapping[str, Any]) -> tuple[str, ...]:
    """The stored ids that speak for this tool: its own id first, then (actions only) any
    other spelling of the same encoded domain."""
    if tool.kind != "action":
        return (tool.tool_id,)
    wanted = normalize_action_tool_id(tool.tool_id)
    aliases = [
        key
        for key in tool_options
        if key != tool.tool_id and normalize_action_tool_id(key) == wanted
    ]
    return (tool.tool_id, *sorted(aliases))


_MISSING = object()


def _explicit(tool: BuilderTool, tool_options: Mapping[str, Any], option: str) -> Any:
    for key in option_keys(tool, tool_options):
        entry = tool_options.get(key)
        if isinstance(entry, Mapping) and option in entry:
            value = entry[option]
            if option == ALLOWED_CALLERS_OPTION or isinstance(value, bool):
                return value
    return _MISSING


def _is_code_only_callers(value: object) -> bool:
    return isinstance(value, list | tuple) and bool(value) and DIRECT_CALLER not in value


def option_default(
    tool: BuilderTool, option: str, tool_options: Mapping[str, Any] | None = None
) -> bool:
    """The value an option has when no entry for this tool speaks.

    The tool's own flag first (native tools carry `"intent": True`), then the `"*"`
    wildcard, then the family's defaults: native tools describe their intent, the
    native code runners run in the background, nothing is deferred, and a tool is
    callable only from code when its definition says so.
    """
    definition = tool.definition
    if option == ALLOWED_CALLERS_OPTION:
        return is_code_only(definition)
    if option == REQUIRE_APPROVAL_OPTION:
        # The agent's default speaks only for the tools that change the workspace.
        return changes_workspace(definition) and workspace_approval(tool_options or {})
    marker = definition.get(_MARKER_KEYS.get(option, ""), None)
    if isinstance(marker, bool):
        return marker
    wildcard = (tool_options or {}).get(TOOL_SELECTION_WILDCARD)
    if isinstance(wildcard, Mapping) and isinstance(wildcard.get(option), bool):
        return bool(wildcard[option])
    if option == DESCRIBE_INTENT_OPTION:
        return tool.kind == "native" and (
            tool.name in NATIVE_INTENT_TOOL_NAMES or _declares_intent(definition)
        )
    if option == RUN_IN_BACKGROUND_OPTION:
        return tool.kind == "native" and tool.name in NATIVE_BACKGROUND_TOOL_NAMES
    return False


def option_on(tool: BuilderTool, tool_options: Mapping[str, Any], option: str) -> bool:
    """Whether the toggle shows pressed: the stored value, else the default."""
    value = _explicit(tool, tool_options, option)
    if value is _MISSING:
        return option_default(tool, option, tool_options)
    if option == ALLOWED_CALLERS_OPTION:
        return _is_code_only_callers(value)
    return bool(value)


def effective_definition(
    tool: BuilderTool, tool_options: Mapping[str, Any], capabilities: Iterable[str]
) -> Mapping[str, Any]:
    """The definition with the stored `allowed_callers` applied (when that capability is on)."""
    if "programmatic_tools" not in frozenset(capabilities):
        return tool.definition
    value = _explicit(tool, tool_options, ALLOWED_CALLERS_OPTION)
    if value is _MISSING or not isinstance(value, list | tuple) or not value:
        return tool.definition
    return {**tool.definition, "allowed_callers": list(value)}


def _declares_intent(definition: Mapping[str, Any]) -> bool:
    """Whether the schema already has the intent property (a native tool's `with_intent`)."""
    params = definition.get("parameters")
    props = params.get("properties") if isinstance(params, Mapping) else None
    return isinstance(props, Mapping) and is_intent_label_property(props.get(INTENT_ARG))


def intent_ineligibility(
    tool: BuilderTool, tool_options: Mapping[str, Any], capabilities: Iterable[str]
) -> Ineligible | None:
    """Why this tool cannot carry an intent as configured, or None when it can."""
    definition = effective_definition(tool, tool_options, capabilities)
    if not is_intent_eligible_tool_name(tool.name):
        return "excluded"
    if is_code_only(definition):
        return "code_only"
    if _declares_intent(definition):
        return None
    if inject_intent_param(definition) is not definition:
        return None
    params = definition.get("parameters")
    props = params.get("properties") if isinstance(params, Mapping) else None
    if isinstance(props, Mapping) and INTENT_ARG in props:
        return "own_intent_param"
    return "not_object"


def option_eligible(
    tool: BuilderTool, tool_options: Mapping[str, Any], capabilities: Iterable[str], option: str
) -> bool:
    """Whether the option's toggle is enabled for this tool."""
    if option == DESCRIBE_INTENT_OPTION:
        return intent_ineligibility(tool, tool_options, capabilities) is None
    if option == RUN_IN_BACKGROUND_OPTION:
        definition = effective_definition(tool, tool_options, capabilities)
        return is_background_eligible_tool_name(tool.name) and not is_code_only(definition)
    if option == DEFER_LOADING_OPTION:
        return is_defer_eligible_tool_name(tool.name)
    if option == ALLOWED_CALLERS_OPTION:
        return tool.name not in PTC_RUNNER_TOOL_NAMES
    if option == REQUIRE_APPROVAL_OPTION:
        definition = effective_definition(tool, tool_options, capabilities)
        return tool.name != ASK_USER_QUESTION_NAME and not is_code_only(definition)
    return False


# --- writing ---------------------------------------------------------------------------


def _without(entry: Mapping[str, Any], option: str) -> dict[str, Any]:
    return {key: value for key, value in entry.items() if key != option}


def set_option(
    tool_options: Mapping[str, Any], tool: BuilderTool, option: str, on: bool
) -> dict[str, Any]:
    """A NEW `tool_options` with the toggle set (`on`) or cleared.

    Set writes `True` (`allowed_callers`: `["code_execution"]`) under the tool's own id;
    clear removes the key, or writes the explicit opposite when the tool's default is ON.
    Other spellings of an action's id lose the key, so no stale alias outvotes the write.
    Entries left empty are dropped; sibling keys and other tools' entries are kept as is.
    """
    result: dict[str, Any] = dict(tool_options)
    for key in option_keys(tool, tool_options):
        entry = result.get(key)
        if not isinstance(entry, Mapping) or option not in entry:
            continue
        remaining = _without(entry, option)
        if remaining:
            result[key] = remaining
        else:
            del result[key]
    default = option_default(tool, option, tool_options)
    if on:
        value: Any = list(CODE_ONLY_CALLERS) if option == ALLOWED_CALLERS_OPTION else True
    elif default:
        value = [DIRECT_CALLER] if option == ALLOWED_CALLERS_OPTION else False
    else:
        return result
    entry = result.get(tool.tool_id)
    base = entry if isinstance(entry, Mapping) else {}
    result[tool.tool_id] = {**base, option: value}
    return result


def workspace_approval(tool_options: Mapping[str, Any]) -> bool:
    """Whether the agent asks before every tool that changes the workspace (its default)."""
    wildcard = tool_options.get(TOOL_SELECTION_WILDCARD)
    return isinstance(wildcard, Mapping) and wildcard.get(REQUIRE_APPROVAL_OPTION) is True


def set_workspace_approval(tool_options: Mapping[str, Any], on: bool) -> dict[str, Any]:
    """A NEW `tool_options` with the agent's default for workspace-changing tools set or
    cleared (the `"*"` entry's `require_approval`; the entry goes once empty)."""
    result: dict[str, Any] = dict(tool_options)
    entry = result.get(TOOL_SELECTION_WILDCARD)
    rest = _without(entry, REQUIRE_APPROVAL_OPTION) if isinstance(entry, Mapping) else {}
    if on:
        result[TOOL_SELECTION_WILDCARD] = {**rest, REQUIRE_APPROVAL_OPTION: True}
    elif rest:
        result[TOOL_SELECTION_WILDCARD] = rest
    else:
        result.pop(TOOL_SELECTION_WILDCARD, None)
    return result


@dataclass(frozen=True, slots=True)
class SourceState:
    """A source's "Describe all" state: how many tools can describe, and how many do."""

    eligible: int
    on: int

    @property
    def disabled(self) -> bool:
        return self.eligible == 0

    @property
    def all_on(self) -> bool:
        return self.eligible > 0 and self.on == self.eligible


def _eligible(
    tools: Sequence[BuilderTool], tool_options: Mapping[str, Any], capabilities: Iterable[str]
) -> list[BuilderTool]:
    caps = frozenset(capabilities)
    return [t for t in tools if intent_ineligibility(t, tool_options, caps) is None]


def source_state(
    tools: Sequence[BuilderTool], tool_options: Mapping[str, Any], capabilities: Iterable[str]
) -> SourceState:
    """Count the source's eligible tools and those that describe their intent."""
    eligible = _eligible(tools, tool_options, capabilities)
    on = sum(1 for t in eligible if option_on(t, tool_options, DESCRIBE_INTENT_OPTION))
    return SourceState(eligible=len(eligible), on=on)


def describe_all(
    tool_options: Mapping[str, Any], tools: Sequence[BuilderTool], capabilities: Iterable[str]
) -> Mapping[str, Any]:
    """ "Describe all tools" for one source: set every eligible tool unless all are set, in
    which case clear them all. Ineligible tools keep their stored state. With no eligible
    tool, `tool_options` comes back as the very same object."""
    caps = frozenset(capabilities)
    eligible = _eligible(tools, tool_options, caps)
    if not eligible:
        return tool_options
    target = not source_state(tools, tool_options, caps).all_on
    result: Mapping[str, Any] = tool_options
    for tool in eligible:
        result = set_option(result, tool, DESCRIBE_INTENT_OPTION, target)
    return result
