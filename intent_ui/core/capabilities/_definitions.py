"""What every capability sibling does to tool definitions, written once.

The siblings (`intent.py`, `background.py`, `deferred.py`, `programmatic.py`) mirror
one outline and keep only what differs: their names, their exclusions, their injected
property and how it is placed. Reading a definition's name and schema, the eligibility
rule, refusing an injection, recognising an injected property, and rewriting a
definition list and its registry in step all live here.

Every function is pure and non-mutating, and a rewrite that changes nothing returns
the very same object, so callers can tell "no-op" by identity.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from intent_ui.core.capabilities.selection import is_code_only

Tool = Mapping[str, Any]
"""A tool definition: `{"name", "description", "parameters", "allowed_callers"?}`."""

# `isinstance(x, (dict, Mapping))` below: the concrete dict check answers before the
# ABC's, which costs several times more, and a thousand tools pay these checks dozens of
# times each per request.

UNNAMED_TOOL = "<unnamed tool>"
"""What `tool_name` says for a definition without a string name (warnings name it)."""

LC_TRANSFER_TO_PREFIX = "lc_transfer_to_"
"""Handoff tools: dispatched on the direct path and already labelled by the agent
update, so no capability ever touches them."""


def tool_name(tool: object) -> str:
    """The definition's name, or `UNNAMED_TOOL` when it has none (or is not a mapping)."""
    name = tool.get("name") if isinstance(tool, (dict, Mapping)) else None
    return name if isinstance(name, str) else UNNAMED_TOOL


def tool_id(tool: object, tool_ids: Mapping[str, str] | None) -> str:
    """The id a tool's `tool_options` entry is keyed by: `tool_ids[name]`, else its name."""
    name = tool_name(tool)
    return (tool_ids or {}).get(name, name)


def is_eligible_tool_name(name: str, excluded: frozenset[str]) -> bool:
    """Whether a capability may apply to a tool of this name: not one the capability
    excludes by name, and not a handoff tool (excluded by prefix for every capability)."""
    return name not in excluded and not name.startswith(LC_TRANSFER_TO_PREFIX)


# --- schemas -------------------------------------------------------------------------


def schema_properties(schema: object) -> Mapping[str, Any]:
    """The schema's `properties`; empty when the schema or its properties are malformed."""
    if isinstance(schema, (dict, Mapping)):
        props = schema.get("properties")
        if isinstance(props, (dict, Mapping)):
            return props
    return {}


def required_names(schema: Mapping[str, Any]) -> list[str]:
    """The string names in the schema's `required` list, in order; empty when absent."""
    required = schema.get("required")
    if isinstance(required, list) or (
        isinstance(required, Sequence) and not isinstance(required, str)
    ):
        return [name for name in required if isinstance(name, str)]
    return []


def without_property(schema: Mapping[str, Any], name: str) -> dict[str, Any]:
    """A copy of `schema` whose `properties` lack `name` (`required` is left to the caller)."""
    props = schema_properties(schema)
    return {**schema, "properties": {key: value for key, value in props.items() if key != name}}


@dataclass(frozen=True, slots=True)
class InjectedParam:
    """One capability's injected schema parameter, and the words its refusals log.

    `is_injected` recognises the host's property by its description, so a tool's own
    parameter of the same name is never mistaken for it (and never removed).
    """

    arg: str
    is_injected: Callable[[object], bool]
    clash: str
    """Why a tool's own parameter named `arg` blocks injection."""
    present: str
    """Why there is nothing to inject: the property is already there."""
    code_only: str
    """Why a tool callable only from code is skipped."""


def has_injected(schema: object, param: InjectedParam) -> bool:
    """Whether the schema carries the capability's injected property (by its marker)."""
    return param.is_injected(schema_properties(schema).get(param.arg))


def carries(tool: object, param: InjectedParam) -> bool:
    """Whether the tool definition's schema carries the injected property."""
    return isinstance(tool, (dict, Mapping)) and has_injected(tool.get("parameters"), param)


def schema_problem(schema: object, param: InjectedParam) -> str | None:
    """Why `param` cannot be placed in this schema, or None when it can.

    None for no schema at all (injection creates an object schema). Refused: a schema
    that is not a mapping, whose type is not `object` (rewriting a string-input tool
    would break its contract), whose `properties` is not a mapping, or that declares
    its own parameter named `param.arg`. An injected property already there is fine.
    """
    if schema is None:
        return None
    if not isinstance(schema, (dict, Mapping)):
        return "its parameters are not a JSON schema object"
    kind = schema.get("type")
    if kind is not None and kind != "object":
        return f"its schema type is {kind!r}, not 'object'"
    props = schema.get("properties")
    if props is not None and not isinstance(props, (dict, Mapping)):
        return "its schema 'properties' is not a mapping"
    if param.arg in schema_properties(schema) and not has_injected(schema, param):
        return param.clash
    return None


