"""Intent capture for MCP tools: the `context` parameter, PII stripping, clamping, coverage.

Mirrors seed 001. A server that opts in advertises an extra string parameter `context`
("Why are you calling this tool?") on each tool; the calling model fills it in, and the
server reads and removes it before the tool's own input validation, so handlers and strict
schemas never see it. Pure functions only: no I/O, no logging, no clock.

- `advertise_context` decides how `context` is advertised per tool: `required`,
  `optional` (widget-invoked tools, or `required=False`) or `none` (the tool declares its
  own `context` and is left completely alone).
- `capture_context` reads and removes it; a call without it never fails. On required-mode
  tools an optional `fallback` may infer an intent; on optional-mode tools it is not
  invoked, because context-less calls there are presumptively a widget's own traffic.
- Every captured text goes through `redact_intent`: `strip_pii`, then `clamp_intent`
  (500 characters as a reader counts them: grapheme clusters). So does every other copy
  of an intent that leaves its conversation (the anchor ledger, and any analytics, trace
  or log sink): the conversation itself stays its owner's faithful record.

`strip_pii` is a backstop for four obvious identifier shapes (email addresses, Luhn-valid
card numbers, US Social Security numbers, US-format phone numbers). It is **not** a
redactor: names, addresses, non-US phone formats, incomes, health or legal details, and
pasted credentials are all kept verbatim. Intent text is user data; treat it so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from intent_ui.core.text import grapheme_end

__all__ = [
    "CONTEXT_ARG",
    "CONTEXT_DESCRIPTION",
    "INTENT_CAPTURE_LIMIT",
    "CallRecord",
    "CapturedIntent",
    "Coverage",
    "IntentContextMode",
    "IntentSource",
    "advertise_context",
    "capture_context",
    "clamp_intent",
    "coverage",
    "coverage_by_tool",
    "coverage_from_counts",
    "is_widget_invoked",
    "redact_intent",
    "strip_pii",
]

CONTEXT_ARG = "context"
CONTEXT_DESCRIPTION = "Why are you calling this tool? Briefly describe the user's goal."
INTENT_CAPTURE_LIMIT = 500

IntentContextMode = Literal["required", "optional", "none"]
IntentSource = Literal["context_parameter", "inferred"]
Fallback = Callable[[str, Mapping[str, Any]], "str | None"]

# --- PII backstop ------------------------------------------------------------------------

# Every pattern may only start where its run starts (lookbehinds) and uses possessive
# quantifiers where a run could be long, so scanning stays linear on hostile input.
_EMAIL = re.compile(r"(?<![\w.%+-])[\w.%+-]++@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}")
# Digit groups joined by single spaces or dashes; card windows are searched inside a run.
_DIGIT_RUN = re.compile(r"(?<![\w-])(?<!\d )\d++(?:[ -]\d++)*+(?!\w)")
_DIGIT_GROUP = re.compile(r"\d+")
# Area 000, 666 and 900-999, group 00 and serial 0000 are never issued.
_SSN = re.compile(r"(?<![\w-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\w-])")
# NANP: area code and exchange start with 2-9; separators space, dot or dash, or none.
_PHONE = re.compile(
    r"""
    (?<![\w+])
    (?:\+?1[ .-]?)?
    (?:\([2-9]\d{2}\)[ .-]?|[2-9]\d{2}[ .-]?)
    [2-9]\d{2}[ .-]?\d{4}
    (?!\w)
    """,
    re.VERBOSE,
)
_CARD_MIN_DIGITS = 13
_CARD_MAX_DIGITS = 19


def _luhn_valid(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = ord(char) - 48
        if index % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _redact_cards(match: re.Match[str]) -> str:
    """Replace every Luhn-valid 13-19 digit window of whole groups inside one digit run."""
    run = match.group()
    groups = [(g.start(), g.end()) for g in _DIGIT_GROUP.finditer(run)]
    pieces: list[str] = []
    kept_until = 0
    i = 0
    while i < len(groups):
        found = None
        digits = ""
        for j in range(i, len(groups)):
            digits += run[groups[j][0] : groups[j][1]]
            if len(digits) > _CARD_MAX_DIGITS:
                break
            if len(digits) >= _CARD_MIN_DIGITS and _luhn_valid(digits):
                found = j  # keep looking: prefer the longest valid window
        if found is None:
            i += 1
            continue
        pieces.append(run[kept_until : groups[i][0]])
        pieces.append("[card]")
        kept_until = groups[found][1]
        i = found + 1
    pieces.append(run[kept_until:])
    return "".join(pieces)


def strip_pii(text: str) -> str:
    """Replace emails, Luhn-valid cards, US SSNs and US phone numbers with placeholders.

    A backstop for the most obvious identifiers, not a redactor: everything outside these
    four shapes is returned verbatim. Placeholders: `[email]`, `[card]`, `[ssn]`, `[phone]`.
    """
    if not isinstance(text, str) or not text:
        return text if isinstance(text, str) else ""
    text = _EMAIL.sub("[email]", text)
    text = _DIGIT_RUN.sub(_redact_cards, text)
    text = _SSN.sub("[ssn]", text)
    return _PHONE.sub("[phone]", text)


# --- clamping -------------------------------------------------------------------------------


def clamp_intent(text: str, limit: int = INTENT_CAPTURE_LIMIT) -> str:
    """Cap `text` at `limit` grapheme clusters (what a reader sees as characters).

    The cut never splits one: an accented letter, an Indic conjunct, a ZWJ emoji sequence,
    a skin tone, a flag or CRLF stays whole or goes whole. Only a pile-up of combining marks
    longer than `GRAPHEME_MAX_CHARS` is cut inside, so the result is at most
    `limit * GRAPHEME_MAX_CHARS` code points. No ellipsis is added: this clamps stored data.
    """
    if not isinstance(text, str) or limit <= 0:
        return ""
    end = grapheme_end(text, limit)
    return text if end == len(text) else text[:end]


# --- advertising -------------------------------------------------------------------------------


def _ui_meta(meta: Mapping[str, Any]) -> Mapping[str, Any]:
    ui = meta.get("ui")
    return ui if isinstance(ui, Mapping) else {}


def is_widget_invoked(meta: Mapping[str, Any] | None) -> bool:
    """True when a tool's `_meta` marks it as callable from a widget (three shapes).

    `"openai/widgetAccessible": true`; an MCP Apps `ui.visibility` containing `"app"`; or a
    `ui.resourceUri` with no declared visibility, since MCP Apps defaults an omitted
    visibility to `["model", "app"]`.
    """
    if not isinstance(meta, Mapping):
        return False
    if meta.get("openai/widgetAccessible") is True:
        return True
    ui = _ui_meta(meta)
    if "visibility" in ui:
        visibility = ui["visibility"]
        if isinstance(visibility, str):
            return visibility == "app"
        return isinstance(visibility, Iterable) and "app" in list(visibility)
    return bool(ui.get("resourceUri"))


# Keywords under which a schema composes or conditions other schemas: any of them may
# define or consume a `context` key we cannot see from the top-level `properties`.
_COMPOSING_KEYWORDS = frozenset(
    {
        "$ref",
        "$dynamicRef",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "dependentSchemas",
        "dependencies",
        "patternProperties",
        "unevaluatedProperties",
    }
)


def _might_own_context(schema: Mapping[str, Any]) -> bool:
    """True when the tool defines, or might accept, a `context` argument of its own.

    The property itself; a composed or conditional schema; or an explicitly open one
    (`additionalProperties` true or a schema), which says the handler reads unknown keys.
    An absent `additionalProperties` is the default of generated schemas and does not count:
    treating it as open would leave nearly every tool without capture.
    """
    properties = schema.get("properties")
    if isinstance(properties, Mapping) and CONTEXT_ARG in properties:
        return True
    if any(keyword in schema for keyword in _COMPOSING_KEYWORDS):
        return True
    return "additionalProperties" in schema and schema["additionalProperties"] is not False


def advertise_context(
    tool_schema: Mapping[str, Any],
    *,
    required: bool = True,
    meta: Mapping[str, Any] | None = None,
    description: str | None = None,
) -> tuple[Mapping[str, Any], IntentContextMode]:
    """Return the tool's input schema with `context` added, and how it was advertised.

    Never mutates `tool_schema`. Mode `none` (and the very same schema back) when the tool
    defines or might accept its own `context` (see `_might_own_context`) or the schema is
    not a readable object schema. Mode `optional` for
    widget-invoked tools (see `is_widget_invoked`) and when `required` is False; else
    `required`, with `context` appended to the schema's `required` list. The property is
    added last so existing argument order (an intent first) is kept.
    """
    if not isinstance(tool_schema, Mapping) or _might_own_context(tool_schema):
        return tool_schema, "none"
    if tool_schema.get("type", "object") != "object":
        return tool_schema, "none"
    properties = tool_schema.get("properties")
    if properties is not None and not isinstance(properties, Mapping):
        return tool_schema, "none"
    listed = tool_schema.get("required")
    if listed is not None and not (
        isinstance(listed, list) and all(isinstance(name, str) for name in listed)
    ):
        return tool_schema, "none"
    mode: IntentContextMode = "required" if required and not is_widget_invoked(meta) else "optional"
    text = description if isinstance(description, str) and description.strip() else None
    schema = dict(tool_schema)
    schema["type"] = "object"
    schema["properties"] = {
        **(properties or {}),
        CONTEXT_ARG: {"type": "string", "description": text or CONTEXT_DESCRIPTION},
    }
    if mode == "required":
        kept = [name for name in listed or () if name != CONTEXT_ARG]
        schema["required"] = [*kept, CONTEXT_ARG]
    return schema, mode


# --- capturing -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CapturedIntent:
    """An intent recorded for one tool call, already PII-stripped and clamped."""

    text: str
    source: IntentSource
    mode: IntentContextMode


# Only this much raw text is scanned for PII before clamping. Each kept cluster stands for
# at most ~36 raw code points (a 254-character email -> the seven of `[email]`; a cluster
# holds at most GRAPHEME_MAX_CHARS), so a match cut at this edge still lands past the clamp;
# and a megabyte-long `context` does not cost a megabyte of regex work.
_RAW_SCAN_LIMIT = 64 * INTENT_CAPTURE_LIMIT


def redact_intent(text: str) -> str:
    """The copy of an intent that may leave its conversation: PII-stripped and clamped.

    Trims, replaces the `strip_pii` shapes, caps at `INTENT_CAPTURE_LIMIT` grapheme
    clusters (never splitting one). Blank or non-string input gives "". Never
    raises. The one function every outbound copy (capture, the anchor ledger, analytics,
    traces, logs) goes through.
    """
    if not isinstance(text, str) or not text.strip():
        return ""
    return clamp_intent(strip_pii(text.strip()[:_RAW_SCAN_LIMIT])).strip()


def _clean(text: object) -> str | None:
    return redact_intent(text) or None if isinstance(text, str) else None


def capture_context(
    args: Mapping[str, Any] | None,
    mode: IntentContextMode,
    *,
    fallback: Fallback | None = None,
    tool_name: str,
) -> tuple[Mapping[str, Any] | None, CapturedIntent | None]:
    """Read and remove `context` from a call's arguments; never raises.

    Returns the arguments the tool handler should see and the captured intent, if any.
    With mode `none` (the tool owns its `context`) nothing is read or removed. A missing,
    blank or non-string `context` captures nothing (a non-string one is still removed: it
    is ours, not the tool's). Only then, and only in `required` mode, is `fallback`
    consulted, with the stripped arguments read-only; an error or blank answer from it
    captures nothing. Arguments without `context` come back as the very same object.
    """
    if mode not in ("required", "optional") or not isinstance(args, Mapping):
        return args, None
    stripped: Mapping[str, Any] = args
    text: str | None = None
    if CONTEXT_ARG in args:
        stripped = {key: value for key, value in args.items() if key != CONTEXT_ARG}
        text = _clean(args[CONTEXT_ARG])
    if text is not None:
        return stripped, CapturedIntent(text, "context_parameter", mode)
    if mode != "required" or fallback is None:
        return stripped, None
    try:
        inferred = _clean(fallback(tool_name, MappingProxyType(dict(stripped))))
    except Exception:
        # The fallback is user code on the hot path; a bug there must not fail the call.
        return stripped, None
    if inferred is None:
        return stripped, None
    return stripped, CapturedIntent(inferred, "inferred", mode)


# --- coverage ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One tool call for coverage: how `context` was advertised, and whether the model
    filled it (an inferred intent does not count: coverage measures the model)."""

    mode: IntentContextMode
    captured: bool

    @classmethod
    def from_capture(cls, mode: IntentContextMode, intent: CapturedIntent | None) -> CallRecord:
        return cls(mode, intent is not None and intent.source == "context_parameter")


@dataclass(frozen=True, slots=True)
class Coverage:
    """Call Coverage over required-context calls; optional-context calls as a separate share.

    A ratio is None when there were no calls of that kind (not 0%, which would read as a
    failure). The optional share mixes a widget's own calls, which never carry an intent,
    with model calls that skipped the optional field; the two cannot be told apart.
    """

    required_calls: int
    required_with_intent: int
    call_coverage: float | None
    optional_calls: int
    optional_with_intent: int
    optional_share: float | None


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def coverage(events: Iterable[CallRecord]) -> Coverage:
    """Summarise call records; `none`-mode calls and anything not a `CallRecord` are skipped."""
    required = required_hit = optional = optional_hit = 0
    for event in events:
        if not isinstance(event, CallRecord):
            continue
        if event.mode == "required":
            required += 1
            required_hit += bool(event.captured)
        elif event.mode == "optional":
            optional += 1
            optional_hit += bool(event.captured)
    return coverage_from_counts(required, required_hit, optional, optional_hit)


def coverage_from_counts(
    required_calls: int, required_with_intent: int, optional_calls: int, optional_with_intent: int
) -> Coverage:
    """`Coverage` from counts a database summed (the same rule as `coverage`)."""
    return Coverage(
        required_calls=required_calls,
        required_with_intent=required_with_intent,
        call_coverage=_ratio(required_with_intent, required_calls),
        optional_calls=optional_calls,
        optional_with_intent=optional_with_intent,
        optional_share=_ratio(optional_with_intent, optional_calls),
    )


def coverage_by_tool(calls: Iterable[tuple[str, CallRecord]]) -> dict[str, Coverage]:
    """`coverage` per tool name, in tool-name order, from `(tool, record)` pairs."""
    grouped: dict[str, list[CallRecord]] = {}
    for tool, record in calls:
        grouped.setdefault(tool, []).append(record)
    return {tool: coverage(grouped[tool]) for tool in sorted(grouped)}
