"""Strict function schemas for OpenAI and Anthropic strict tool calling.

Strict mode wants every property listed in `required` and `additionalProperties: false`
on every object. An optional property therefore stays optional by accepting `null`
instead: `{"type": ["string", "null"]}` (or an `anyOf` with `{"type": "null"}` when the
property has no plain type).

This matters for intent in two ways. OpenAI strict rejects a schema whose injected
optional `intent` is missing from `required`; and Anthropic orders required keys
first, where an optional intent would lose its first place in the streamed arguments.
Listing every property in `required` in property order keeps `intent` first in both
`properties` and `required`; making it nullable keeps it optional in meaning.

Pure and non-mutating: a new schema comes back, sharing with the input the parts that
need no change (most leaf properties); an already-strict schema comes back as the very
same object.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

from intent_ui.core.capabilities._definitions import required_names

Schema = Mapping[str, Any]

_NULL_SCHEMA: Mapping[str, str] = {"type": "null"}
_COMPOSITIONS = ("anyOf", "oneOf", "allOf")
_SCHEMA_MAPS = ("$defs", "definitions")
_NESTED = frozenset({"items", *_COMPOSITIONS, *_SCHEMA_MAPS})


# A schema is mostly dicts and lists: the concrete-type test first, since the ABC check
# behind `isinstance(x, Mapping)` costs several times more and a thousand tools' schemas
# take it at every node.
def _is_mapping(node: object) -> TypeGuard[Mapping[str, Any]]:
    return isinstance(node, (dict, Mapping))


def _is_list(node: object) -> TypeGuard[Sequence[Any]]:
    return isinstance(node, list) or (isinstance(node, Sequence) and not isinstance(node, str))


def _is_object_schema(node: Schema) -> bool:
    kind = node.get("type")
    if kind == "object":
        return True
    if isinstance(kind, list) and "object" in kind:
        return True
    return kind is None and _is_mapping(node.get("properties"))


def _accepts_null(node: Schema) -> bool:
    kind = node.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    for key in _COMPOSITIONS[:2]:
        options = node.get(key)
        if options is not None and _is_list(options):
            for option in options:
                if _is_mapping(option) and option.get("type") == "null":
                    return True
    return False


def _with_null_enum(node: dict[str, Any]) -> dict[str, Any]:
    enum = node.get("enum")
    if enum is not None and _is_list(enum) and None not in enum:
        node["enum"] = [*enum, None]
    return node


def _nullable(node: object) -> object:
    """`node` accepting `null` as well (how strict mode spells "optional")."""
    if not _is_mapping(node) or _accepts_null(node):
        return node
    kind = node.get("type")
    if isinstance(kind, str):
        return _with_null_enum({**node, "type": [kind, "null"]})
    if isinstance(kind, list):
        return _with_null_enum({**node, "type": [*kind, "null"]})
    options = node.get("anyOf")
    if options is not None and _is_list(options):
        return {**node, "anyOf": [*options, dict(_NULL_SCHEMA)]}
    # No plain type (a `$ref`, an enum, a `const`): wrap it. The description stays on
    # the outside, where label detection (`is_intent_label_property`) reads it.
    inner = {key: value for key, value in node.items() if key != "description"}
    wrapped: dict[str, Any] = {"anyOf": [inner, dict(_NULL_SCHEMA)]}
    if "description" in node:
        wrapped = {"description": node["description"], **wrapped}
    return wrapped


def _strict(node: object) -> object:
    """`node` in strict form; `node` itself where that changes nothing (most leaves), so a
    thousand tools' schemas are not copied node by node for nothing."""
    if not _is_mapping(node):
        return node
    is_object = _is_object_schema(node)
    if not is_object and _NESTED.isdisjoint(node):
        return node
    out: dict[str, Any] = {}
    if is_object:
        props = node.get("properties")
        props = props if _is_mapping(props) else {}
        required = set(required_names(node))
        out["properties"] = {
            name: _strict(prop) if name in required else _nullable(_strict(prop))
            for name, prop in props.items()
        }
        out["required"] = list(props)
        out["additionalProperties"] = False
    items = node.get("items")
    if items is not None:
        if _is_mapping(items):
            out["items"] = _strict(items)
        elif _is_list(items):
            out["items"] = [_strict(item) for item in items]
    for key in _COMPOSITIONS:
        options = node.get(key)
        if options is not None and _is_list(options):
            out[key] = [_strict(option) for option in options]
    for key in _SCHEMA_MAPS:
        defs = node.get(key)
        if defs is not None and _is_mapping(defs):
            out[key] = {name: _strict(sub) for name, sub in defs.items()}
    if all(key in node and node[key] is value for key, value in out.items()):
        return node
    return {**node, **out}


def to_strict_parameters(schema: Schema | None) -> Schema:
    """A strict-mode copy of a tool's parameter schema (recursively for nested objects).

    Every object lists all its properties in `required`, in property order, and gets
    `additionalProperties: false`; properties that were optional become nullable. A
    free-form object (no `properties`) thus accepts only `{}`: strict mode cannot
    express open maps. No schema at all becomes an empty strict object schema.
    """
    if schema is None:
        return {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
    converted = _strict(schema)
    return schema if converted == schema else converted  # type: ignore[return-value]


def to_strict_tool(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    """The tool definition with strict parameters; the same object when already strict."""
    params = tool.get("parameters")
    strict = to_strict_parameters(params)
    if strict is params:
        return tool
    return {**tool, "parameters": strict}