def injection_problem(tool: object, param: InjectedParam) -> str | None:
    """Why `param` can never be injected into `tool`, or None (it may already be there)."""
    if not isinstance(tool, (dict, Mapping)):
        return "it is not a tool definition mapping"
    if is_code_only(tool):
        return param.code_only
    return schema_problem(tool.get("parameters"), param)


def injection_refusal(tool: object, param: InjectedParam) -> str | None:
    """Why the host will not inject `param` into `tool` now, or None when it will."""
    problem = injection_problem(tool, param)
    if problem is None and carries(tool, param):
        return param.present
    return problem


# --- definition lists and registries -------------------------------------------------


def rewrite_definitions(
    definitions: Sequence[Tool],
    rewrite: Callable[[Tool], Tool],
    *,
    only: frozenset[str] | None = None,
    drop: frozenset[str] = frozenset(),
) -> Sequence[Tool]:
    """`rewrite` applied to every definition (or to those named in `only`), without the
    ones named in `drop`; `definitions` itself when nothing changed."""
    result: list[Tool] = []
    changed = False
    for tool in definitions:
        name = tool_name(tool)
        if name in drop:
            changed = True
            continue
        updated = tool if only is not None and name not in only else rewrite(tool)
        changed = changed or updated is not tool
        result.append(updated)
    return result if changed else definitions


def rewrite_registry(
    registry: Mapping[str, Tool] | None,
    rewrite: Callable[[Tool], Tool],
    *,
    only: frozenset[str] | None = None,
    drop: frozenset[str] = frozenset(),
) -> Mapping[str, Tool] | None:
    """Registry counterpart of `rewrite_definitions`, keyed by registry key.

    Returns a NEW mapping when anything changed (a parent's registry is shared), the
    same object otherwise, and None for None.
    """
    if registry is None:
        return None
    result: dict[str, Tool] = {}
    changed = False
    for key, tool in registry.items():
        if key in drop:
            changed = True
            continue
        updated = tool if only is not None and key not in only else rewrite(tool)
        changed = changed or updated is not tool
        result[key] = updated
    return result if changed else registry


def apply_per_tool(
    definitions: Sequence[Tool],
    registry: Mapping[str, Tool] | None,
    decide: Callable[[Tool, str], Tool],
    *,
    tool_ids: Mapping[str, str] | None,
    fields: Sequence[str] = ("parameters",),
) -> tuple[Sequence[Tool], Mapping[str, Tool] | None]:
    """Run one capability's per-tool decision over the definitions and the registry.

    `decide(tool, tool_id)` returns the tool's outgoing definition. Registry entries
    that shadow a changed definition take its `fields`; the others (deferred tools
    live only in the registry) go through `decide` too. Unchanged inputs come back as
    the very same objects.
    """

    def one(tool: Tool) -> Tool:
        return decide(tool, tool_id(tool, tool_ids))

    next_defs = [one(tool) for tool in definitions]
    changed = {
        tool_name(new): new
        for new, old in zip(next_defs, definitions, strict=True)
        if new is not old
    }
    next_registry = mirror_registry(registry, changed, one, fields=fields)
    return (next_defs if changed else definitions), next_registry


def mirror_registry(
    registry: Mapping[str, Tool] | None,
    changed_definitions: Mapping[str, Tool],
    transform: Callable[[Tool], Tool],
    *,
    fields: Sequence[str] = ("parameters",),
) -> Mapping[str, Tool] | None:
    """Registry parity: an entry whose definition changed takes its new `fields`; every
    other entry goes through the same per-tool `transform`.

    Returns a new mapping, or `registry` itself when nothing changed.
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


def names_carrying(
    definitions: Iterable[Tool], registry: Mapping[str, Tool] | None, param: InjectedParam
) -> frozenset[str]:
    """Every tool whose definition (by name) or registry entry (by key) carries `param`."""
    names = {tool_name(tool) for tool in definitions if carries(tool, param)}
    names.update(key for key, tool in (registry or {}).items() if carries(tool, param))
    return frozenset(names)
