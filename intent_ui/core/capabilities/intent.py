"""Tool intent labels: the `describe_intent` capability (§4, §7.1, §8.1).

An `intent` string is placed as the FIRST property of a tool's schema, so it is the
first key a provider streams in the call's arguments and the model's one-sentence
"what this call is about to do" can render as the call's live label before the rest
of the arguments exist. When the call settles, a tool-authored `outcome` or
`outcome_patch` edits the label in place (`apply_outcome`); absent either, the
intent stays exactly as written — there is deliberately no tense rewrite.

The capability is the sibling of `background.py` (mirrored function for function)
and follows the family's shape: an admin capability (`tool_intents`), a per-tool
option (`tool_options[tool_id]["describe_intent"]`, resolved by `selection.py`),
non-mutating schema injection with registry parity, and self-spawn stripping.
Native tools declare the label themselves with `with_intent` (required) and default
ON; third-party tools get it host-injected (optional) once opted in.

The description's opening words (`INTENT_LABEL_MARKER`) are the only thing telling
the label apart from a tool's own business parameter named `intent`, so every
removal path is marker-guarded. Import the constant; never re-declare the literal.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, cast

from intent_ui.core.capabilities.selection import (
    ToolOptions,
    coerce_args_object,
    is_code_callable,
    is_code_only,
    is_direct_only,
    resolve_tool_option,
    synthesize_selection_tool_options,
)

logger = logging.getLogger(__name__)

Tool = Mapping[str, Any]
"""A tool definition: `{"name", "description", "parameters", "allowed_callers"?}`."""

TOOL_INTENTS_CAPABILITY = "tool_intents"
"""Admin capability gating the whole feature (the kill switch)."""

DESCRIBE_INTENT_OPTION = "describe_intent"
"""Per-tool `tool_options` key."""

INTENT_ARG = "intent"
"""Argument carrying the model-authored label for a tool call."""

OUTCOME_FIELD = "outcome"
OUTCOME_PATCH_FIELD = "outcome_patch"

INTENT_LABEL_MARKER = "ALWAYS write this field FIRST"
"""Opening words of the description; the discriminator every strip path checks."""

INTENT_DESCRIPTION = (
    f"{INTENT_LABEL_MARKER}, before any other argument. One present-progressive "
    'sentence saying what THIS call is about to do: "Searching for OAuth handling '
    "in the callback router\". Shown to the user as this call's live status. "
    "Never name the tool. Sibling calls to one tool must differ."
)

INTENT_PROPERTY: Mapping[str, str] = MappingProxyType(
    {"type": "string", "description": INTENT_DESCRIPTION}
)
"""Canonical read-only shape. Injection embeds a fresh copy per schema, so schema
tooling that mutates a subschema never touches this shared instance."""

LC_TRANSFER_TO_PREFIX = "lc_transfer_to_"
"""Handoff tools: direct-path dispatch, already labelled by the agent update."""

CHECK_BACKGROUND_TASK_NAME = "check_background_task"

EXCLUDED_INTENT_TOOL_NAMES: frozenset[str] = frozenset({CHECK_BACKGROUND_TASK_NAME})
"""Never labelled (§6.3). Intent labels are inert, so unlike background's
correctness-driven list only host machinery is excluded by name; handoff tools are
excluded by prefix and code-only tools by their `allowed_callers`."""

NATIVE_INTENT_TOOL_NAMES: frozenset[str] = frozenset(
    {
        # SDK coding suite, all engines (§6.3).
        "read_file",
        "write_file",
        "edit_file",
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
    if name in EXCLUDED_INTENT_TOOL_NAMES:
        return False
    return not name.startswith(LC_TRANSFER_TO_PREFIX)


def is_intent_eligible_tool(tool: Tool) -> bool:
    """Name eligibility plus `allowed_callers`: a code-only tool never renders a card."""
    name = tool.get("name")
    return isinstance(name, str) and is_intent_eligible_tool_name(name) and not is_code_only(tool)


# --- arguments -----------------------------------------------------------------------


def has_intent_arg(args: object) -> bool:
    """Whether the args carry an `intent` key at all (mirrors `has_run_in_background_arg`)."""
    obj = coerce_args_object(args)
    return obj is not None and INTENT_ARG in obj


def read_intent(args: object) -> str | None:
    """The model-authored intent, trimmed; None when absent, blank, not a string or malformed.

    Mirrors `is_background_requested`. Whether the value is a label at all is the
    caller's gate (a server-side set of label-bearing tool names, §5.1).
    """
    obj = coerce_args_object(args)
    value = None if obj is None else obj.get(INTENT_ARG)
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
    obj = coerce_args_object(args)
    if obj is None or INTENT_ARG not in obj:
        return args
    return {key: value for key, value in obj.items() if key != INTENT_ARG}


# --- outcome -------------------------------------------------------------------------


def _non_blank(text: object) -> bool:
    return isinstance(text, str) and text.strip() != ""


def apply_outcome(
    intent: str | None,
    outcome: str | None = None,
    outcome_patch: Mapping[str, object] | None = None,
) -> str | None:
    """The settled label (§4.2): a non-blank `outcome` wins; else `outcome_patch`; else `intent`.

    The patch `{"from", "to"}` replaces the FIRST occurrence of `from`, case-sensitive
    and literal (no regex, so `$` or backslashes in `to` stay as written). A missing
    or empty `from`, a `from` not in the intent, or a malformed patch is a no-op.
    Never a tense rewrite: an unpatched intent comes back unchanged, in any language.
    """
    if _non_blank(outcome):
        return outcome
    if intent is None or not isinstance(outcome_patch, Mapping):
        return intent
    old = outcome_patch.get("from")
    new = outcome_patch.get("to")
    if not isinstance(old, str) or not old or not isinstance(new, str) or old not in intent:
        return intent
    return intent.replace(old, new, 1)


def error_label_text(
    intent: str | None,
    outcome: str | None = None,
    outcome_patch: Mapping[str, object] | None = None,
) -> str | None:
    """The text an errored call is labelled with, before the UI's `Failed: …` framing.

    Only tool-authored text labels a failure: a non-blank `outcome`, else the intent
    unchanged. `outcome_patch` is ignored: it describes success ("Searched"), which
    would misreport a call that failed.
    """
    del outcome_patch  # accepted so callers can pass a result through unchanged
    return outcome if _non_blank(outcome) else intent


# --- output references (§10.6) -------------------------------------------------------

OUTPUT_REFERENCE_PATTERN = re.compile(r"\{\{(tool\d+turn\d+)\}\}")
"""`{{tool<i>turn<n>}}`: a placeholder for an earlier call's stored raw output."""


