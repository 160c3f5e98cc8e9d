"""The offline demo model: plans real tool calls and streams them like a provider would.

`DemoProvider` needs no key and no network. It reads the last user message and the tool
definitions of the request, plans tool calls over the workspace, and streams them as
OpenAI `chat.completion.chunk` dicts through `ChatCompletionsAccumulator`, the same
accumulation code the real OpenAI adapter uses. Sleeping `pacing_ms` between chunks lets
a person watch each intent type out; tests use 0.

Plans (case-insensitive, tolerant of wording and trailing punctuation):

- "find where X and Y are handled" / "where are X and Y" / "search for X and Y" -> two
  parallel `grep_search` calls with distinct intents (`Searching for X handling`,
  `Searching for Y handling`); two `search_code` calls instead when such a tool is offered
  and the message mentions the repo, GitHub or code search;
- "read <path>" -> `read_file`; "list <dir>" / "what files ..." -> `list_directory`;
- "remember <k> is <v>" -> `set_memory`; "write <text> to <path>" -> `write_file`;
- anything else -> a text reply listing what it can do.

When the request offers `select_intent` (an agent with goals), the model first chooses the
goal whose id and description share the most words with the message (the first on a tie),
then plans as above with the tools that goal offers.

The intent is written first, and only when the offered definition carries the marked
intent property, so with the capability off (or `describe_intent` off) no intent is
written. Tool names are the ones offered in the request. When the request already holds
tool results for the last user message, the model writes a short reply quoting them.
Everything is deterministic.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from intent_ui.agent.providers.base import ChatRequest, ProviderEvent
from intent_ui.agent.providers.openai_stream import ChatCompletionsAccumulator
from intent_ui.agent.tool_search import keywords
from intent_ui.core.capabilities.intent import INTENT_ARG, is_intent_label_property
from intent_ui.core.registry import INPUT_ARG, INTENT_ID_ARG, SELECT_INTENT_TOOL_NAME
from intent_ui.core.text import clip

__all__ = ["DemoProvider", "PlannedCall", "choose_goal", "plan_calls", "reply_for_results"]

DEMO_MODEL = "demo"
_CHARS_PER_TOKEN = 4


@dataclass(frozen=True, slots=True)
class PlannedCall:
    """One tool call the demo model decided to make. `args` keep insertion order."""

    name: str
    args: dict[str, Any]


class DemoProvider:
    """A deterministic offline model implementing the `Provider` protocol."""

    def __init__(self, pacing_ms: float = 25, chunk_size: int = 3) -> None:
        self.pacing_ms = max(0.0, float(pacing_ms))
        self.chunk_size = max(1, int(chunk_size))

    async def stream(self, request: ChatRequest) -> AsyncIterator[ProviderEvent]:
        accumulator = ChatCompletionsAccumulator(source="the demo model")
        for chunk in self.chunks(request):
            for event in accumulator.feed(chunk):
                yield event
            # Even at pacing 0, yield to the loop so parallel tools and the UI interleave.
            await asyncio.sleep(self.pacing_ms / 1000)
        for event in accumulator.finish():
            yield event

    async def aclose(self) -> None:
        """Nothing to release; present so the runtime can close every provider alike."""

    def chunks(self, request: ChatRequest) -> list[dict[str, Any]]:
        """The whole response as `chat.completion.chunk` dicts (the last has finish_reason)."""
        builder = _ChunkBuilder(request.model or DEMO_MODEL, request.max_tokens)
        user = _last_user_text(request.messages)
        selector = next(
            (t for t in request.tools if t.get("name") == SELECT_INTENT_TOOL_NAME), None
        )
        goal = choose_goal(user, selector) if selector is not None else None
        # The goal's choice is not a result to report: the tools it offers come next.
        results = [
            result
            for result in _pending_results(request.messages)
            if result.get("name") != SELECT_INTENT_TOOL_NAME
        ]
        if results:
            builder.text(reply_for_results(request.messages, results), self._text_pieces)
            return builder.finish("stop")
        calls = [goal] if goal is not None else plan_calls(user, request.tools)
        if not calls:
            builder.text(_help_text(request.tools), self._text_pieces)
            return builder.finish("stop")
        seed = hashlib.sha256(f"{len(request.messages)}|{user}".encode()).hexdigest()[:10]
        for index, call in enumerate(calls):
            arguments = json.dumps(call.args, ensure_ascii=False)
            builder.tool_call(index, f"call_{seed}_{index}", call.name, arguments, self._pieces)
        return builder.finish("tool_calls")

    def _pieces(self, text: str) -> list[str]:
        size = self.chunk_size
        return [text[i : i + size] for i in range(0, len(text), size)]

    def _text_pieces(self, text: str) -> list[str]:
        # Word by word (with its trailing space) reads like a real model's reply.
        return re.findall(r"\S+\s*|\s+", text)


class _ChunkBuilder:
    """Builds the chunk dicts and enforces `max_tokens` like a provider (cuts with `length`)."""

    def __init__(self, model: str, max_tokens: int) -> None:
        self._model = model
        self._budget = max(1, max_tokens) * _CHARS_PER_TOKEN
        self._used = 0
        self._cut = False
        self.chunks: list[dict[str, Any]] = [self._chunk({"role": "assistant", "content": ""})]

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-demo",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": self._model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    def _spend(self, piece: str) -> str:
        if self._cut:
            return ""
        room = self._budget - self._used
        if len(piece) > room:
            self._cut = True
            piece = piece[: max(0, room)]
        self._used += len(piece)
        return piece

    def text(self, text: str, split: Callable[[str], list[str]]) -> None:
        for piece in split(text):
            piece = self._spend(piece)
            if piece:
                self.chunks.append(self._chunk({"content": piece}))

    def tool_call(
        self, index: int, call_id: str, name: str, arguments: str, split: Callable[[str], list[str]]
    ) -> None:
        if self._cut:
            return
        opening = {"index": index, "id": call_id, "type": "function"}
        self.chunks.append(
            self._chunk({"tool_calls": [{**opening, "function": {"name": name, "arguments": ""}}]})
        )
        for piece in split(arguments):
            piece = self._spend(piece)
            if piece:
                self.chunks.append(
                    self._chunk(
                        {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
                    )
                )

    def finish(self, reason: str) -> list[dict[str, Any]]:
        self.chunks.append(self._chunk({}, "length" if self._cut else reason))
        tokens = math.ceil(self._used / _CHARS_PER_TOKEN)
        self.chunks.append(
            {
                "id": "chatcmpl-demo",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": self._model,
                "choices": [],
                "usage": {"prompt_tokens": 0, "completion_tokens": tokens},
            }
        )
        return self.chunks


# --- planning ---------------------------------------------------------------------------

_VERBS = "handled|defined|used|implemented|configured|tested|called|wired|set up"
_NOUNS = {
    "handled": "handling",
    "defined": "definitions",
    "used": "usage",
    "implemented": "implementation",
    "configured": "configuration",
    "tested": "tests",
    "called": "calls",
    "wired": "wiring",
    "set up": "setup",
}
_WHERE = re.compile(
    r"\bwhere\s+(?:(?:are|is|do|does)\s+)?(?:the\s+)?(?P<a>.+?)\s+and\s+(?:the\s+)?(?P<b>.+?)"
    rf"(?:\s+(?:are|is|get|gets|being)?\s*(?P<verb>{_VERBS}))?$",
    re.IGNORECASE,
)
_SEARCH = re.compile(
    r"\b(?:search|grep|look|hunt)\s+(?:(?:through|in|across)\s+)?"
    r"(?:(?:the|this|my|our)\s+)?(?:(?:repo|repository|codebase|code|github|workspace|project|"
    r"files?)\s+)?(?:for\s+)(?P<a>.+?)\s+and\s+(?P<b>.+?)$",
    re.IGNORECASE,
)
_CODE_SEARCH_HINT = re.compile(r"\b(?:repo|repository|github|code\s*search|codebase)\b", re.I)
_READ = re.compile(
    r"\b(?:read|open|cat|show\s+me)\s+(?:the\s+)?(?:file\s+)?(?P<path>[\w./\\~-]*[\w/~-])$",
    re.IGNORECASE,
)
_LIST = re.compile(
    r"\b(?:list|ls)(?:\s+(?:the\s+)?(?:files|contents|entries)(?:\s+(?:in|of))?)?"
    r"(?:\s+(?:the\s+)?(?:folder|directory|dir)?\s*(?P<path>[\w./\\~-]+))?$",
    re.IGNORECASE,
)
_WHAT_FILES = re.compile(r"\bwhat\s+files\b(?:.*\b(?:in|under)\s+(?P<path>[\w./\\~-]+))?", re.I)
_REMEMBER = re.compile(
    r"\bremember\s+(?:that\s+)?(?:(?:my|the|our)\s+)?(?P<key>.+?)\s+(?:is|are|=)\s+(?P<value>.+)$",
    re.IGNORECASE,
)
_WRITE = re.compile(
    r"\bwrite\s+(?P<content>.+?)\s+(?:to|into)\s+(?:the\s+)?(?:file\s+)?(?P<path>[\w./\\~-]+)$",
    re.IGNORECASE,
)
_QUOTES = "\"'`“”‘’"
_SEARCH_ARG_NAMES = ("query", "q", "pattern", "search", "text", "keyword")


_GOAL_LINE = re.compile(r"^- (?P<id>[^:\n]+): (?P<description>.*)$", re.MULTILINE)


def choose_goal(message: str, tool: Mapping[str, Any]) -> PlannedCall | None:
    """The `select_intent` call for the goal that shares the most words with `message`.

    The goals are the tool's `intent_id` enum; their descriptions are read from the tool
    description's `- id: description` lines. None when the tool offers no goal.
    """
    choice = _properties(tool).get(INTENT_ID_ARG)
    ids = [str(i) for i in choice.get("enum") or ()] if isinstance(choice, Mapping) else []
    if not ids:
        return None
    described = {
        match.group("id"): match.group("description")
        for match in _GOAL_LINE.finditer(str(tool.get("description") or ""))
    }
    wanted = keywords(message)
    best = max(
        ids,
        key=lambda goal: (
            len(wanted & keywords(f"{goal} {described.get(goal, '')}")),
            -ids.index(goal),
        ),
    )
    intent = f"Choosing the goal: {described.get(best, best)}"
    return _call(tool, intent, {INTENT_ID_ARG: best, INPUT_ARG: {}})


def plan_calls(message: str, tools: Sequence[Mapping[str, Any]]) -> list[PlannedCall]:
    """The tool calls the demo model makes for `message`, given the offered `tools`."""
    text = _normalise(message)
    if not text:
        return []
    offered = {str(tool.get("name")): tool for tool in tools if isinstance(tool, Mapping)}
    for plan in (_plan_search, _plan_memory, _plan_write, _plan_read, _plan_list):
        calls = plan(text, offered)
        if calls:
            return calls
    return []


def _plan_search(text: str, offered: Mapping[str, Mapping[str, Any]]) -> list[PlannedCall]:
    match = _WHERE.search(text) or _SEARCH.search(text)
    if match is None:
        return []
    targets = [_clean_target(match.group("a")), _clean_target(match.group("b"))]
    if not all(targets) or targets[0].lower() == targets[1].lower():
        return []
    verb = match.groupdict().get("verb")
    noun = _NOUNS.get(verb.lower(), "handling") if verb else "handling"
    code_search = _find_tool(offered, "search_code")
    if code_search is not None and _CODE_SEARCH_HINT.search(text):
        tool, arg = code_search, _search_arg(code_search)
        values = targets
    else:
        grep = _find_tool(offered, "grep_search")
        if grep is None:
            return []
        tool, arg = grep, "pattern"
        values = [_literal_pattern(target) for target in targets]
    return [
        _call(tool, f"Searching for {target} {noun}", {arg: value})
        for target, value in zip(targets, values, strict=True)
    ]


_REGEX_SPECIAL = re.compile(r"([.^$*+?{}\[\]\\|()])")


def _literal_pattern(text: str) -> str:
    """`text` as a regex matching itself. Unlike `re.escape`, spaces stay as written: the
    pattern is also the outcome's label, where an escaped space shows as a backslash."""
    return _REGEX_SPECIAL.sub(r"\\\1", text)


