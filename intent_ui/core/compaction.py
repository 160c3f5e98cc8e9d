"""Compaction: when a conversation outgrows its context budget, old tool bodies give way
to their ledger.

The history sent to the model is built from the conversation's entries in order: the
user's messages, the reply turns (each its replayed `TurnView`) and the compaction marks
recorded earlier. A mark compacts every turn before it: such a turn still reads as the
user's message and the reply's text, but its tool calls (their arguments and results)
are gone, and each call is one ledger line instead (`ledger_line`): the tool as the model
called it, how the call ended, its intent, what came of it, and the files, commands and
queries its arguments named. A call without an intent still gets its line: the ledger
is what remains of every call, not of the labelled ones only.

The lines are recorded with the mark and never summarised or dropped later. Every build
puts all of them, oldest first, into one system message ahead of everything else
(`ledger_message`), so the block is re-pinned at the top after each compaction and a
later one adds its lines below the earlier ones.

`build_history` compacts when the history (the ledger block included) counts more than
the budget's tokens: every turn not compacted yet is compacted at once, which is where
the new mark goes (the end of the conversation so far). Nothing is compacted when those
turns made no calls, as dropping nothing would not shrink the history. The caller
records the mark (`History.compacted`); this module reads no store and no clock.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from intent_ui.core.capabilities.intent import INTENT_ARG
from intent_ui.core.history import turn_history
from intent_ui.core.ledger import call_outcome
from intent_ui.core.sanitize import has_label_text, sanitize_label
from intent_ui.core.turn import CallRecord, ToolGroup, TurnView

__all__ = [
    "LEDGER_HEADER",
    "MESSAGE_OVERHEAD_TOKENS",
    "CompactionMark",
    "ContextBudget",
    "Entry",
    "History",
    "TurnEntry",
    "UserEntry",
    "build_history",
    "compacted_turn",
    "history_tokens",
    "ledger_line",
    "ledger_lines",
    "ledger_message",
    "touched",
]

LEDGER_HEADER = (
    "Ledger of earlier tool calls. To fit the context budget, the arguments and results "
    "of the tool calls made earlier in this conversation were dropped; each line below "
    "stands for one of them, oldest first: the tool [how it ended]: what it set out to "
    "do → what came of it · the files, commands and queries it named. Call a tool again "
    "when you need what one of them returned."
)

MESSAGE_OVERHEAD_TOKENS = 4
"""What one message costs beyond its text (role and separators), about what providers
charge."""

_TEXT_LIMIT = 300
"""The longest intent, outcome or argument value a line keeps (a written file's content
is not an argument the ledger names, so this caps stray long values only)."""

_STATUS = {"settled": "success", "error": "error", "cancelled": "cancelled"}
_INTERRUPTED = "interrupted"

# Argument names that say which files, commands and queries a call touched, whatever the
# tool (native, MCP or imported action): the ledger keeps these values verbatim.
_TOUCHED_KEYS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "files",
        frozenset(
            {
                "path",
                "paths",
                "file",
                "files",
                "file_path",
                "filepath",
                "filename",
                "directory",
                "dir",
                "folder",
                "cwd",
            }
        ),
    ),
    ("commands", frozenset({"command", "commands", "cmd", "script", "code"})),
    ("queries", frozenset({"query", "q", "pattern", "glob", "search", "url", "urls"})),
)


@dataclass(frozen=True, slots=True)
class ContextBudget:
    """How many tokens the history may take, and how to count them (the tokenizer in
    use)."""

    tokens: int
    count: Callable[[str], int]


@dataclass(frozen=True, slots=True)
class UserEntry:
    """A message the user sent."""

    text: str


@dataclass(frozen=True, slots=True)
class TurnEntry:
    """A reply turn, replayed from its event log."""

    view: TurnView


@dataclass(frozen=True, slots=True)
class CompactionMark:
    """A recorded compaction: every turn before it is compacted; `lines` are the ledger
    lines of the turns it compacted, as recorded."""

    lines: tuple[str, ...]


Entry = UserEntry | TurnEntry | CompactionMark


@dataclass(frozen=True, slots=True)
class History:
    """What the model is sent, and what this build compacted.

    `compacted` holds the ledger lines of the turns this build compacted, empty when it
    compacted none: the caller records them as a new mark at the end of the
    conversation, so every later build keeps them. `tokens` is the count of `messages`
    (None without a budget: nothing was counted)."""

    messages: list[dict[str, Any]]
    compacted: tuple[str, ...] = ()
    tokens: int | None = None


def build_history(entries: Sequence[Entry], budget: ContextBudget | None = None) -> History:
    """The provider messages for `entries` (neutral `ChatRequest` shape), compacting every
    turn not compacted yet when they would count more than `budget` tokens."""
    last_mark = max((i for i, e in enumerate(entries) if isinstance(e, CompactionMark)), default=-1)
    pinned = [line for e in entries if isinstance(e, CompactionMark) for line in e.lines]
    messages = _messages(entries, last_mark, pinned)
    if budget is None:
        return History(messages)
    tokens = history_tokens(messages, budget.count)
    if tokens <= budget.tokens:
        return History(messages, tokens=tokens)
    fresh = tuple(
        line
        for entry in entries[last_mark + 1 :]
        if isinstance(entry, TurnEntry)
        for line in ledger_lines(entry.view)
    )
    if not fresh:
        return History(messages, tokens=tokens)
    compacted = _messages(entries, len(entries), [*pinned, *fresh])
    return History(compacted, fresh, history_tokens(compacted, budget.count))


def _messages(
    entries: Sequence[Entry], compacted_before: int, pinned: Sequence[str]
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [ledger_message(pinned)] if pinned else []
    for index, entry in enumerate(entries):
        if isinstance(entry, UserEntry):
            out.append({"role": "user", "content": entry.text})
        elif isinstance(entry, TurnEntry):
            if index < compacted_before:
                out.extend(compacted_turn(entry.view))
            else:
                out.extend(turn_history(entry.view))
    return out


def ledger_message(lines: Iterable[str]) -> dict[str, Any]:
    """The pinned block: one system message, the header then one line per call."""
    return {"role": "system", "content": "\n".join([LEDGER_HEADER, *lines])}


def compacted_turn(turn: TurnView) -> list[dict[str, Any]]:
    """A compacted turn's messages: its reply text as one assistant message, without its
    calls (the text of each round, trimmed, joined by a blank line); nothing when it
    wrote no text."""
    texts = [
        text
        for message in turn_history(turn)
        if message["role"] == "assistant" and (text := str(message.get("content") or "").strip())
    ]
    return [{"role": "assistant", "content": "\n\n".join(texts)}] if texts else []


def ledger_lines(turn: TurnView) -> list[str]:
    """One line per call of the turn, in the order the model made them (round by
    round)."""
    out: list[str] = []
    for part in turn.parts:
        if not isinstance(part, ToolGroup):
            continue
        for call_id in part.call_ids:
            record = turn.call(call_id)
            if record is not None:
                out.append(ledger_line(record, turn.arguments(call_id)))
    return out


def ledger_line(record: CallRecord, arguments: str) -> str:
    """`read_file [success]: Reading the session module → Read 120 lines · files:
    src/session.py`: the tool as the model called it, how the call ended (`success`,
    `error`, `cancelled`, or `interrupted` for one that never finished), its intent and
    outcome when it has them (an error's outcome is its message), then what it touched.
    One line of plain text."""
    status = _STATUS.get(record.state, _INTERRUPTED)
    line = f"{_one_line(record.called_as or record.tool)} [{status}]"
    intent = record.intent if record.carries_intent and has_label_text(record.intent) else None
    if intent:
        line += f": {_one_line(intent)}"
    outcome = call_outcome(record)
    if outcome and outcome != intent:
        line += f" → {_one_line(outcome)}"
    for kind, values in touched(arguments):
        line += f" · {kind}: " + ", ".join(values)
    return line


def touched(arguments: str | Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """The files, commands and queries a call's arguments name, by kind (in that order,
    kinds without values left out): the values of its arguments with a telling name
    (`path`, `command`, `query`, ...), strings or lists of strings, each one line."""
    args = _object(arguments)
    out: list[tuple[str, list[str]]] = []
    for kind, keys in _TOUCHED_KEYS:
        values: list[str] = []
        for key, value in args.items():
            if key == INTENT_ARG or key.lower() not in keys:
                continue
            items = value if isinstance(value, list) else [value]
            values.extend(
                _one_line(item) for item in items if isinstance(item, str) and item.strip()
            )
        if values:
            out.append((kind, values))
    return out


def history_tokens(messages: Iterable[Mapping[str, Any]], count: Callable[[str], int]) -> int:
    """What `messages` count with `count`: each message's text, its calls' names and
    arguments, and `MESSAGE_OVERHEAD_TOKENS` per message."""
    total = 0
    for message in messages:
        total += MESSAGE_OVERHEAD_TOKENS + count(str(message.get("content") or ""))
        for call in message.get("tool_calls") or ():
            total += count(str(call.get("name") or "")) + count(str(call.get("arguments") or ""))
    return total


def _object(arguments: str | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(arguments, Mapping):
        return arguments
    try:
        value = json.loads(arguments)
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _one_line(text: str) -> str:
    return sanitize_label(text, _TEXT_LIMIT).text
