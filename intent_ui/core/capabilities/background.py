"""Background tool calls: the `run_in_background` capability.

Lets the model dispatch an eligible call detached: the host returns a handle at once
and the model collects the result later with `check_background_task`. This module is
the pure half: the schema parameter, its injection, the argument helpers and the poll
tool's definition; the run loop does the dispatching.

The capability follows the family's shape (docs/capabilities.md) and is mirrored
function for function by `intent.py`: an admin capability (`run_in_background`), a
per-tool option (`tool_options[tool_id]["run_in_background"]`, resolved by
`selection.py`), non-mutating injection with registry parity, and self-spawn
stripping. One deliberate difference: the boolean is APPENDED as the LAST property,
so whichever of the two capabilities runs first, `intent` stays the first key.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

# The same shared helpers as intent.py: the two injecting siblings mirror each other.
from intent_ui.core.capabilities._definitions import (
    InjectedParam,
    Tool,
    apply_per_tool,
    carries,
    injection_problem,
    injection_refusal,
    is_eligible_tool_name,
    names_carrying,
    rewrite_definitions,
    rewrite_registry,
    schema_properties,
    tool_name,
    without_property,
)
from intent_ui.core.capabilities.selection import (
    ToolOptions,
    arg_value,
    is_code_only,
    resolve_tool_option,
    synthesize_selection_tool_options,
    without_arg,
)

logger = logging.getLogger(__name__)

RUN_IN_BACKGROUND_CAPABILITY = "run_in_background"
"""Admin capability gating the feature. Mirrors `TOOL_INTENTS_CAPABILITY`."""

RUN_IN_BACKGROUND_OPTION = "run_in_background"
"""Per-tool `tool_options` key. Mirrors `DESCRIBE_INTENT_OPTION`."""

RUN_IN_BACKGROUND_ARG = "run_in_background"
"""Argument the model sets to dispatch a call in the background. Mirrors `INTENT_ARG`."""

RUN_IN_BACKGROUND_DESCRIPTION = (
    "Set true to start this call in the background: it returns a background_task_id "
    "right away and you keep working. Collect the result later with "
    "check_background_task. Use it for slow calls whose result you do not need yet."
)
"""Also the discriminator for removal paths, as `INTENT_LABEL_MARKER` is for intent."""

RUN_IN_BACKGROUND_PROPERTY: Mapping[str, str] = MappingProxyType(
    {"type": "boolean", "description": RUN_IN_BACKGROUND_DESCRIPTION}
)
"""Canonical read-only shape. Mirrors `INTENT_PROPERTY`."""

CHECK_BACKGROUND_TASK_NAME = "check_background_task"
"""The poll tool's name; the host intercepts every call of it."""

_POLL_TOOL = frozenset({CHECK_BACKGROUND_TASK_NAME})

NATIVE_BACKGROUND_TOOL_NAMES: frozenset[str] = frozenset({"execute_code", "bash_tool"})
"""Code executions default INTO background dispatch while the capability is on; an
explicit `run_in_background: False` opts one out. Mirrors `NATIVE_INTENT_TOOL_NAMES`."""

EXCLUDED_BACKGROUND_TOOL_NAMES: frozenset[str] = frozenset(
    {
        # Direct/host-special paths, or results the foreground turns into artifacts,
        # citations or files: a detached run would silently drop them.
        "read_file",
        "skill",
        "tool_search",
        "run_tools_with_code",
        "run_tools_with_bash",
        "subagent",
        "create_file",
        "edit_file",
        "set_memory",
        "delete_memory",
        "ask_user_question",
        "web_search",
        "file_search",
        CHECK_BACKGROUND_TASK_NAME,
    }
)
"""Never backgrounded. Mirrors `EXCLUDED_INTENT_TOOL_NAMES`, but longer: backgrounding
changes execution semantics, where an intent label is inert."""

CHECK_BACKGROUND_TASK_DEFINITION: Mapping[str, Any] = MappingProxyType(
    {
        "name": CHECK_BACKGROUND_TASK_NAME,
        "description": (
            "Check on a tool call started with run_in_background: pass its "
            "background_task_id to get its status and, once finished, its result; "
            "omit it to list this conversation's background tasks."
        ),
        "parameters": MappingProxyType(
            {
                "type": "object",
                "properties": MappingProxyType(
                    {
                        "background_task_id": MappingProxyType(
                            {
                                "type": "string",
                                "description": "The id returned when the call was started.",
                            }
                        )
                    }
                ),
            }
        ),
    }
)
"""The poll tool registered once any tool became backgroundable (read-only)."""