def _plan_read(text: str, offered: Mapping[str, Mapping[str, Any]]) -> list[PlannedCall]:
    match = _READ.search(text)
    tool = _find_tool(offered, "read_file")
    if match is None or tool is None:
        return []
    path = match.group("path").strip(_QUOTES)
    return [_call(tool, f"Reading {path}", {"path": path})]


def _plan_list(text: str, offered: Mapping[str, Mapping[str, Any]]) -> list[PlannedCall]:
    match = _LIST.search(text) or _WHAT_FILES.search(text)
    tool = _find_tool(offered, "list_directory")
    if match is None or tool is None:
        return []
    path = (match.group("path") or ".").strip(_QUOTES)
    if path.lower() in ("files", "everything", "here", "all", "workspace"):
        path = "."
    intent = (
        "Listing the workspace files" if path in (".", "./") else f"Listing the files in {path}"
    )
    return [_call(tool, intent, {"path": path})]


def _plan_memory(text: str, offered: Mapping[str, Mapping[str, Any]]) -> list[PlannedCall]:
    match = _REMEMBER.search(text)
    tool = _find_tool(offered, "set_memory")
    if match is None or tool is None:
        return []
    key = match.group("key").strip(_QUOTES + " ")
    value = match.group("value").strip(_QUOTES + " ")
    return [_call(tool, f"Remembering that {key} is {value}", {"key": key, "value": value})]