def _substitute(value: object, outputs: Mapping[str, str]) -> object:
    if isinstance(value, str):

        def replace(match: re.Match[str]) -> str:
            found = outputs.get(match.group(1))
            return found if isinstance(found, str) else match.group(0)

        return OUTPUT_REFERENCE_PATTERN.sub(replace, value)
    if isinstance(value, Mapping):
        items = {key: _substitute(item, outputs) for key, item in value.items()}
        changed = any(items[key] is not value[key] for key in items)
        return items if changed else value
    if isinstance(value, list | tuple):
        parts = [_substitute(item, outputs) for item in value]
        changed = any(new is not old for new, old in zip(parts, value, strict=True))
        return parts if changed else value
    return value


def substitute_output_references(
    args: object,
    registry: Mapping[str, str],
    *,
    label_bearing: bool = True,
) -> object:
    """Replace `{{toolNturnM}}` placeholders in every string argument, except the label.

    A label-bearing call's top-level `intent` is never substituted: a stored output
    can be hundreds of kilobytes and would otherwise land in a one-line label and in
    persistence (§10.6). `label_bearing=False` (a tool whose `intent` is its own
    business parameter) substitutes it like any other string. Unknown references
    stay as written; unchanged args come back as the very same object; args that are
    not an object (or malformed JSON) are returned untouched.
    """
    obj = coerce_args_object(args)
    if obj is None:
        return args
    changed = False
    result: dict[str, Any] = {}
    for key, value in obj.items():
        if key == INTENT_ARG and label_bearing:
            result[key] = value
            continue
        result[key] = _substitute(value, registry)
        changed = changed or result[key] is not value
    return result if changed else args


# --- schema --------------------------------------------------------------------------


def is_intent_label_property(prop: object) -> bool:
    """Whether a schema property is the intent LABEL (its description opens with the marker).

    Type is not checked: strict conversion makes it `["string", "null"]`.
    """
    if not isinstance(prop, Mapping):
        return False
    description = prop.get("description")
    return isinstance(description, str) and description.startswith(INTENT_LABEL_MARKER)


