"""Token accounting for tool schemas: what the intent property costs per request.

Every opted-in tool carries the intent property in its schema on every request, so the
builder shows, per tool, the schema tokens the property adds, and per agent the total
schema tokens of its tools with and without intents. The counting function is injected
(`count(text) -> int`), so this module stays pure; the real offline tokenizer lives in
`intent_ui.agent.tokenizer`.

A definition is measured as the compact JSON of what reaches the provider (`name`,
`description`, `parameters`); flags such as the native `"intent": True` marker never leave
the host and are not counted. The intent cost of a tool is the difference between its
definition with the label and without it, so the property key, its description and any
`required` entry are all included.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from intent_ui.core.capabilities.intent import inject_intent_param, remove_intent_param

__all__ = [
    "WIRE_KEYS",
    "AgentTokenTotals",
    "TokenCounter",
    "ToolTokenCost",
    "agent_token_totals",
    "count_definition",
    "definition_text",
    "tool_token_cost",
]

TokenCounter = Callable[[str], int]
"""Counts the tokens of a text."""

WIRE_KEYS: tuple[str, ...] = ("name", "description", "parameters")
"""The parts of a tool definition a provider receives, in the order they are sent."""


def definition_text(definition: Mapping[str, Any]) -> str:
    """The compact JSON text a definition is counted as (wire keys only, order kept)."""
    wire = {key: definition[key] for key in WIRE_KEYS if key in definition}
    return json.dumps(wire, ensure_ascii=False, separators=(",", ":"), default=str)


def count_definition(definition: Mapping[str, Any], count: TokenCounter) -> int:
    """Schema tokens of one tool definition, as it is."""
    return count(definition_text(definition))


@dataclass(frozen=True, slots=True)
class ToolTokenCost:
    """One tool's schema tokens without and with the intent property.

    Equal when the tool cannot carry an intent (code-only, a non-object schema, or its own
    business parameter named `intent`), so its `intent` cost is 0.
    """

    without_intent: int
    with_intent: int

    @property
    def intent(self) -> int:
        """Tokens the label adds to every request that offers this tool."""
        return max(0, self.with_intent - self.without_intent)


def tool_token_cost(definition: Mapping[str, Any], count: TokenCounter) -> ToolTokenCost:
    """Measure a definition both ways.

    A native definition that already declares the label is measured as it is (with the
    label, required where it is required) and without it; any other tool with the label
    the host would inject (optional).
    """
    bare = remove_intent_param(definition)
    labelled = inject_intent_param(bare)
    if bare is not definition:
        labelled = definition
    return ToolTokenCost(
        without_intent=count_definition(bare, count),
        with_intent=count_definition(labelled, count),
    )


@dataclass(frozen=True, slots=True)
class AgentTokenTotals:
    """An agent's tool-schema tokens per request.

    `without_intents`: no tool carries a label. `with_intents`: the tools that describe
    their intent carry it (the agent as configured).
    """

    without_intents: int
    with_intents: int
    describing: int

    @property
    def intents(self) -> int:
        """What the agent's intent properties cost per request."""
        return self.with_intents - self.without_intents


def agent_token_totals(tools: Iterable[tuple[ToolTokenCost, bool]]) -> AgentTokenTotals:
    """Sum per-tool costs; each pair is (cost, whether that tool describes its intent)."""
    without = 0
    added = 0
    describing = 0
    for cost, describes in tools:
        without += cost.without_intent
        if describes and cost.intent:
            added += cost.intent
            describing += 1
    return AgentTokenTotals(
        without_intents=without, with_intents=without + added, describing=describing
    )
