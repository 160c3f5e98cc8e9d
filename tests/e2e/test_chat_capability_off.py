"""With the `tool_intents` capability off, nothing regresses: today's labels, exactly."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect
from reflex.testing import AppHarness

from tests.e2e.harness import github_mcp_block, running_app
from tests.e2e.scenario import Scenario, calls_script, openai_config, send
from tests.support.sse_server import ReplayServer

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def app(server: ReplayServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppHarness]:
    config = openai_config(server, "capabilities: [run_in_background]\n") + github_mcp_block()
    with running_app(tmp_path_factory.mktemp("plain"), config) as harness:
        yield harness


def test_capability_off_restores_used_2_tools(
    app: AppHarness, page: Page, scenario: Scenario, server: ReplayServer
) -> None:
    # Even a model that writes an intent anyway gets no label: the gate is server-side.
    scenario.first = calls_script(
        [
            ("call_a", "search_code", {"intent": "Searching for MCP wiring", "query": "mcp"}),
            ("call_b", "search_code", {"query": "oauth"}),
        ]
    )
    send(page, app, "Search the repo twice")
    cards = page.get_by_test_id("tool-call")
    expect(cards.nth(1)).to_have_attribute("data-state", "settled")
    expect(cards.nth(0)).to_have_attribute("data-state", "settled")
    expect(page.get_by_test_id("tool-group-header")).to_have_text("Used 2 tools — github")
    expect(page.get_by_test_id("tool-call-label")).to_have_text(
        ["Ran search_code in github", "Ran search_code in github"]
    )
    tools = server.requests[0].json["tools"]
    search = next(t for t in tools if t["function"]["name"] == "search_code")
    assert "intent" not in search["function"]["parameters"].get("properties", {})
