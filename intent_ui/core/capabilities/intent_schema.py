"""The intent label's schema property, and how a native schema declares it.

An `intent` string is placed as the FIRST property of a tool's schema, so it is the
first key a provider streams in the call's arguments and the model's one-sentence
"what this call is about to do" can render as the call's live label before the rest
of the arguments exist.

The description's opening words (`INTENT_LABEL_MARKER`) are the only thing telling
the label apart from a tool's own business parameter named `intent`, so every
removal path is marker-guarded. Import the constant; never re-declare the literal.

Native tools declare the label at their schema's definition site with `with_intent`
(or `with_intent_model`), required by default: we write every caller of a native tool,
so nothing breaks when the model must always send it, and a required label is written
more reliably. `intent.py` injects the same property, optional, into third-party tools.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, cast

from intent_ui.core.capabilities._definitions import (
    InjectedParam,
    Tool,
    has_injected,
    required_names,
    schema_problem,
    schema_properties,
    without_property,
)

logger = logging.getLogger(__name__)

INTENT_ARG = "intent"
"""Argument carrying the model-authored label for a tool call."""

INTENT_LABEL_MARKER = "ALWAYS write this field FIRST"
"""Opening words of the description; the discriminator every strip path checks."""

INTENT_DESCRIPTION = (
    f"{INTENT_LABEL_MARKER}, before any other argument. One present-progressive "
    'sentence saying what THIS call is about to do: "Searching for OAuth handling '
    "in the callback router\". Shown to the user as this call's live status. "
    "Never name the tool. Sibling calls to one tool must differ."
)
"""What the model is told, word for word: write the label first, one sentence in the
present progressive, about this call, never naming the tool, and different for each
of several parallel calls to one tool (identical labels would make them
indistinguishable)."""

INTENT_PROPERTY: Mapping[str, str] = MappingProxyType(
    {"type": "string", "description": INTENT_DESCRIPTION}
)
"""Canonical read-only shape. Injection embeds a fresh copy per schema, so schema
tooling that mutates a subschema never touches this shared instance."""


def is_intent_label_property(prop: object) -> bool:
    """Whether a schema property is the intent LABEL (its description opens with the marker).

    Type is not checked: strict conversion makes it `["string", "null"]`.
    """
    if not isinstance(prop, (dict, Mapping)):
        return False
    description = prop.get("description")
    return isinstance(description, str) and description.startswith(INTENT_LABEL_MARKER)


INTENT_LABEL = InjectedParam(
    arg=INTENT_ARG,
    is_injected=is_intent_label_property,
    clash="it declares its own 'intent' parameter",
    present="it already declares the intent label",
    code_only="it is callable only from code (no card ever shows its label)",
)
"""The label as the family's shared helpers see it (`_definitions.InjectedParam`).
Mirrors `background.BACKGROUND_FLAG`."""


def _label_is_first(schema: object) -> bool:
    first = next(iter(schema_properties(schema)), None)
    return first == INTENT_ARG and has_injected(schema, INTENT_LABEL)


def place_intent(schema: Mapping[str, Any] | None, *, required: bool) -> Mapping[str, Any]:
    """`schema` with the label first (moved or added) and, if asked, first in `required`.

    Returns `schema` itself when it is already in that state. Never removes `intent`
    from `required`: a native (required) schema met by host injection stays required.
    The caller has checked the schema can take it (`schema_problem`).
    """
    base: Mapping[str, Any] = schema if schema is not None else {"type": "object"}
    props = schema_properties(base)
    names = required_names(base)
    required_ok = not required or (INTENT_ARG in names)
    if schema is not None and _label_is_first(base) and required_ok:
        return schema
    has_label = has_injected(base, INTENT_LABEL)
    label = dict(props[INTENT_ARG]) if has_label else dict(INTENT_PROPERTY)
    rest = {name: value for name, value in props.items() if name != INTENT_ARG}
    placed: dict[str, Any] = {**base, "properties": {INTENT_ARG: label, **rest}}
    if required and INTENT_ARG not in names:
        placed["required"] = [INTENT_ARG, *names]
    return placed


def with_intent(schema: Mapping[str, Any] | None, *, required: bool = True) -> Mapping[str, Any]:
    """A native schema with the intent label as its first property.

    Use at the schema definition site of native tools; `required` defaults True (see
    the module docstring). Never mutates; returns `schema` itself when the label is
    already first (and required, if asked). A non-object schema or one with a
    business `intent` parameter comes back unchanged, with a logged warning.
    """
    problem = schema_problem(schema, INTENT_LABEL)
    if problem is not None:
        logger.warning("with_intent: leaving the schema unchanged because %s.", problem)
        return cast(Mapping[str, Any], schema)  # a problem implies a schema was given
    return place_intent(schema, required=required)


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
    if not has_injected(schema, INTENT_LABEL):
        return schema
    result = without_property(schema, INTENT_ARG)
    if "required" in schema:
        names = required_names(schema)
        if INTENT_ARG in names:
            remaining = [name for name in names if name != INTENT_ARG]
            if remaining:
                result["required"] = remaining
            else:
                del result["required"]
    return result


def make_intent_optional(tool: Tool) -> Tool:
    """The tool with its intent label dropped from `required`; the same object if it wasn't.

    A tool callable from code never requires the label: the sandbox bridge builds
    call signatures from the schema, so model-written code would otherwise have to
    pass a label no card ever shows.
    """
    params = tool.get("parameters")
    if not isinstance(params, Mapping) or not has_injected(params, INTENT_LABEL):
        return tool
    names = required_names(params)
    if INTENT_ARG not in names:
        return tool
    remaining = [name for name in names if name != INTENT_ARG]
    return {**tool, "parameters": {**params, "required": remaining}}