def _plan_write(text: str, offered: Mapping[str, Mapping[str, Any]]) -> list[PlannedCall]:
    match = _WRITE.search(text)
    tool = _find_tool(offered, "write_file")
    if match is None or tool is None:
        return []
    content = match.group("content").strip(_QUOTES + " ")
    path = match.group("path").strip(_QUOTES)
    return [_call(tool, f"Writing {path}", {"path": path, "content": content + "\n"})]


def _call(tool: Mapping[str, Any], intent: str, args: dict[str, Any]) -> PlannedCall:
    """Arguments in wire order: the intent first, and only when the schema asks for it."""
    ordered: dict[str, Any] = {}
    if _wants_intent(tool):
        ordered[INTENT_ARG] = intent
    ordered.update(args)
    return PlannedCall(str(tool.get("name")), ordered)


def _wants_intent(tool: Mapping[str, Any]) -> bool:
    return is_intent_label_property(_properties(tool).get(INTENT_ARG))


def _properties(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    params = tool.get("parameters")
    props = params.get("properties") if isinstance(params, Mapping) else None
    return props if isinstance(props, Mapping) else {}


def _find_tool(offered: Mapping[str, Mapping[str, Any]], base: str) -> Mapping[str, Any] | None:
    """The offered tool named `base`, or one whose model-facing name extends it."""
    if base in offered:
        return offered[base]
    for name in sorted(offered):
        if name.startswith(base + "_") or name.endswith("_" + base) or name.endswith("." + base):
            return offered[name]
    return None


def _search_arg(tool: Mapping[str, Any]) -> str:
    props = _properties(tool)
    for name in _SEARCH_ARG_NAMES:
        if name in props:
            return name
    params = tool.get("parameters")
    required = params.get("required") if isinstance(params, Mapping) else None
    for name in required or ():
        if name != INTENT_ARG and name in props:
            return str(name)
    return next((str(name) for name in props if name != INTENT_ARG), "query")


def _normalise(message: str) -> str:
    text = " ".join(str(message or "").split())
    return text.rstrip("?.! ")


def _clean_target(text: str) -> str:
    text = text.strip().strip(_QUOTES).strip()
    text = re.sub(r"^(?:the|all)\s+", "", text, flags=re.IGNORECASE)
    text = re.sub(r"\s+(?:are|is|get|gets)$", "", text, flags=re.IGNORECASE)
    return text.strip(_QUOTES + " ")


# --- conversation reading ---------------------------------------------------------------


def _last_user_text(messages: Sequence[Mapping[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else ""
    return ""


def _pending_results(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Tool results that answer the last user message (empty before the first tool round)."""
    results: list[Mapping[str, Any]] = []
    for message in reversed(messages):
        role = message.get("role")
        if role == "user":
            break
        if role == "tool":
            results.append(message)
    return list(reversed(results))


def _call_arguments(messages: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for message in messages:
        for call in message.get("tool_calls") or ():
            try:
                args = json.loads(call.get("arguments") or "{}")
            except (TypeError, ValueError):
                args = {}
            found[str(call.get("id"))] = args if isinstance(args, dict) else {}
    return found


# --- replies ----------------------------------------------------------------------------

_MATCH_LINE = re.compile(r"^(?P<path>[^\n:]+):\d+: ", re.MULTILINE)


def reply_for_results(
    messages: Sequence[Mapping[str, Any]], results: Iterable[Mapping[str, Any]]
) -> str:
    """A short reply quoting what the tools returned."""
    arguments = _call_arguments(messages)
    searches: list[str] = []
    others: list[str] = []
    for result in results:
        name = str(result.get("name") or "the tool")
        content = str(result.get("content") or "")
        args = arguments.get(str(result.get("tool_call_id")), {})
        if result.get("is_error"):
            others.append(f"The {name} call failed: {_first_line(content)}")
        elif "search" in name:
            searches.append(_search_summary(content, args))
        else:
            others.append(_other_summary(name, content, args))
    sentences = []
    if searches:
        sentences.append("I found " + _join(searches) + ".")
    sentences.extend(others)
    return "\n\n".join(sentences) if sentences else "Done."


def _search_summary(content: str, args: Mapping[str, Any]) -> str:
    target = _display_target(args)
    paths = list(dict.fromkeys(m.group("path") for m in _MATCH_LINE.finditer(content)))
    count = len(_MATCH_LINE.findall(content))
    if count == 0:
        lines = [line for line in content.splitlines() if line.strip()]
        if not lines or content.startswith("No "):
            return f"no matches for {target}"
        return f"{len(lines)} results for {target}"
    noun = "match" if count == 1 else "matches"
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more files" if len(paths) > 3 else "")
    return f"{count} {noun} for {target} (in {shown})"


def _display_target(args: Mapping[str, Any]) -> str:
    for name in _SEARCH_ARG_NAMES:
        value = args.get(name)
        if isinstance(value, str) and value:
            return re.sub(r"\\(.)", r"\1", value)
    return "your search"


def _other_summary(name: str, content: str, args: Mapping[str, Any]) -> str:
    if name.startswith("read_file"):
        preview = "\n".join(content.splitlines()[:8])
        return f"Here is the start of {args.get('path', 'the file')}:\n\n```\n{preview}\n```"
    if name.startswith("list_directory"):
        entries = [line.split("  (")[0] for line in content.splitlines() if line.strip()]
        shown = ", ".join(entries[:8]) + (", …" if len(entries) > 8 else "")
        where = args.get("path", ".")
        place = "The workspace" if where in (".", "./", "") else f"`{where}`"
        noun = "entry" if len(entries) == 1 else "entries"
        return f"{place} contains {len(entries)} {noun}: {shown}"
    if name.startswith("set_memory"):
        return f"Noted: {args.get('key', 'that')} is {args.get('value', '')}."
    return f"Done: {_first_line(content)}"


def _first_line(text: str) -> str:
    line = next((line for line in text.splitlines() if line.strip()), "").strip()
    return clip(line, 160)


def _join(items: list[str]) -> str:
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _help_text(tools: Sequence[Mapping[str, Any]]) -> str:
    names = {str(tool.get("name")) for tool in tools if isinstance(tool, Mapping)}
    offered = {base for base in _EXAMPLES if _find_tool({n: {} for n in names}, base) is not None}
    lines = [
        "I'm the offline demo model: I plan real tool calls over your workspace and "
        "stream them like a provider would."
    ]
    examples = [example for base, example in _EXAMPLES.items() if base in offered]
    if examples:
        lines.append("Try one of these:")
        lines.extend(f"- {example}" for example in examples)
    else:
        lines.append("No tools are enabled for this chat, so there is nothing I can run.")
    return "\n".join(lines)


_EXAMPLES: dict[str, str] = {
    "grep_search": "find where OAuth and MCP are handled",
    "search_code": "search the repo for OAuth and MCP",
    "read_file": "read README.md",
    "list_directory": "list the files in .",
    "set_memory": "remember the deadline is Friday",
    "write_file": "write hello world to notes.txt",
}
