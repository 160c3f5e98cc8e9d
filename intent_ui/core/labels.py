"""What each tool-call card says; the rules in words: docs/labels.md (Card label).

`card_label(call)` is the label table for one call, shared by every view (browser,
terminal, store). The label-bearing gate comes first: a tool the server did not mark shows
the default label even when its arguments contain a business parameter named `intent`.
The label is raw (unsanitised) text: pass it through `sanitize_label` when rendering.
The group header built from these labels is `core/header.py`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from intent_ui.core.capabilities.intent import apply_outcome
from intent_ui.core.locale import DEFAULT_LANGUAGE, translate
from intent_ui.core.sanitize import has_label_text
from intent_ui.core.states import FINAL_STATES, FOREGROUND_STATES, IN_FLIGHT_STATES, CallState

__all__ = [
    "ASK_QUESTION_TOOL_NAMES",
    "SUBAGENT_TOOL_NAMES",
    "CallCategory",
    "CallView",
    "card_is_in_flight",
    "card_label",
    "default_label",
    "tool_category",
]

CallCategory = Literal["tool", "subagent", "ask_question"]

SUBAGENT_TOOL_NAMES: frozenset[str] = frozenset({"subagent"})
"""Tools whose groups count agents (`Running 2 agents`, Users glyph)."""

ASK_QUESTION_TOOL_NAMES: frozenset[str] = frozenset({"ask_user_question"})
"""Tools whose groups count questions (`Asking 2 questions`, question glyph)."""


def tool_category(tool: str) -> CallCategory:
    """The homogeneous-group category of a tool name."""
    if tool in SUBAGENT_TOOL_NAMES:
        return "subagent"
    if tool in ASK_QUESTION_TOOL_NAMES:
        return "ask_question"
    return "tool"


@dataclass(frozen=True, slots=True)
class CallView:
    """Everything label resolution needs about one call.

    `label_seq` is the sequence number of the call's last label-relevant change: its first
    parsable intent arrived, or it settled. `intent` is the (possibly partial) intent text
    and is only honoured when `carries_intent` is true (the label gate).
    """

    call_id: str
    tool: str
    state: CallState
    server: str | None = None
    carries_intent: bool = False
    intent: str | None = None
    outcome: str | None = None
    outcome_patch: Mapping[str, str] | None = None
    label_seq: int = 0
    category: CallCategory = "tool"

    @property
    def in_flight(self) -> bool:
        return self.state in IN_FLIGHT_STATES

    @property
    def final(self) -> bool:
        return self.state in FINAL_STATES


@functools.lru_cache(maxsize=1024)
def default_label(
    tool: str, server: str | None = None, *, settled: bool, lang: str = DEFAULT_LANGUAGE
) -> str:
    """Today's label: `Running {tool}` / `Ran {tool}`, plus ` in {server}` for MCP tools.
    Remembered: every card of every push asks for it, and it only depends on its inputs."""
    label = translate("card.ran" if settled else "card.running", lang, tool=tool)
    if server:
        label = translate("card.in_server", lang, label=label, server=server)
    return label


def card_label(call: CallView, lang: str = DEFAULT_LANGUAGE) -> str:
    """The card's label, by the table in docs/labels.md (raw text: sanitise at render)."""
    running = default_label(call.tool, call.server, settled=False, lang=lang)
    # The gate: only server-marked calls may show model text or tool-authored outcomes.
    intent = call.intent if call.carries_intent and has_label_text(call.intent) else None
    outcome = call.outcome if call.carries_intent and has_label_text(call.outcome) else None
    state = call.state
    if state in FOREGROUND_STATES:
        return intent or running
    if state == "background":
        return translate("card.background", lang, label=intent) if intent else running
    ran = default_label(call.tool, call.server, settled=True, lang=lang)
    if state == "settled":
        if outcome:
            return outcome
        if intent:
            return _patched(intent, call.outcome_patch if call.carries_intent else None)
        return ran
    if state == "error":
        # A success patch ("Searching" -> "Searched") would claim success: never applied.
        return translate("card.failed", lang, label=outcome or intent or ran)
    if state == "cancelled":
        return translate("card.cancelled", lang, label=intent or running)
    return intent or running


def _patched(intent: str, patch: Mapping[str, str] | None) -> str:
    if patch is None:
        return intent
    result = apply_outcome(intent, None, patch)
    return result if isinstance(result, str) and result else intent


def card_is_in_flight(call: CallView) -> bool:
    """Whether the call has not ended (streaming, running or backgrounded): its card
    shimmers."""
    return call.state in IN_FLIGHT_STATES
