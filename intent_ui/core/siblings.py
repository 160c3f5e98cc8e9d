"""Sibling suffixes: cards of one group whose model-written labels are identical, told apart
by the argument that differs (`Searching the codebase · "oauth"` / `· "mcp"`); the rules in
words: docs/labels.md (Sibling suffixes)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from intent_ui.core.capabilities.intent import INTENT_ARG
from intent_ui.core.locale import DEFAULT_LANGUAGE, translate
from intent_ui.core.sanitize import sanitize_label

__all__ = ["SIBLING_VALUE_LIMIT", "Sibling", "sibling_suffixes"]

SIBLING_VALUE_LIMIT = 40
"""How many characters of the telling argument value a disambiguated card shows."""


@dataclass(frozen=True, slots=True)
class Sibling:
    """One card of a group, as collision checking sees it: its raw label, whether that
    label is the model's (an intent or the outcome it settled into), and its parsed
    arguments (None while they do not parse, e.g. still streaming)."""

    label: str
    from_intent: bool
    arguments: Mapping[str, object] | None


def sibling_suffixes(siblings: Sequence[Sibling], lang: str = DEFAULT_LANGUAGE) -> list[str]:
    """Per sibling, the text to append to its card label ("" for none).

    Sibling calls whose model-written labels are identical read as one call twice; each
    gets ` · "<value>"` of the first argument (other than the intent) whose value differs
    among them (`Searching the codebase · "oauth"` / `· "mcp"`). Only siblings whose
    arguments parse take part, so a card still streaming gets its suffix once they do.
    The value is sanitised like a label and capped; the group header is not affected.
    """
    suffixes = [""] * len(siblings)
    by_label: dict[str, list[int]] = {}
    for index, sibling in enumerate(siblings):
        if sibling.from_intent and sibling.arguments is not None:
            by_label.setdefault(sibling.label, []).append(index)
    for members in by_label.values():
        if len(members) < 2:
            continue
        args = [siblings[i].arguments or {} for i in members]
        key = _telling_key(args)
        if key is None:
            continue
        for index, values in zip(members, args, strict=True):
            if key in values:
                shown = sanitize_label(_value_text(values[key]), SIBLING_VALUE_LIMIT).text
                if shown:
                    suffixes[index] = translate("card.sibling", lang, value=shown)
    return suffixes


_MISSING = object()


def _telling_key(args: Sequence[Mapping[str, object]]) -> str | None:
    """The first key, in argument order, whose values are not all the same."""
    seen: set[str] = {INTENT_ARG}
    for values in args:
        for key in values:
            if key in seen:
                continue
            seen.add(key)
            first = args[0].get(key, _MISSING)
            if any(other.get(key, _MISSING) != first for other in args[1:]):
                return key
    return None


def _value_text(value: object) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)