def is_background_eligible_tool_name(name: str) -> bool:
    """Whether a tool of this name may run in the background.

    Mirrors `is_intent_eligible_tool_name`.
    """
    return is_eligible_tool_name(name, EXCLUDED_BACKGROUND_TOOL_NAMES)


def is_background_requested(args: object) -> bool:
    """Whether the args ask for background dispatch (exactly `true`). Mirrors `read_intent`."""
    return arg_value(args, RUN_IN_BACKGROUND_ARG) is True


def strip_run_in_background_arg(args: object) -> object:
    """The args without the key, so the tool never sees a parameter it did not declare.

    JSON strings are parsed; args without the key come back as the very same object.
    Mirrors `strip_intent`.
    """
    return without_arg(args, RUN_IN_BACKGROUND_ARG)


def is_run_in_background_property(prop: object) -> bool:
    """Whether a property is the injected one (by its description).

    Mirrors `is_intent_label_property`: a tool's own `run_in_background` parameter
    survives every removal path.
    """
    return (
        isinstance(prop, (dict, Mapping))
        and prop.get("description") == RUN_IN_BACKGROUND_DESCRIPTION
    )


BACKGROUND_FLAG = InjectedParam(
    arg=RUN_IN_BACKGROUND_ARG,
    is_injected=is_run_in_background_property,
    clash="it already declares a run_in_background parameter",
    present="it already declares a run_in_background parameter",
    # Only the direct-path executor intercepts the flag.
    code_only="it is callable only from code",
)
"""The flag as the family's shared helpers see it. Mirrors `INTENT_LABEL`."""


def can_inject_run_in_background_param(tool: Tool) -> bool:
    """Whether the flag can be injected; logs a warning naming the tool if not.

    False for non-object schemas, tools already declaring the key, and code-only
    tools. Mirrors `can_inject_intent_param`.
    """
    problem = injection_refusal(tool, BACKGROUND_FLAG)
    if problem is None:
        return True
    logger.warning("Skipping run_in_background for %r: %s.", tool_name(tool), problem)
    return False


def inject_run_in_background_param(tool: Tool) -> Tool:
    """A NEW definition with the flag APPENDED as the last property (never first).

    Never mutates; the very same object when the property already exists or cannot
    be added. Never required. Mirrors `inject_intent_param`, which prepends.
    """
    if carries(tool, BACKGROUND_FLAG) or injection_problem(tool, BACKGROUND_FLAG) is not None:
        return tool
    params = tool.get("parameters")
    base: Mapping[str, Any] = params if isinstance(params, Mapping) else {}
    appended = {RUN_IN_BACKGROUND_ARG: dict(RUN_IN_BACKGROUND_PROPERTY)}
    properties = {**schema_properties(base), **appended}
    return {**tool, "parameters": {"type": "object", **base, "properties": properties}}


def remove_run_in_background_param(tool: Tool) -> Tool:
    """The definition without the injected flag; the same object when absent.

    Mirrors `remove_intent_param`; the flag is never required, so `required` stays.
    """
    if not carries(tool, BACKGROUND_FLAG):
        return tool
    return {**tool, "parameters": without_property(tool["parameters"], RUN_IN_BACKGROUND_ARG)}


def strip_background_from_tool_definitions(
    definitions: Sequence[Tool], tool_names: Iterable[str] | None = None
) -> Sequence[Tool]:
    """Remove the injected flag and the poll tool from a definition list (self-spawn).

    `tool_names` limits the flag removal to those tools; None means every tool.
    No-op returns the same list. Mirrors `strip_intent_from_tool_definitions`.
    """
    only = None if tool_names is None else frozenset(tool_names)
    return rewrite_definitions(
        definitions, remove_run_in_background_param, only=only, drop=_POLL_TOOL
    )


def strip_background_from_tool_registry(
    registry: Mapping[str, Tool] | None, tool_names: Iterable[str] | None = None
) -> Mapping[str, Tool] | None:
    """Registry counterpart of `strip_background_from_tool_definitions`.

    A NEW mapping without the poll tool and the flag, so a self-spawned child using
    tool search cannot rediscover them; the same object when nothing changes.
    Mirrors `strip_intent_from_tool_registry`.
    """
    only = None if tool_names is None else frozenset(tool_names)
    return rewrite_registry(registry, remove_run_in_background_param, only=only, drop=_POLL_TOOL)


@dataclass(frozen=True, slots=True)
class BackgroundToolCallsResult:
    """What `apply_background_tool_calls` produced. Mirrors `IntentLabelsResult`.

    `background_tool_names`: tools that carry the flag (the run loop intercepts and
    strips it only for these).
    """

    definitions: Sequence[Tool]
    registry: Mapping[str, Tool] | None
    background_tool_names: frozenset[str]