def _properties(schema: object) -> Mapping[str, Any]:
    if isinstance(schema, Mapping):
        props = schema.get("properties")
        if isinstance(props, Mapping):
            return props
    return {}


def _required(schema: Mapping[str, Any]) -> list[str]:
    required = schema.get("required")
    if isinstance(required, Sequence) and not isinstance(required, str):
        return [name for name in required if isinstance(name, str)]
    return []


def _has_label(schema: object) -> bool:
    return is_intent_label_property(_properties(schema).get(INTENT_ARG))


def _label_is_first(schema: object) -> bool:
    first = next(iter(_properties(schema)), None)
    return first == INTENT_ARG and _has_label(schema)


def _schema_problem(schema: object) -> str | None:
    """Why `intent` cannot be placed in this schema, or None when it can."""
    if schema is None:
        return None
    if not isinstance(schema, Mapping):
        return "its parameters are not a JSON schema object"
    kind = schema.get("type")
    if kind is not None and kind != "object":
        return f"its schema type is {kind!r}, not 'object'"
    props = schema.get("properties")
    if props is not None and not isinstance(props, Mapping):
        return "its schema 'properties' is not a mapping"
    if INTENT_ARG in _properties(schema) and not _has_label(schema):
        return "it declares its own 'intent' parameter"
    return None


def _place_intent(schema: Mapping[str, Any] | None, *, required: bool) -> Mapping[str, Any]:
    """`schema` with the label first (moved or added) and, if asked, first in `required`.

    Returns `schema` itself when it is already in that state. Never removes `intent`
    from `required`: a native (required) schema met by host injection stays required.
    """
    base: Mapping[str, Any] = schema if schema is not None else {"type": "object"}
    props = _properties(base)
    names = _required(base)
    first_ok = _label_is_first(base)
    required_ok = not required or (INTENT_ARG in names)
    if schema is not None and first_ok and required_ok:
        return schema
    label = dict(props[INTENT_ARG]) if _has_label(base) else dict(INTENT_PROPERTY)
    rest = {name: value for name, value in props.items() if name != INTENT_ARG}
    placed: dict[str, Any] = {**base, "properties": {INTENT_ARG: label, **rest}}
    if required and INTENT_ARG not in names:
        placed["required"] = [INTENT_ARG, *names]
    return placed


def with_intent(schema: Mapping[str, Any] | None, *, required: bool = True) -> Mapping[str, Any]:
    """A native schema with the intent label as its first property (§7.1).

    Use at the schema definition site of native tools; `required` defaults True
    (§13.4: we control every caller). Never mutates; returns `schema` itself when the
    label is already first (and required, if asked). A non-object schema or one with
    a business `intent` parameter comes back unchanged, with a logged warning.
    """
    problem = _schema_problem(schema)
    if problem is not None:
        logger.warning("with_intent: leaving the schema unchanged because %s.", problem)
        return cast(Mapping[str, Any], schema)  # a problem implies a schema was given
    return _place_intent(schema, required=required)


def with_intent_model(model: type[Any], *, required: bool = True) -> Mapping[str, Any]:
    """The JSON schema of a pydantic model, with the intent label first (required).

    The model describes the tool's own arguments; the label is added on top, so the
    tool body (which receives stripped args) validates against the model unchanged.
    """
    schema_fn = getattr(model, "model_json_schema", None)
    if not callable(schema_fn):
        raise TypeError(
            f"with_intent_model expects a pydantic model class, got {model!r}; "
            "pass a BaseModel subclass or use with_intent(schema) for a raw JSON schema."
        )
    return with_intent(schema_fn(), required=required)


