"""Scripted provider turns for the browser tests: an OpenAI-shaped SSE server on loopback.

A `Scenario` answers the first request of a turn with `first` (tool calls) and the
request that carries the tool results with `followup` (the reply), so a test can swap
the script per test while one app and one server serve the whole module.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from tests.support.sse_server import ReplayServer, Script
from tests.support.wire import openai_chunks


def reply(text: str) -> Script:
    """A plain text answer."""
    return Script.sse(openai_chunks(text=text, finish_reason="stop"))


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
    hold_after = None
    if hold_when is not None:
        seen = ""
        for index, chunk in enumerate(chunks):
            seen += _arguments_in(chunk)
            if hold_when in seen:
                hold_after = index + 1
                break
        assert hold_after is not None, f"{hold_when!r} never streams"
    return Script.sse(chunks, delay_s=delay_s, hold_after=hold_after, release=release)


def _arguments_in(chunk: str) -> str:
    if not chunk.startswith("data: {"):
        return ""
    body = json.loads(chunk[len("data: ") :])
    pieces = []
    for choice in body.get("choices") or []:
        for call in (choice.get("delta") or {}).get("tool_calls") or []:
            pieces.append(call.get("function", {}).get("arguments") or "")
    return "".join(pieces)


def openai_config(server: ReplayServer, extra: str = "") -> str:
    return (
        "endpoints:\n"
        "  - name: replay\n"
        "    kind: openai\n"
        f"    base_url: {server.base_url}/v1\n"
        "    api_key: test-key\n"
        "    models: [gpt-4o-mini]\n" + extra
    )
