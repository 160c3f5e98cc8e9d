"""Scripted provider turns for the browser tests: an OpenAI-shaped SSE server on loopback.

A `Scenario` answers the first request of a turn with `first` (tool calls) and the
request that carries the tool results with `followup` (the reply), so a test can swap
the script per test while one app and one server serve the whole module.

Both builders can pause their stream part-way (`hold_when`: once the text the stream
has sent so far, reply text and tool-call arguments alike, contains it) until the test
sets `release`, so a test can act mid-stream without sleeping.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from playwright.sync_api import Page
from reflex.testing import AppHarness

from tests.e2e.tabs import ask
from tests.support.sse_server import ReplayServer, Script
from tests.support.wire import openai_chunks


def reply(
    text: str,
    *,
    delay_s: float = 0.0,
    hold_when: str | None = None,
    release: threading.Event | None = None,
) -> Script:
    """A plain text answer; optionally paused once `hold_when` has streamed."""
    return _held(openai_chunks(text=text, finish_reason="stop"), delay_s, hold_when, release)


@dataclass
class Scenario:
    first: Script = field(default_factory=lambda: reply("Hello!"))
    followup: Script = field(default_factory=lambda: reply("Done."))

    def respond(self, request: Any, attempt: int) -> Script:
        messages = (request or {}).get("messages") or []
        if messages and messages[-1].get("role") == "tool":
            return self.followup
        return self.first


def start_server(scenario: Scenario) -> ReplayServer:
    return ReplayServer(responder=scenario.respond).start()


def calls_script(
    calls: list[tuple[str, str, dict[str, Any]]],
    *,
    delay_s: float = 0.02,
    fragment_size: int = 3,
    hold_when: str | None = None,
    release: threading.Event | None = None,
) -> Script:
    """Tool calls streamed in fragments; optionally paused once the accumulated
    arguments of the stream contain `hold_when` (until `release` is set)."""
    chunks = openai_chunks(
        tool_calls=[(call_id, name, json.dumps(args)) for call_id, name, args in calls],
        fragment_size=fragment_size,
    )
    return _held(chunks, delay_s, hold_when, release)


def _held(
    chunks: list[str], delay_s: float, hold_when: str | None, release: threading.Event | None
) -> Script:
    hold_after = None
    if hold_when is not None:
        seen = ""
        for index, chunk in enumerate(chunks):
            seen += _streamed_in(chunk)
            if hold_when in seen:
                hold_after = index + 1
                break
        assert hold_after is not None, f"{hold_when!r} never streams"
    return Script.sse(chunks, delay_s=delay_s, hold_after=hold_after, release=release)


def _streamed_in(chunk: str) -> str:
    """The reply text and argument text one chunk carries."""
    if not chunk.startswith("data: {"):
        return ""
    body = json.loads(chunk[len("data: ") :])
    pieces = []
    for choice in body.get("choices") or []:
        delta = choice.get("delta") or {}
        pieces.append(delta.get("content") or "")
        for call in delta.get("tool_calls") or []:
            pieces.append(call.get("function", {}).get("arguments") or "")
    return "".join(pieces)


def send(page: Page, app: AppHarness, text: str) -> None:
    """Open the chat page and send `text` (into the conversation the browser last had open)."""
    assert app.frontend_url is not None
    page.goto(app.frontend_url)
    ask(page, text)


def openai_config(server: ReplayServer, extra: str = "") -> str:
    return (
        "endpoints:\n"
        "  - name: replay\n"
        "    kind: openai\n"
        f"    base_url: {server.base_url}/v1\n"
        "    api_key: test-key\n"
        "    models: [gpt-4o-mini]\n" + extra
    )