def without_intent(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """The schema without the intent LABEL (marker-guarded), also pruned from `required`.

    The embedder's opt-out for native schemas. A business `intent` survives; a schema
    without a label comes back as the very same object. `required` is dropped when
    removing the label empties it, so `without_intent(with_intent(s)) == s` for every
    schema `s` that has no empty `required` list of its own.
    """
    if not _has_label(schema):
        return schema
    props = _properties(schema)
    result: dict[str, Any] = {
        **schema,
        "properties": {name: value for name, value in props.items() if name != INTENT_ARG},
    }
    if "required" in schema:
        names = _required(schema)
        if INTENT_ARG in names:
            remaining = [name for name in names if name != INTENT_ARG]
            if remaining:
                result["required"] = remaining
            else:
                del result["required"]
    return result


def make_intent_optional(tool: Tool) -> Tool:
    """The tool with its intent label dropped from `required`; the same object if it wasn't.

    Tools callable from code never require the label (§10.2): the sandbox bridge
    builds signatures from the schema and no card renders an inner call.
    """
    params = tool.get("parameters")
    if not isinstance(params, Mapping) or not _has_label(params):
        return tool
    names = _required(params)
    if INTENT_ARG not in names:
        return tool
    remaining = [name for name in names if name != INTENT_ARG]
    return {**tool, "parameters": {**params, "required": remaining}}


# --- tool definitions (mirrors background.py) ----------------------------------------


def _tool_name(tool: object) -> str:
    name = tool.get("name") if isinstance(tool, Mapping) else None
    return name if isinstance(name, str) else "<unnamed tool>"


def _injection_problem(tool: object) -> str | None:
    """Why the host cannot inject a label into `tool`, or None (a label may already be there)."""
    if not isinstance(tool, Mapping):
        return "it is not a tool definition mapping"
    if is_code_only(tool):
        return "it is callable only from code (no card ever shows its label)"
    return _schema_problem(tool.get("parameters"))


def can_inject_intent_param(tool: Tool) -> bool:
    """Whether the host may inject the label into this tool; logs a warning naming it if not.

    False for non-object schemas (rewriting a string-input tool breaks its contract),
    tools that already declare `intent` (a label or their own business parameter)
    and code-only tools. A schema-less tool is injectable. Mirrors
    `can_inject_run_in_background_param`.
    """
    problem = _injection_problem(tool)
    if problem is None and _has_label(tool.get("parameters")):
        problem = "it already declares the intent label"
    if problem is None:
        return True
    logger.warning("Skipping describe_intent for %r: %s.", _tool_name(tool), problem)
    return False


def inject_intent_param(tool: Tool, *, required: bool = False) -> Tool:
    """A NEW tool definition with the intent label FIRST in its properties.

    Never mutates (built-in definitions may be frozen, MCP ones shared). Idempotent:
    the very same object comes back when a label is already first, as for the SDK/host
    `edit_file` pair (§6.5); a label elsewhere is moved first. `required` is honoured
    only for direct-only tools: a dual-caller tool never requires it (§10.2). Tools
    that cannot carry it (see `can_inject_intent_param`) come back unchanged.
    Mirrors `inject_run_in_background_param`, which APPENDS instead.
    """
    if not isinstance(tool, Mapping):
        return tool
    if _injection_problem(tool) is not None:
        return tool
    params = tool.get("parameters")
    placed = _place_intent(params, required=required and is_direct_only(tool))
    if placed is params:
        return tool
    # Providers expect an object schema; an untyped one is made explicit.
    return {**tool, "parameters": {"type": "object", **placed}}


def remove_intent_param(tool: Tool) -> Tool:
    """The tool without its intent LABEL (marker-guarded); the same object when it has none.

    Mirrors `remove_run_in_background_param`.
    """
    params = tool.get("parameters") if isinstance(tool, Mapping) else None
    if not isinstance(params, Mapping) or not _has_label(params):
        return tool
    return {**tool, "parameters": without_intent(params)}


def _strip_many(definitions: Sequence[Tool], names: frozenset[str] | None) -> Sequence[Tool]:
    changed = False
    result: list[Tool] = []
    for tool in definitions:
        stripped = (
            tool
            if names is not None and _tool_name(tool) not in names
            else remove_intent_param(tool)
        )
        changed = changed or stripped is not tool
        result.append(stripped)
    return result if changed else definitions


def strip_intent_from_tool_definitions(
    definitions: Sequence[Tool], tool_names: Iterable[str] | None = None
) -> Sequence[Tool]:
    """Remove intent labels (marker-guarded) from a definition list.

    For a self-spawned subagent's inherited tools (§10.5), and for the schemas the
    code-sandbox bridge advertises. `tool_names` limits it to those tools (e.g. the
    host-injected set); None means every label. No-op returns the same list.
    Mirrors `strip_background_from_tool_definitions`.
    """
    names = None if tool_names is None else frozenset(tool_names)
    return _strip_many(definitions, names)


def strip_intent_from_tool_registry(
    registry: Mapping[str, Tool] | None, tool_names: Iterable[str] | None = None
) -> Mapping[str, Tool] | None:
    """Registry counterpart of `strip_intent_from_tool_definitions`.

    Returns a NEW mapping (the parent's registry is shared) so a self-spawned child
    using tool search cannot rediscover a label schema; the same object when nothing
    changes. Mirrors `strip_background_from_tool_registry`.
    """
    if registry is None:
        return None
    names = None if tool_names is None else frozenset(tool_names)
    result: dict[str, Tool] = {}
    changed = False
    for key, tool in registry.items():
        stripped = tool if names is not None and key not in names else remove_intent_param(tool)
        changed = changed or stripped is not tool
        result[key] = stripped
    return result if changed else registry


@dataclass(frozen=True, slots=True)
class IntentLabelsResult:
    """What `apply_intent_labels` produced.

    `injected_tool_names`: tools the host injected (third-party, optional label).
    `label_tool_names`: every tool whose outgoing definition (or registry entry)
    carries a label — the server-side gate the UI renders labels by (§5.1).
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
    """One tool's outgoing definition, and whether the host injected its label."""
    if not isinstance(tool, Mapping):
        return tool, False
    if not enabled or not is_intent_eligible_tool(tool):
        # Kill switch, or a tool that never renders a card: a label is pure token cost.
        return remove_intent_param(tool), False
    resolved = resolve_tool_option(
        tool_options, DESCRIBE_INTENT_OPTION, tool_id, markers=(tool.get(INTENT_ARG),)
    )
    self_describing = _has_label(tool.get("parameters"))
    native = self_describing or _tool_name(tool) in native_tool_names
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
    ids = tool_ids or {}
    natives = frozenset(native_tool_names)
    injected: set[str] = set()

    def label(tool: Tool) -> Tool:
        name = _tool_name(tool)
        result, was_injected = _label_one(
            tool,
            tool_options,
            enabled=enabled,
            tool_id=ids.get(name, name),
            native_tool_names=natives,
            default_native=default_native,
        )
        if was_injected:
            injected.add(name)
        return result

    next_defs = [label(tool) for tool in definitions]
    changed = {
        _tool_name(new): new
        for new, old in zip(next_defs, definitions, strict=True)
        if new is not old
    }
    next_registry = mirror_registry(registry, changed, label)
    out_defs: Sequence[Tool] = next_defs if changed else definitions
    labelled = {_tool_name(tool) for tool in out_defs if _carries_label(tool)}
    labelled.update(key for key, tool in (next_registry or {}).items() if _carries_label(tool))
    return IntentLabelsResult(out_defs, next_registry, frozenset(injected), frozenset(labelled))


def _carries_label(tool: object) -> bool:
    return isinstance(tool, Mapping) and _has_label(tool.get("parameters"))


def mirror_registry(
    registry: Mapping[str, Tool] | None,
    changed_definitions: Mapping[str, Tool],
    transform: Callable[[Tool], Tool],
    *,
    fields: Sequence[str] = ("parameters",),
) -> Mapping[str, Tool] | None:
    """Registry parity: an entry whose definition changed takes its new `fields`; every
    other entry goes through the same per-tool `transform` (deferred tools live only here).

    Returns a new mapping, or `registry` itself when nothing changed. Shared by the
    family's `apply_*` functions.
    """
    if registry is None:
        return None
    result: dict[str, Tool] = {}
    changed = False
    for key, entry in registry.items():
        definition = changed_definitions.get(key)
        if definition is not None and isinstance(entry, Mapping):
            updated = _copy_fields(entry, definition, fields)
        else:
            updated = transform(entry)
        changed = changed or updated is not entry
        result[key] = updated
    return result if changed else registry


def _copy_fields(entry: Tool, source: Tool, fields: Sequence[str]) -> Tool:
    if all(entry.get(field) is source.get(field) for field in fields):
        return entry
    updated = {key: value for key, value in entry.items() if key not in fields or key in source}
    for field in fields:
        if field in source:
            updated[field] = source[field]
    return updated


def synthesize_intent_tool_options(
    describe_intent: object, tool_names: Iterable[str] = ()
) -> dict[str, dict[str, bool]] | None:
    """`tool_options` for model specs and ephemeral agents (which carry none of their own).

    True: every eligible tool; a list: only those tool ids; False or []: none (the
    ids in `tool_names` get an explicit False, which also outranks native markers);
    None: no policy. Mirrors `synthesize_background_tool_options`.
    """
    return synthesize_selection_tool_options(DESCRIBE_INTENT_OPTION, describe_intent, tool_names)
