"""Tool output references: `{{tool<i>turn<n>}}` placeholders in a call's arguments.

A placeholder stands for an earlier call's stored raw output (up to hundreds of
kilobytes) and is substituted into string arguments just before the tool runs. Never
into the intent label: the substitution itself skips it, rather than a cap at render
time, so an oversized output never lands in a one-line label nor in what is stored.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
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


MAX_REFERENCE_CHARS = 400_000
"""The most of one call's output a reference keeps (about 400 KB of text); the rest is
cut, so a turn of many large outputs stays bounded in memory."""

MAX_SUBSTITUTED_OUTCOME_CHARS = 500
"""The longest outcome a call whose arguments were substituted may settle with: longer,
it is dropped and the intent stays the label (an outcome that echoes its arguments would
otherwise carry a whole referenced output into the label, the ledger and the log)."""


def reference_key(index: int, round_index: int) -> str:
    """The key of the `index`-th call (0-based, start order) of the turn's
    `round_index`-th model response (0-based): `tool<index>turn<round_index>`."""
    return f"tool{index}turn{round_index}"


REFERENCE_NOTE_MIN_CHARS = 1000
"""The shortest output whose result names its reference to the model: a shorter one is
as cheap to copy as to refer to (every output is kept and can be referred to)."""


def reference_note(key: str) -> str:
    """The line the model reads under a call's result, naming its reference."""
    return f"[Output reference: {{{{{key}}}}}]"


class OutputReferences:
    """One turn's referenced outputs: each successful call's raw output, under its key.

    `substitute` fills the placeholders of a call about to run (never its label) and says
    which outputs went in; `shield` keeps those outputs out of the call's outcome, which
    becomes its label and its ledger line.
    """

    def __init__(self) -> None:
        self._outputs: dict[str, str] = {}

    def __contains__(self, key: object) -> bool:
        return key in self._outputs

    def record(self, key: str, output: str) -> None:
        """Keep a call's output under its key (the first `MAX_REFERENCE_CHARS` of it)."""
        self._outputs[key] = output[:MAX_REFERENCE_CHARS]

    def substitute(
        self, args: dict[str, Any], *, label_bearing: bool
    ) -> tuple[dict[str, Any], tuple[str, ...]]:
        """The arguments with their placeholders filled, and the keys that were used."""
        used = tuple(
            sorted(
                {key for key in _references(args, skip_label=label_bearing) if key in self._outputs}
            )
        )
        if not used:
            return args, ()
        filled = substitute_output_references(args, self._outputs, label_bearing=label_bearing)
        return (dict(filled) if isinstance(filled, Mapping) else args), used

    def restore(self, text: str, used: Sequence[str]) -> str:
        """`text` (what a call that ran with the outputs `used` said) with each of those
        outputs written back as its placeholder."""
        for key in used:
            value = self._outputs.get(key, "")
            if value:
                text = text.replace(value, f"{{{{{key}}}}}")
        return text

    def shield(self, outcome: str | None, used: Sequence[str]) -> str | None:
        """The outcome of a call that ran with the outputs `used`, restored (`restore`);
        None when it is still too long for a label."""
        if not outcome or not used:
            return outcome
        outcome = self.restore(outcome, used)
        return outcome if len(outcome) <= MAX_SUBSTITUTED_OUTCOME_CHARS else None


def _references(value: object, *, skip_label: bool = False) -> Iterator[str]:
    """The reference keys written anywhere in `value` (the top-level label skipped)."""
    if isinstance(value, str):
        yield from OUTPUT_REFERENCE_PATTERN.findall(value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if not (skip_label and key == INTENT_ARG):
                yield from _references(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _references(item)
