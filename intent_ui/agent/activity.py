"""Summaries: a short past-tense text for one group whose calls have all settled.

Intents are the live, per-call, free layer; a summary is the settled, per-group, paid
layer. When an endpoint has `activity_label: true`, the run loop hands each settled
group's entries to a `Summarizer` off the critical path and emits the result as an
`ActivityLabel` event, which becomes the group's header text (docs/labels.md, Group
header). Neither layer configures the other: summaries are an endpoint setting, intents a
per-tool capability.

Each entry's `tool_input` is the call's raw argument text **with the intent kept**:
the strip before a tool runs is for tool bodies only, and the intent is the most useful
thing the summarizing model can read.

Two summarizers:
- `ModelSummarizer` asks the endpoint's `activity_model` through the same provider.
- `DemoSummarizer` derives one deterministically from the outcomes (no model call),
  so the offline demo shows the third header phase too.

A summarizer returns None for "no summary" (disabled, blank, failed); the header then
simply stays on the settled outcome.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from intent_ui.agent.providers.base import ChatRequest, Provider, TextChunk
from intent_ui.core.states import FinalState

__all__ = [
    "MAX_SUMMARY_CHARS",
    "SUMMARY_PROMPT",
    "DemoSummarizer",
    "ModelSummarizer",
    "Summarizer",
    "SummaryEntry",
    "build_summary_prompt",
    "clean_summary",
]

MAX_SUMMARY_CHARS = 120
"""A summary longer than this is cut with an ellipsis (the render caps it again:
docs/labels.md, Sanitising and capping)."""

# Per-entry budget for the tool output in the prompt: enough to say what happened,
# small enough that a group of file reads stays a cheap fast-model call.
_MAX_OUTPUT_CHARS = 400
_MAX_INPUT_CHARS = 1_000

SUMMARY_PROMPT = (
    "You write the header for a group of tool calls an AI agent just made. "
    "Summarise what the group accomplished in one short past-tense phrase "
    "(at most 10 words), outcome first. Do not name tools, do not count calls, "
    "do not echo raw arguments; each call's `intent` says what it was for. "
    "Reply with the phrase only: no quotes, no trailing period."
)


@dataclass(frozen=True, slots=True)
class SummaryEntry:
    """One settled call of a group, as the summarizer sees it."""

    tool_name: str
    tool_input: str
    """The raw argument text the model wrote, intent included: it tells the
    summarizing model what each call was for far better than the bare arguments do."""
    status: FinalState
    output: str = ""
    outcome: str | None = None
    intent: str | None = None


class Summarizer(Protocol):
    """Produces a group's summary from its settled entries; None when there is none."""

    async def summarize(self, entries: Sequence[SummaryEntry]) -> str | None: ...


def build_summary_prompt(entries: Sequence[SummaryEntry]) -> str:
    """The user message for the summarizing model: one JSON line per entry."""
    lines = [
        json.dumps(
            {
                "tool": entry.tool_name,
                "input": _clip(entry.tool_input, _MAX_INPUT_CHARS),
                "status": entry.status,
                "outcome": entry.outcome,
                "output": _clip(entry.output, _MAX_OUTPUT_CHARS),
            },
            ensure_ascii=False,
        )
        for entry in entries
    ]
    return "Tool calls in this group:\n" + "\n".join(lines)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")
_QUOTES = "\"'`“”‘’"


def clean_summary(text: str | None) -> str | None:
    """One line, no wrapping quotes or trailing period, capped; None when blank."""
    if not isinstance(text, str):
        return None
    line = next((part for part in text.splitlines() if part.strip()), "")
    line = _CONTROL.sub(" ", line).strip().strip(_QUOTES).strip()
    line = line.rstrip(".").strip()
    if not line:
        return None
    if len(line) > MAX_SUMMARY_CHARS:
        line = line[: MAX_SUMMARY_CHARS - 1].rstrip() + "…"
    return line


class ModelSummarizer:
    """Asks a (fast) model for the summary through a provider; failures give None."""

    def __init__(self, provider: Provider, model: str, *, max_tokens: int = 64) -> None:
        self._provider = provider
        self._model = model
        self._max_tokens = max_tokens

    def request_for(self, entries: Sequence[SummaryEntry]) -> ChatRequest:
        """The provider request for `entries` (exposed so tests can read the prompt)."""
        return ChatRequest(
            model=self._model,
            messages=[{"role": "user", "content": build_summary_prompt(entries)}],
            system=SUMMARY_PROMPT,
            max_tokens=self._max_tokens,
        )

    async def summarize(self, entries: Sequence[SummaryEntry]) -> str | None:
        if not entries:
            return None
        parts: list[str] = []
        try:
            async for event in self._provider.stream(self.request_for(entries)):
                if isinstance(event, TextChunk):
                    parts.append(event.text)
        except Exception:
            # A missing summary is the documented degradation (docs/labels.md): the
            # group keeps its settled outcome. It is never worth failing a turn for.
            return None
        return clean_summary("".join(parts))


class DemoSummarizer:
    """A deterministic summary from the entries' outcomes, for the offline demo endpoint."""

    async def summarize(self, entries: Sequence[SummaryEntry]) -> str | None:
        return demo_summary(entries)


def demo_summary(entries: Sequence[SummaryEntry]) -> str | None:
    """`Found 3 matches for OAuth; found 1 match for MCP`, with failures counted."""
    if not entries:
        return None
    phrases: list[str] = []
    failed = 0
    for entry in entries:
        if entry.status != "settled":
            failed += 1
            continue
        phrase = (entry.outcome or entry.intent or "").strip()
        if phrase:
            phrases.append(phrase)
    if not phrases and not failed:
        return None
    parts = [phrases[0]] + [_lower_first(p) for p in phrases[1:]] if phrases else []
    if failed:
        parts.append(f"{failed} call failed" if failed == 1 else f"{failed} calls failed")
    return clean_summary("; ".join(parts))


def _lower_first(text: str) -> str:
    # Only lowercase a leading capital followed by a lowercase letter, so acronyms
    # ("MCP", "OAuth") and non-Latin scripts are left alone.
    if len(text) >= 2 and text[0].isupper() and text[1].islower():
        return text[0].lower() + text[1:]
    return text


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
