"""Tool intent labels: the `describe_intent` capability.

Every opted-in tool call carries a model-written `intent`, the first property of the
tool's schema, rendered as the call's live label; when the call settles, a
tool-authored outcome edits it in place. This module decides which tools carry the
label and injects, moves or strips it; the property itself (and `with_intent` for
native schemas) is in `intent_schema.py`, the settled label in `outcome.py`, and the
`{{toolNturnM}}` substitution that never touches a label in `output_references.py`.
Their public names are re-exported here: this module is the capability's contract.

The capability is the sibling of `background.py` (mirrored function for function)
and follows the family's shape (docs/capabilities.md): an admin capability
(`tool_intents`), a per-tool option (`tool_options[tool_id]["describe_intent"]`,
resolved by `selection.py`), non-mutating schema injection with registry parity, and
self-spawn stripping. Native tools declare the label themselves with `with_intent`
(required) and default ON; third-party tools get it host-injected (optional) once
opted in.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

# The same shared helpers as background.py: the two injecting siblings mirror each other.
from intent_ui.core.capabilities._definitions import (
    LC_TRANSFER_TO_PREFIX,
    Tool,
    apply_per_tool,
    carries,
    injection_problem,
    injection_refusal,
    is_eligible_tool_name,
    names_carrying,
    rewrite_definitions,
    rewrite_registry,
    tool_name,
)
from intent_ui.core.capabilities.background import CHECK_BACKGROUND_TASK_NAME
from intent_ui.core.capabilities.intent_schema import (
    INTENT_ARG,
    INTENT_DESCRIPTION,
    INTENT_LABEL,
    INTENT_LABEL_MARKER,
    INTENT_PROPERTY,
    is_intent_label_property,
    make_intent_optional,
    place_intent,
    with_intent,
    with_intent_model,
    without_intent,
)
from intent_ui.core.capabilities.outcome import apply_outcome
from intent_ui.core.capabilities.selection import (
    ToolOptions,
    arg_value,
    is_code_callable,
    is_code_only,
    is_direct_only,
    resolve_tool_option,
    synthesize_selection_tool_options,
    without_arg,
)

__all__ = [
    "DESCRIBE_INTENT_OPTION",
    "EXCLUDED_INTENT_TOOL_NAMES",
    "INTENT_ARG",
    "INTENT_DESCRIPTION",
    "INTENT_LABEL_MARKER",
    "INTENT_PROPERTY",
    "NATIVE_INTENT_TOOL_NAMES",
    "TOOL_INTENTS_CAPABILITY",
    "IntentLabelsResult",
    "apply_intent_labels",
    "apply_outcome",
    "can_inject_intent_param",
    "inject_intent_param",
    "intent_refusal",
    "is_intent_eligible_tool",
    "is_intent_eligible_tool_name",
    "is_intent_label_property",
    "read_intent",
    "remove_intent_param",
    "strip_intent",
    "strip_intent_from_tool_definitions",
    "strip_intent_from_tool_registry",
    "synthesize_intent_tool_options",
    "with_intent",
    "with_intent_model",
    "without_intent",
]

logger = logging.getLogger(__name__)

TOOL_INTENTS_CAPABILITY = "tool_intents"
"""Admin capability gating the whole feature (the kill switch). Mirrors
`RUN_IN_BACKGROUND_CAPABILITY`."""

DESCRIBE_INTENT_OPTION = "describe_intent"
"""Per-tool `tool_options` key. Mirrors `RUN_IN_BACKGROUND_OPTION`."""

EXCLUDED_INTENT_TOOL_NAMES: frozenset[str] = frozenset({CHECK_BACKGROUND_TASK_NAME})
"""Never labelled: the background poll tool is host machinery. Intent labels are
inert, so unlike background's correctness-driven list only host machinery is excluded
by name; handoff tools are excluded by prefix and code-only tools by their
`allowed_callers` (no card renders for them, so a label would be pure token cost)."""

NATIVE_INTENT_TOOL_NAMES: frozenset[str] = frozenset(
    {
        # The coding suite, the same names in every engine.
        "read_file",
        "write_file",
        "edit_file",
        "delete_file",
        "grep_search",
        "glob_search",
        "list_directory",
        "compile_check",
        "bash_tool",
        "execute_code",
        "run_tools_with_code",
        "run_tools_with_bash",
        "subagent",
        "skill",
        "tool_search",
        "web_search",
        # Host tools.
        "create_file",
        "set_memory",
        "delete_memory",
        "ask_user_question",
        "file_search",
    }
)
"""Tools that default INTO intent labels while the capability is on; an explicit
`describe_intent: False` opts one out. Mirrors `NATIVE_BACKGROUND_TOOL_NAMES`."""


# --- eligibility ---------------------------------------------------------------------


def is_intent_eligible_tool_name(name: str) -> bool:
    """Whether a tool of this name may carry a label.

    Mirrors `is_background_eligible_tool_name`.
    """
    return is_eligible_tool_name(name, EXCLUDED_INTENT_TOOL_NAMES)


def is_intent_eligible_tool(tool: Tool) -> bool:
    """Name eligibility plus `allowed_callers`: a code-only tool never renders a card."""
    name = tool.get("name")
    return isinstance(name, str) and is_intent_eligible_tool_name(name) and not is_code_only(tool)


def intent_refusal(tool: Tool) -> str | None:
    """Why `tool` can never carry an intent label, in words for a log line; None when it
    can (a tool that already carries one can)."""
    name = tool.get("name") if isinstance(tool, Mapping) else None
    if isinstance(name, str) and name.startswith(LC_TRANSFER_TO_PREFIX):
        return "it is a handoff tool, which never carries one"
    if isinstance(name, str) and not is_intent_eligible_tool_name(name):
        return "it is host machinery, which never carries one"
    return injection_problem(tool, INTENT_LABEL)


# --- arguments -----------------------------------------------------------------------


def read_intent(args: object) -> str | None:
    """The model-authored intent, trimmed; None when absent, blank, not a string or malformed.

    Mirrors `is_background_requested`. Whether the value is a label at all is the
    caller's gate: the server-side set of label-bearing tool names
    (`IntentLabelsResult.label_tool_names`), never the mere presence of an `intent`
    key, which a tool's own business parameter may also be called.
    """
    value = arg_value(args, INTENT_ARG)
    if not isinstance(value, str):
        return None
    return value.strip() or None


def strip_intent(args: object) -> object:
    """The args without the `intent` key, so a tool body never sees a label it did not declare.

    A JSON string is parsed and returned as a dict. Args without the key (or
    malformed args) come back as the very same object. This strips any `intent`
    key: the run loop calls it only for label-bearing tools, so a business
    `intent` parameter of a tool that carries no label is never passed here.
    Mirrors `strip_run_in_background_arg`.
    """
    return without_arg(args, INTENT_ARG)


# --- tool definitions ----------------------------------------------------------------


def can_inject_intent_param(tool: Tool) -> bool:
    """Whether the host may inject the label into this tool; logs a warning naming it if not.

    False for non-object schemas (rewriting a string-input tool breaks its contract),
    tools that already declare `intent` (a label or their own business parameter)
    and code-only tools. A schema-less tool is injectable. Mirrors
    `can_inject_run_in_background_param`.
    """
    problem = injection_refusal(tool, INTENT_LABEL)
    if problem is None:
        return True
    logger.warning("Skipping describe_intent for %r: %s.", tool_name(tool), problem)
    return False


def inject_intent_param(tool: Tool, *, required: bool = False) -> Tool:
    """A NEW tool definition with the intent label FIRST in its properties.

    Never mutates (built-in definitions may be frozen, MCP ones shared). Idempotent:
    the very same object comes back when a label is already first, as for `edit_file`,
    which exists both as a coding-suite tool with its own label and as a host tool the
    host injects into (a second label would push `intent` out of first place); a
    label elsewhere is moved first. `required` is honoured only for direct-only tools:
    a dual-caller tool never requires it (see `make_intent_optional`). Tools that
    cannot carry it (see `can_inject_intent_param`) come back unchanged.
    Mirrors `inject_run_in_background_param`, which APPENDS instead.
    """
    if injection_problem(tool, INTENT_LABEL) is not None:
        return tool
    params = tool.get("parameters")
    placed = place_intent(params, required=required and is_direct_only(tool))
    if placed is params:
        return tool
    # Providers expect an object schema; an untyped one is made explicit.
    return {**tool, "parameters": {"type": "object", **placed}}


def remove_intent_param(tool: Tool) -> Tool:
    """The tool without its intent LABEL (marker-guarded); the same object when it has none.

    Mirrors `remove_run_in_background_param`.
    """
    if not carries(tool, INTENT_LABEL):
        return tool
    return {**tool, "parameters": without_intent(tool["parameters"])}


def strip_intent_from_tool_definitions(
    definitions: Sequence[Tool], tool_names: Iterable[str] | None = None
) -> Sequence[Tool]:
    """Remove intent labels (marker-guarded) from a definition list.

    For a self-spawned subagent's inherited tools (the child renders no cards of the
    parent's and cannot honour a host-injected label), and for the schemas the
    code-sandbox bridge advertises. `tool_names` limits it to those tools (e.g. the
    host-injected set); None means every label. No-op returns the same list.
    Mirrors `strip_background_from_tool_definitions`.
    """
    only = None if tool_names is None else frozenset(tool_names)
    return rewrite_definitions(definitions, remove_intent_param, only=only)


def strip_intent_from_tool_registry(
    registry: Mapping[str, Tool] | None, tool_names: Iterable[str] | None = None
) -> Mapping[str, Tool] | None:
    """Registry counterpart of `strip_intent_from_tool_definitions`.

    Returns a NEW mapping (the parent's registry is shared) so a self-spawned child
    using tool search cannot rediscover a label schema; the same object when nothing
    changes. Mirrors `strip_background_from_tool_registry`.
    """
    only = None if tool_names is None else frozenset(tool_names)
    return rewrite_registry(registry, remove_intent_param, only=only)


@dataclass(frozen=True, slots=True)
class IntentLabelsResult:
    """What `apply_intent_labels` produced. Mirrors `BackgroundToolCallsResult`.

    `injected_tool_names`: tools the host injected (third-party, optional label).
    `label_tool_names`: every tool whose outgoing definition (or registry entry)
    carries a label. This server-side set is the gate the UI renders labels by, and
    the only one: a tool whose own parameter is called `intent` is not in it.
    """

    definitions: Sequence[Tool]
    registry: Mapping[str, Tool] | None
    injected_tool_names: frozenset[str]
    label_tool_names: frozenset[str]


def _label_one(
    tool: Tool,
    tool_options: ToolOptions | None,
    *,
    enabled: bool,
    tool_id: str,
    native_tool_names: frozenset[str],
    default_native: bool,
) -> tuple[Tool, bool]:
    """One tool's outgoing definition, and whether the host injected its label.

    Mirrors `background._background_one`.
    """
    if not isinstance(tool, Mapping):
        return tool, False
    if not enabled:
        return remove_intent_param(tool), False
    if not is_intent_eligible_tool(tool):
        # A tool that never renders a card: a label is pure token cost. Naming it in a
        # selection had no effect, which the one who named it should learn.
        named = resolve_tool_option(tool_options, DESCRIBE_INTENT_OPTION, tool_id)
        if named is not None and named.value and named.source == tool_id:
            logger.warning(
                "describe_intent is on for %r, but %s: it gets no intent.",
                tool_id,
                intent_refusal(tool),
            )
        return remove_intent_param(tool), False
    resolved = resolve_tool_option(
        tool_options, DESCRIBE_INTENT_OPTION, tool_id, markers=(tool.get(INTENT_ARG),)
    )
    self_describing = carries(tool, INTENT_LABEL)
    native = self_describing or tool_name(tool) in native_tool_names
    opted_in = resolved.value if resolved is not None else default_native and native
    if not opted_in:
        return remove_intent_param(tool), False
    if self_describing:
        placed = inject_intent_param(tool)
        return (make_intent_optional(placed) if is_code_callable(placed) else placed), False
    if not can_inject_intent_param(tool):
        return tool, False
    return inject_intent_param(tool), True


def apply_intent_labels(
    definitions: Sequence[Tool],
    tool_options: ToolOptions | None,
    *,
    enabled: bool = True,
    registry: Mapping[str, Tool] | None = None,
    tool_ids: Mapping[str, str] | None = None,
    native_tool_names: Iterable[str] = NATIVE_INTENT_TOOL_NAMES,
    default_native: bool = True,
) -> IntentLabelsResult:
    """Give every opted-in, eligible tool its intent label; strip it from the rest.

    - `enabled=False` (capability off, the kill switch): every label is removed from
      every tool, native ones included; a business `intent` survives.
    - Opt-in resolves per tool via `selection.resolve_tool_option` under the tool's
      id (`tool_ids[name]`, else its name), with the definition's own `"intent"` flag
      as capability marker; when nothing speaks, native tools (named in
      `native_tool_names` or already carrying a label) default to `default_native`.
    - Third-party tools get an optional label injected; native labels are kept (moved
      first if needed) and removed only on an explicit opt-out.
    - Never for check_background_task, `lc_transfer_to_*` or code-only tools.

    `registry` (name -> definition, what tool search discovers deferred tools from)
    gets the same changes: entries shadowing a definition take its parameters, the
    others go through the same decision, so a tool discovered later arrives labelled.
    Unchanged inputs come back as the very same objects. Mirrors
    `apply_background_tool_calls`.
    """
    natives = frozenset(native_tool_names)
    injected: set[str] = set()

    def label(tool: Tool, tool_id: str) -> Tool:
        result, was_injected = _label_one(
            tool,
            tool_options,
            enabled=enabled,
            tool_id=tool_id,
            native_tool_names=natives,
            default_native=default_native,
        )
        if was_injected:
            injected.add(tool_name(tool))
        return result

    out_defs, next_registry = apply_per_tool(definitions, registry, label, tool_ids=tool_ids)
    labelled = names_carrying(out_defs, next_registry, INTENT_LABEL)
    return IntentLabelsResult(out_defs, next_registry, frozenset(injected), labelled)


def synthesize_intent_tool_options(
    describe_intent: object, tool_names: Iterable[str] = ()
) -> dict[str, dict[str, bool]] | None:
    """`tool_options` for model specs and ephemeral agents (which carry none of their own).

    True: every eligible tool; a list: only those tool ids; False or []: none (the
    ids in `tool_names` get an explicit False, which also outranks native markers);
    None: no policy. Mirrors `synthesize_background_tool_options`.
    """
    return synthesize_selection_tool_options(DESCRIBE_INTENT_OPTION, describe_intent, tool_names)
