"""The same reference case over Anthropic's Messages stream (blocks with an empty first
`partial_json`), with the follow-up request carrying `tool_result` blocks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from reflex.testing import AppHarness

from tests.e2e.harness import github_mcp_block, running_app
from tests.e2e.scenario import send
from tests.support.sse_server import ReplayServer, Script
from tests.support.wire import anthropic_events

pytestmark = pytest.mark.e2e

CALLS = [
    ("toolu_a", "search_code", json.dumps({"intent": "Searching for MCP wiring", "query": "mcp"})),
    ("toolu_b", "search_code", json.dumps({"intent": "Searching for OAuth", "query": "oauth"})),
]


def respond(request: Any, attempt: int) -> Script:
    last = (request or {}).get("messages", [])[-1]
    content = last.get("content")
    if isinstance(content, list) and any(b.get("type") == "tool_result" for b in content):
        return Script.sse(anthropic_events(text="Both found.", stop_reason="end_turn"))
    return Script.sse(anthropic_events(tool_uses=CALLS, fragment_size=3), delay_s=0.005)


@pytest.fixture(scope="module")
def server() -> Iterator[ReplayServer]:
    replay = ReplayServer(responder=respond).start()
    yield replay
    replay.stop()


@pytest.fixture(scope="module")
def app(server: ReplayServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppHarness]:
    config = (
        "endpoints:\n  - name: claude\n    kind: anthropic\n"
        f"    base_url: {server.base_url}\n    api_key: test-key\n"
        "    models: [claude-sonnet-4-5]\n" + github_mcp_block()
    )
    with running_app(tmp_path_factory.mktemp("anthropic"), config) as harness:
        yield harness


def test_anthropic_stream_labels_each_call(app: AppHarness, page: Page, server: ReplayServer):
    send(page, app, "Search the repo twice")
    cards = page.get_by_test_id("tool-call")
    expect(cards.nth(1)).to_have_attribute("data-state", "settled")
    expect(cards.nth(0)).to_have_attribute("data-state", "settled")
    expect(page.get_by_test_id("tool-call-label")).to_have_text(
        ["Searching for MCP wiring", "Searching for OAuth"]
    )
    expect(page.get_by_test_id("tool-group-header")).to_have_text("Searching for OAuth — github")
    expect(page.get_by_test_id("assistant-message").last).to_contain_text("Both found.")
    first = server.requests[0]
    assert first.path == "/v1/messages"
    tool = next(t for t in first.json["tools"] if t["name"] == "search_code")
    assert tool["eager_input_streaming"] is True
    assert next(iter(tool["input_schema"]["properties"])) == "intent"
