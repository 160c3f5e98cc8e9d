"""The offline demo model: plans real tool calls and streams them like a provider would.

`DemoProvider` needs no key and no network. It reads the last user message and the tool
definitions of the request, plans tool calls over the workspace, and streams them as
OpenAI `chat.completion.chunk` dicts through `ChatCompletionsAccumulator`, the same
accumulation code the real OpenAI adapter uses. Sleeping `pacing_ms` between chunks lets
a person watch each intent type out; tests use 0.

A message becomes steps (`demo_plan`): "find where OAuth and MCP are handled, then read
the session module and summarize" searches for OAuth and for MCP and looks for a file
named after "session" in one round, reads the best match in the next, then replies with
what it found, citing paths and counts (`demo_reply`). Also understood: "what does this
project do?" (the listing, then the README), "list the files", "read README.md",
"search for TODO", "remember <k> is <v>", "write <text> to <path>"; anything else gets a
reply listing what it can do. Which round a request is in is read from the conversation:
the tool rounds already answered since the last user message.

A turn continued after Stop (the last user message is `CONTINUE_PROMPT`) goes on with
the request before it: the calls Stop cancelled are made again, the rounds that finished
are not, and a reply the stopped turn had begun goes on from where it was cut.

When the request offers `select_intent` (an agent with goals), the model first chooses the
goal whose id and description share the most words with the message (the first on a tie),
then plans as above with the tools that goal offers.

The intent is written first, and only when the offered definition carries the marked
intent property, so with the capability off (or `describe_intent` off) no intent is
written. Tool names are the ones offered in the request. Everything is deterministic.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

from intent_ui.agent.providers.base import ChatRequest, ProviderEvent
from intent_ui.agent.providers.demo_plan import (
    PlannedCall,
    Result,
    call_for,
    first_round,
    parse,
    properties,
    second_round,
)
from intent_ui.agent.providers.demo_reply import compose_reply, help_text
from intent_ui.agent.providers.openai_stream import ChatCompletionsAccumulator
from intent_ui.agent.tool_search import keywords
from intent_ui.core.history import CANCELLED_RESULT, CONTINUE_PROMPT, INTERRUPTED_RESULT
from intent_ui.core.registry import INPUT_ARG, INTENT_ID_ARG, SELECT_INTENT_TOOL_NAME

__all__ = ["DemoProvider", "PlannedCall", "choose_goal", "plan_calls", "plan_round", "resumed"]

DEMO_MODEL = "demo"
_CHARS_PER_TOKEN = 4


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
        messages, written = resumed(request.messages)
        user = _last_user_text(messages)
        rounds = tool_rounds(messages)
        selector = next(
            (t for t in request.tools if t.get("name") == SELECT_INTENT_TOOL_NAME), None
        )
        # The goal is chosen before anything else; its result is not a round to report.
        goal = choose_goal(user, selector) if selector is not None and not rounds else None
        calls = [goal] if goal is not None else plan_round(user, request.tools, rounds)
        if calls:
            seed = hashlib.sha256(f"{len(request.messages)}|{user}".encode()).hexdigest()[:10]
            for index, call in enumerate(calls):
                arguments = json.dumps(call.args, ensure_ascii=False)
                builder.tool_call(index, f"call_{seed}_{index}", call.name, arguments, self._pieces)
            return builder.finish("tool_calls")
        offered = _offered(request.tools)
        reply = compose_reply(parse(user), rounds) if rounds else help_text(offered)
        if written and reply.startswith(written) and reply[len(written) :].strip():
            reply = reply[len(written) :]
        builder.text(reply, self._text_pieces)
        return builder.finish("stop")

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

_GOAL_LINE = re.compile(r"^- (?P<id>[^:\n]+): (?P<description>.*)$", re.MULTILINE)


def choose_goal(message: str, tool: Mapping[str, Any]) -> PlannedCall | None:
    """The `select_intent` call for the goal that shares the most words with `message`.

    The goals are the tool's `intent_id` enum; their descriptions are read from the tool
    description's `- id: description` lines. None when the tool offers no goal.
    """
    choice = properties(tool).get(INTENT_ID_ARG)
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
    return call_for(tool, intent, {INTENT_ID_ARG: best, INPUT_ARG: {}})


def plan_calls(message: str, tools: Sequence[Mapping[str, Any]]) -> list[PlannedCall]:
    """The first round of tool calls the demo model makes for `message`."""
    return plan_round(message, tools, [])


def plan_round(
    message: str, tools: Sequence[Mapping[str, Any]], rounds: Sequence[Sequence[Result]]
) -> list[PlannedCall]:
    """The calls of the next round, after the tool `rounds` already answered (none when
    the model should reply now)."""
    plan = parse(message)
    offered = _offered(tools)
    if not rounds:
        return first_round(plan, offered)
    if len(rounds) == 1:
        return second_round(plan, offered, rounds[0])
    return []


def _offered(tools: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    return {str(tool.get("name")): tool for tool in tools if isinstance(tool, Mapping)}


# --- conversation reading ---------------------------------------------------------------


def _last_user_text(messages: Sequence[Mapping[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else ""
    return ""


def resumed(
    messages: Sequence[Mapping[str, Any]],
) -> tuple[Sequence[Mapping[str, Any]], str]:
    """`(messages, written)`: a conversation that asks to continue a stopped turn, as if
    that turn had not stopped (the continue prompts and the calls Stop cancelled left
    out), and the reply text it had written after its last round. Any other
    conversation as it is, and ""."""
    if _last_user_text(messages) != CONTINUE_PROMPT:
        return messages, ""
    undone = {
        str(m.get("tool_call_id"))
        for m in messages
        if m.get("role") == "tool" and m.get("is_error") and m.get("content") in _UNFINISHED
    }
    out: list[Mapping[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role == "user" and message.get("content") == CONTINUE_PROMPT:
            continue
        if role == "tool" and str(message.get("tool_call_id")) in undone:
            continue
        calls = message.get("tool_calls") if role == "assistant" else None
        if calls:
            kept = [c for c in calls if str(c.get("id")) not in undone]
            if not kept and not message.get("content"):
                continue
            message = (
                {**message, "tool_calls": kept}
                if kept
                else {
                    "role": "assistant",
                    "content": message.get("content") or "",
                }
            )
        out.append(message)
    written: list[str] = []
    for message in reversed(out):
        if message.get("role") != "assistant" or message.get("tool_calls"):
            break
        written.insert(0, str(message.get("content") or ""))
    return out, "".join(written)


_UNFINISHED = frozenset({CANCELLED_RESULT, INTERRUPTED_RESULT})


def tool_rounds(messages: Sequence[Mapping[str, Any]]) -> list[list[Result]]:
    """The tool rounds answered since the last user message, each call with its result.

    A round that only chose the turn's goal is left out: it is not the model's work to
    report. A call without a result yet is left out of its round.
    """
    start = next(
        (i + 1 for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "user"),
        0,
    )
    answers = {str(m.get("tool_call_id")): m for m in messages[start:] if m.get("role") == "tool"}
    rounds: list[list[Result]] = []
    for message in messages[start:]:
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        if not calls or all(c.get("name") == SELECT_INTENT_TOOL_NAME for c in calls):
            continue
        batch = []
        for call in calls:
            answer = answers.get(str(call.get("id")))
            if answer is None:
                continue
            batch.append(
                Result(
                    name=str(answer.get("name") or call.get("name") or "the tool"),
                    args=_arguments(call.get("arguments")),
                    content=str(answer.get("content") or ""),
                    is_error=bool(answer.get("is_error")),
                )
            )
        rounds.append(batch)
    return rounds


def _arguments(raw: Any) -> dict[str, Any]:
    try:
        args = json.loads(raw or "{}")
    except (TypeError, ValueError):
        return {}
    return args if isinstance(args, dict) else {}
