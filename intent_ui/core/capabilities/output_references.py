"""Tool output references: `{{tool<i>turn<n>}}` placeholders in a call's arguments.

A placeholder stands for an earlier call's stored raw output (up to hundreds of
kilobytes) and is substituted into string arguments just before the tool runs. Never
into the intent label: the substitution itself skips it, rather than a cap at render
time, so an oversized output never lands in a one-line label nor in what is stored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from intent_ui.core.capabilities.intent_schema import INTENT_ARG
from intent_ui.core.capabilities.selection import coerce_args_object

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

    A label-bearing call's top-level `intent` is never substituted (see the module
    docstring). `label_bearing=False` (a tool whose `intent` is its own business
    parameter) substitutes it like any other string. Unknown references stay as
    written; unchanged args come back as the very same object; args that are not an
    object (or malformed JSON) are returned untouched.
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
