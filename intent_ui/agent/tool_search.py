"""Tool search for deferred tools: withheld tools are found by what they do.

The run loop answers `tool_search` itself; the tools it finds are offered from the next
step on, with the same capability injection (intent first) as tools loaded at start.
Ranking is BM25 (the `bm25s` library) over each tool's name and description, the words
reduced to their stems (Snowball's English stemmer), so a query that names another form of
a word finds it: "searching" finds a tool described with "search".
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

import bm25s
import snowballstemmer

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
    return set(_words(text))


def _words(text: str) -> list[str]:
    # Split snake_case and camelCase names into words as well.
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text).replace("_", " ").lower()
    return [word for word in _WORD.findall(spaced) if word not in _STOP]


@functools.lru_cache(maxsize=4096)
def _stem(word: str) -> str:
    # A stemmer keeps state while it works, so each call gets its own (they are cheap);
    # the cache makes a tool's words cost once, not once per search.
    return snowballstemmer.stemmer("english").stemWord(word)


def _terms(text: str) -> list[str]:
    """The stems of `text`'s keywords, repeats kept (BM25 counts them)."""
    return [_stem(word) for word in _words(text)]


def rank_tools(query: str, registry: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Names of the tools matching `query`, best first (ties by name), at most `MAX_RESULTS`.

    A tool matches when its name or description shares a stem with the query; a stem that
    few tools hold counts for more, and so does one repeated in a short description.
    """
    documents = {
        name: _terms(f"{name} {definition.get('description', '')}")
        for name, definition in registry.items()
    }
    # Tools without a single word cannot match, and an index of none cannot be built.
    documents = {name: terms for name, terms in documents.items() if terms}
    known = {term for terms in documents.values() for term in terms}
    wanted = [term for term in dict.fromkeys(_terms(query)) if term in known]
    if not wanted:
        return []
    index = bm25s.BM25()
    index.index(list(documents.values()), show_progress=False)
    scores = dict(zip(documents, index.get_scores(wanted).tolist(), strict=True))
    found = [name for name, score in scores.items() if score > 0]
    return sorted(found, key=lambda name: (-scores[name], name))[:MAX_RESULTS]


def name_has_intent_label(definition: Mapping[str, Any]) -> bool:
    """Whether a definition's first property is the injected intent label."""
    properties = (definition.get("parameters") or {}).get("properties") or {}
    first = next(iter(properties.values()), None)
    return is_intent_label_property(first)
