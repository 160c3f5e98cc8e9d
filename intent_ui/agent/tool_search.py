"""Tool search for deferred tools: withheld tools are found by what they do.

The run loop answers `tool_search` itself, through one `ToolSearch` per turn: the tools it
finds are promoted (`promote_deferred_tools`) and offered from the next round on, with the
same capability injection (intent first) as tools loaded at start. Once every deferred tool
is loaded the loop stops offering `tool_search`; a call that still comes (a parallel call in
the same response, or one written from memory) is told every tool is loaded, and which.
Ranking is BM25 (the `bm25s` library) over each tool's name and description, the words
reduced to their stems (Snowball's English stemmer), so a query that names another form of
a word finds it: "searching" finds a tool described with "search".
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import bm25s
import snowballstemmer

from intent_ui.agent.tools.base import ToolResult
from intent_ui.core.capabilities.deferred import TOOL_SEARCH_NAME, promote_deferred_tools
from intent_ui.core.capabilities.intent import with_intent
from intent_ui.core.capabilities.selection import ToolOptions
from intent_ui.core.capabilities.strict import to_strict_tool

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


@dataclass(frozen=True, slots=True)
class SearchAnswer:
    """What one `tool_search` call gives: the model's result, and the definitions to
    offer from the next round on (with the ones among them that carry an intent)."""

    result: ToolResult
    promoted: Sequence[Mapping[str, Any]] = ()
    intent_tool_names: frozenset[str] = frozenset()


class ToolSearch:
    """The host side of `tool_search` for one turn: what is still deferred, and what a
    search loads.

    `registry` holds the deferred tools' definitions as the capability pipeline shaped
    them; promotion passes them through the same intent policy (`tool_options`,
    `tool_ids`, `intents`) and, with `strict`, the strict conversion, as at load time.
    """

    def __init__(
        self,
        registry: Mapping[str, Mapping[str, Any]] | None,
        deferred: Sequence[str],
        *,
        tool_options: ToolOptions | None,
        tool_ids: Mapping[str, str],
        intents: bool,
        strict: bool,
    ) -> None:
        self._registry = dict(registry or {})
        self._options = tool_options
        self._tool_ids = dict(tool_ids)
        self._intents = intents
        self._strict = strict
        self.remaining: list[str] = [name for name in deferred if name in self._registry]
        """The deferred tools not found yet, in the order they were withheld."""
        self.offered = bool(self.remaining)
        """Whether this turn offers `tool_search` at all (it had something to find)."""
        self._loaded: list[str] = []

    def definition(self) -> Mapping[str, Any]:
        """The `tool_search` definition to offer, in the turn's schema dialect."""
        search = tool_search_definition(intents=self._intents)
        return to_strict_tool(search) if self._strict else search

    def keep(self, wanted: Callable[[str], bool]) -> None:
        """Forget the deferred tools `wanted` refuses (a chosen goal narrows the turn)."""
        self.remaining = [name for name in self.remaining if wanted(name)]

    def search(self, args: object, loaded: Sequence[Mapping[str, Any]]) -> SearchAnswer:
        """Answer one call (its intent already stripped) over the tools `loaded` so far."""
        query = args.get("query") if isinstance(args, Mapping) else None
        if not isinstance(query, str) or not query.strip():
            return SearchAnswer(
                ToolResult("tool_search needs a non-empty 'query' string.", is_error=True)
            )
        if not self.remaining:
            return SearchAnswer(self._nothing_left())
        found = rank_tools(query, {name: self._registry[name] for name in self.remaining})
        if not found:
            names = ", ".join(self.remaining)
            return SearchAnswer(
                ToolResult(
                    f"No deferred tool matches {query!r}. Deferred tools: {names}.",
                    outcome=f"No tools found for {query.strip()}",
                )
            )
        promoted = promote_deferred_tools(
            loaded,
            self._registry,
            found,
            self._options,
            intents_enabled=self._intents,
            tool_ids=self._tool_ids,
        )
        added = list(promoted.loaded[len(loaded) :])
        if self._strict:
            added = [to_strict_tool(definition) for definition in added]
        self.remaining = [name for name in self.remaining if name not in found]
        self._loaded.extend(found)
        listing = [
            {"name": name, "description": self._registry[name].get("description", "")}
            for name in found
        ]
        return SearchAnswer(
            ToolResult(
                json.dumps({"loaded": listing}, ensure_ascii=False),
                outcome=f"Found {len(found)} tool{'s' if len(found) != 1 else ''} for "
                f"{query.strip()}",
            ),
            added,
            promoted.intent_tool_names,
        )

    def _nothing_left(self) -> ToolResult:
        if not self._loaded:
            # A chosen goal left none of the deferred tools.
            return ToolResult(
                "No deferred tools are left to find; call the tools you were offered.",
                outcome="No tools left to find",
            )
        names = ", ".join(self._loaded)
        them = "it" if len(self._loaded) == 1 else "them"
        return ToolResult(
            f"Every deferred tool is already loaded ({names}); call {them} directly.",
            outcome="Every tool is already loaded",
        )
