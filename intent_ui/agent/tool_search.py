"""Tool search for deferred tools (§10.1): withheld tools are found by what they do.

The run loop answers `tool_search` itself; the tools it finds are offered from the next
step on, with the same capability injection (intent first) as tools loaded at start.
Ranking is plain keyword overlap over names and descriptions, weighted so rare words
count more: small, predictable, and enough for a handful of deferred tools.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from intent_ui.core.capabilities.intent import is_intent_label_property, with_intent

TOOL_SEARCH_NAME = "tool_search"
MAX_RESULTS = 5

_WORD = re.compile(r"[a-z0-9]+")
# Words that say nothing about what a tool does.
_STOP = frozenset(
    {
        "a",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "find",
        "for",
        "from",
        "i",
        "in",
        "into",
        "is",
        "it",
        "me",
        "my",
        "need",
        "of",
        "on",
        "or",
        "some",
        "that",
        "the",
        "this",
        "to",
        "tool",
        "tools",
        "use",
        "using",
        "with",
    }
)


def tool_search_definition(*, intents: bool) -> dict[str, Any]:
    """The `tool_search` definition; self-describing (intent first) when intents are on."""
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "What the tool you need should do, in a few words.",
            }
        },
        "required": ["query"],
    }
    return {
        "name": TOOL_SEARCH_NAME,
        "description": "Find and load tools that are available but not offered yet. Describe "
        "the capability you need; the matching tools can be called from your next step.",
        "parameters": dict(with_intent(parameters)) if intents else parameters,
    }


def keywords(text: str) -> set[str]:
    """The words of `text` that say what something does (names split, stop words out)."""
    # Split snake_case and camelCase names into words as well.
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text).replace("_", " ").lower()
    return set(_WORD.findall(spaced)) - _STOP


def rank_tools(query: str, registry: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Names of the tools matching `query`, best first, at most `MAX_RESULTS`."""
    documents = {
        name: keywords(f"{name} {definition.get('description', '')}")
        for name, definition in registry.items()
    }
    wanted = keywords(query)
    total = len(documents)
    scores: dict[str, float] = {}
    for name, words in documents.items():
        score = 0.0
        for word in wanted & words:
            holders = sum(1 for other in documents.values() if word in other)
            score += math.log(1 + total / holders)
        if score > 0:
            scores[name] = score
    return sorted(scores, key=lambda name: (-scores[name], name))[:MAX_RESULTS]


def name_has_intent_label(definition: Mapping[str, Any]) -> bool:
    """Whether a definition's first property is the injected intent label."""
    properties = (definition.get("parameters") or {}).get("properties") or {}
    first = next(iter(properties.values()), None)
    return is_intent_label_property(first)