def _background_one(
    tool: Tool,
    tool_options: ToolOptions | None,
    *,
    enabled: bool,
    tool_id: str,
    native_tool_names: frozenset[str],
) -> Tool:
    """One tool's outgoing definition. Mirrors `intent._label_one`."""
    if not isinstance(tool, Mapping):
        return tool
    name = tool_name(tool)
    eligible = is_background_eligible_tool_name(name) and not is_code_only(tool)
    resolved = resolve_tool_option(
        tool_options, RUN_IN_BACKGROUND_OPTION, tool_id, markers=(tool.get(RUN_IN_BACKGROUND_ARG),)
    )
    opted_in = resolved.value if resolved is not None else name in native_tool_names
    if not enabled or not eligible or not opted_in:
        return remove_run_in_background_param(tool)
    if carries(tool, BACKGROUND_FLAG) or not can_inject_run_in_background_param(tool):
        return tool
    return inject_run_in_background_param(tool)


def apply_background_tool_calls(
    definitions: Sequence[Tool],
    tool_options: ToolOptions | None,
    *,
    enabled: bool = True,
    registry: Mapping[str, Tool] | None = None,
    tool_ids: Mapping[str, str] | None = None,
    native_tool_names: Iterable[str] = NATIVE_BACKGROUND_TOOL_NAMES,
) -> BackgroundToolCallsResult:
    """Append the flag to every opted-in, eligible tool and register the poll tool.

    Opt-in resolves per tool like `apply_intent_labels` (explicit id > the definition's
    own `"run_in_background"` flag > `"*"` > native default). `enabled=False` removes
    every injected flag (a tool's own parameter survives). The poll tool is added
    once, when at least one tool is backgroundable, replacing any same-named tool
    (the host intercepts that name). `registry` gets the same changes. Unchanged
    inputs come back as the very same objects. Mirrors `apply_intent_labels`.
    """
    natives = frozenset(native_tool_names)

    def flag(tool: Tool, tool_id: str) -> Tool:
        return _background_one(
            tool, tool_options, enabled=enabled, tool_id=tool_id, native_tool_names=natives
        )

    out_defs, next_registry = apply_per_tool(definitions, registry, flag, tool_ids=tool_ids)
    carrying = names_carrying(out_defs, next_registry, BACKGROUND_FLAG)
    if carrying:
        out_defs, next_registry = register_background_task_tool(out_defs, next_registry)
    return BackgroundToolCallsResult(out_defs, next_registry, carrying)


def register_background_task_tool(
    definitions: Sequence[Tool], registry: Mapping[str, Tool] | None = None
) -> tuple[Sequence[Tool], Mapping[str, Tool] | None]:
    """Add the `check_background_task` poll tool (idempotent; same objects when present).

    A same-named foreign tool is shadowed, with a warning: the host intercepts every
    call of that name, so advertising another schema would mislead the model.
    """
    ours = CHECK_BACKGROUND_TASK_DEFINITION
    present = [tool for tool in definitions if tool_name(tool) == CHECK_BACKGROUND_TASK_NAME]
    defs_ok = len(present) == 1 and present[0] == ours
    registry_entry = None if registry is None else registry.get(CHECK_BACKGROUND_TASK_NAME)
    registry_ok = registry is None or registry_entry == ours
    if defs_ok and registry_ok:
        return definitions, registry
    foreign = [tool for tool in present if tool != ours]
    if registry_entry is not None and registry_entry != ours:
        foreign.append(registry_entry)
    if foreign:
        logger.warning(
            "A tool named %r collides with the background poll tool; the poll tool wins.",
            CHECK_BACKGROUND_TASK_NAME,
        )
    kept = [tool for tool in definitions if tool_name(tool) != CHECK_BACKGROUND_TASK_NAME]
    next_defs = definitions if defs_ok else [*kept, ours]
    next_registry = (
        registry if registry_ok else {**(registry or {}), CHECK_BACKGROUND_TASK_NAME: ours}
    )
    return next_defs, next_registry


def synthesize_background_tool_options(
    run_in_background: object, tool_names: Iterable[str] = ()
) -> dict[str, dict[str, bool]] | None:
    """`tool_options` for model specs and ephemeral agents.

    True: every eligible tool; a list: only those ids; False or []: none (the ids in
    `tool_names`, natives included, get an explicit False); None: no policy, so the
    native code pair keeps its default. Mirrors `synthesize_intent_tool_options`.
    """
    return synthesize_selection_tool_options(
        RUN_IN_BACKGROUND_OPTION, run_in_background, tool_names
    )
