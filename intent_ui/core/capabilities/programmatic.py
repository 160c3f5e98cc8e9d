"""Programmatic tool calling (PTC): the `allowed_callers` capability.

A tool's `allowed_callers` says who may call it: the model directly (`"direct"`), code
running in the sandbox through `run_tools_with_code` / `run_tools_with_bash`
(`"code_execution"`), or both. Like deferral, the mechanism is metadata on the
definition, not an injected schema parameter.

The family's shape (docs/capabilities.md), mirrored from `intent.py`: an admin
capability (`programmatic_tools`), a per-tool option
(`tool_options[tool_id]["allowed_callers"]`, a list rather than a boolean), and these
interactions with intent labels:

- a code-only tool is never labelled (no card renders for it);
- a dual-caller tool is labelled but never requires the label, because the sandbox
  bridge builds call signatures from the schema and model-written code would
  otherwise have to pass a label nobody sees;
- inner calls are unlabelled: the label is stripped from the schemas the bridge
  advertises and from the arguments inner calls carry, before any tool body runs.

The caller predicates live in `selection.py` (shared with `intent.py`) and are
re-exported here.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from intent_ui.core.capabilities._definitions import Tool, apply_per_tool, tool_name
from intent_ui.core.capabilities.intent import strip_intent, strip_intent_from_tool_definitions
from intent_ui.core.capabilities.intent_schema import make_intent_optional
from intent_ui.core.capabilities.selection import (
    CODE_EXECUTION_CALLER,
    DIRECT_CALLER,
    KNOWN_CALLERS,
    TOOL_SELECTION_WILDCARD,
    ToolOptions,
    is_code_callable,
    is_code_only,
    is_direct_only,
    tool_callers,
)

__all__ = [
    "ALLOWED_CALLERS_OPTION",
    "CODE_EXECUTION_CALLER",
    "DIRECT_CALLER",
    "PROGRAMMATIC_TOOLS_CAPABILITY",
    "PTC_RUNNER_TOOL_NAMES",
    "AllowedCallersResult",
    "apply_allowed_callers",
    "code_bridge_definitions",
    "is_code_callable",
    "is_code_only",
    "is_direct_only",
    "resolve_allowed_callers",
    "strip_intent_for_code_bridge",
    "tool_callers",
]

logger = logging.getLogger(__name__)

PROGRAMMATIC_TOOLS_CAPABILITY = "programmatic_tools"
"""Admin capability gating the feature. Mirrors `TOOL_INTENTS_CAPABILITY`."""

ALLOWED_CALLERS_OPTION = "allowed_callers"
"""Per-tool `tool_options` key (a list of callers). Mirrors `DESCRIBE_INTENT_OPTION`."""

PTC_RUNNER_TOOL_NAMES: frozenset[str] = frozenset({"run_tools_with_code", "run_tools_with_bash"})
"""The sandbox runners. They carry their own label, describing the whole program;
they are never callable from code themselves."""


def _valid_callers(value: object) -> tuple[str, ...] | None:
    if isinstance(value, str) or not isinstance(value, Sequence):
        return None
    if not value or not all(isinstance(item, str) and item in KNOWN_CALLERS for item in value):
        return None
    return tuple(dict.fromkeys(value))  # de-duplicated, order kept


def resolve_allowed_callers(
    tool_options: ToolOptions | None, tool_id: str
) -> tuple[str, ...] | None:
    """The `allowed_callers` configured for a tool id (explicit entry, then `"*"`).

    None when nothing speaks. A malformed list (empty, not a list, an unknown caller)
    is ignored with a warning naming the tool. Mirrors `resolve_tool_option`, with a
    list where the other capabilities have a boolean.
    """
    if not isinstance(tool_options, Mapping):
        return None
    # Action id spellings are folded by the caller (`selection.canonical_tool_options`),
    # which knows each tool's kind; ids are never aliased by their shape here.
    for key in [tool_id, TOOL_SELECTION_WILDCARD]:
        entry = tool_options.get(key)
        if not isinstance(entry, Mapping) or ALLOWED_CALLERS_OPTION not in entry:
            continue
        callers = _valid_callers(entry[ALLOWED_CALLERS_OPTION])
        if callers is None:
            logger.warning(
                "Ignoring allowed_callers %r for %r: expected a non-empty list of %s.",
                entry[ALLOWED_CALLERS_OPTION],
                tool_id,
                sorted(KNOWN_CALLERS),
            )
            continue
        return callers
    return None


@dataclass(frozen=True, slots=True)
class AllowedCallersResult:
    """What `apply_allowed_callers` produced. Mirrors `IntentLabelsResult`.

    `code_callable_names`: tools the sandbox bridge may call.
    """

    definitions: Sequence[Tool]
    registry: Mapping[str, Tool] | None
    code_callable_names: frozenset[str]


def _with_callers(tool: Tool, callers: tuple[str, ...] | None) -> Tool:
    if callers is None or callers == (DIRECT_CALLER,):
        if "allowed_callers" not in tool:
            return tool
        return {key: value for key, value in tool.items() if key != "allowed_callers"}
    current = tool.get("allowed_callers")
    if isinstance(current, Sequence) and tuple(current) == callers:
        return tool
    return {**tool, "allowed_callers": list(callers)}


def _callers_one(
    tool: Tool, tool_options: ToolOptions | None, *, enabled: bool, tool_id: str
) -> Tool:
    if not isinstance(tool, Mapping):
        return tool
    if tool_name(tool) in PTC_RUNNER_TOOL_NAMES:
        return tool
    if not enabled:
        # Capability off: nothing is callable from code; a code-only tool becomes direct
        # rather than unreachable.
        if not is_code_callable(tool):
            return tool
        kept = tuple(c for c in tool_callers(tool) if c != CODE_EXECUTION_CALLER)
        return _with_callers(tool, kept or None)
    configured = resolve_allowed_callers(tool_options, tool_id)
    updated = tool if configured is None else _with_callers(tool, configured)
    return make_intent_optional(updated) if is_code_callable(updated) else updated


def apply_allowed_callers(
    definitions: Sequence[Tool],
    tool_options: ToolOptions | None,
    *,
    enabled: bool = True,
    registry: Mapping[str, Tool] | None = None,
    tool_ids: Mapping[str, str] | None = None,
) -> AllowedCallersResult:
    """Set each tool's `allowed_callers` from `tool_options`; relax the label for code callers.

    A configured `["direct"]` drops the key (direct is the default). Code-callable
    tools lose `intent` from `required` (`make_intent_optional`). With `enabled=False`
    no tool stays callable from code. The sandbox runners themselves are never
    touched. `registry` gets the same changes. Run it BEFORE `apply_intent_labels`,
    which skips code-only tools. Mirrors `apply_intent_labels`.
    """

    def callers(tool: Tool, tool_id: str) -> Tool:
        return _callers_one(tool, tool_options, enabled=enabled, tool_id=tool_id)

    out_defs, next_registry = apply_per_tool(
        definitions,
        registry,
        callers,
        tool_ids=tool_ids,
        fields=("parameters", "allowed_callers"),
    )
    callable_names = {
        tool_name(tool) for tool in out_defs if isinstance(tool, Mapping) and is_code_callable(tool)
    }
    return AllowedCallersResult(out_defs, next_registry, frozenset(callable_names))


def code_bridge_definitions(definitions: Sequence[Tool]) -> Sequence[Tool]:
    """The definitions the sandbox bridge may expose, without intent labels.

    Only code-callable tools; their labels removed (marker-guarded, so a business
    `intent` parameter survives): an inner call renders no card, so a label would be
    token cost for the code-writing model. The sandbox is one card, labelled by the
    runner's own intent.
    """
    callable_tools = [
        tool for tool in definitions if isinstance(tool, Mapping) and is_code_callable(tool)
    ]
    return strip_intent_from_tool_definitions(callable_tools)


def strip_intent_for_code_bridge(args: object, *, label_bearing: bool = True) -> object:
    """An inner call's args as the tool body must receive them: without `intent`.

    A stray label written by model code never reaches a tool body through the
    programmatic path. `label_bearing=False` (the tool's own business `intent`)
    returns the args untouched. Same-object and JSON-string rules of `strip_intent`.
    """
    return strip_intent(args) if label_bearing else args
