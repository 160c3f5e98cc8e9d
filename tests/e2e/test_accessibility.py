"""Both pages pass an axe-core scan (WCAG 2.1 A and AA) with no serious or critical issue.

The chat page is scanned while a turn streams (live cards and the live header) and after
it finished (a settled group, a single call, an expanded card); the builder with its tool
switches, the "Describe all" switches and the OpenAPI import form.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect
from reflex.testing import AppHarness

from tests.e2e.axe import assert_accessible
from tests.e2e.harness import github_mcp_block, running_app
from tests.e2e.scenario import Scenario, calls_script, openai_config
from tests.support.sse_server import ReplayServer

pytestmark = pytest.mark.e2e

FIRST_LOAD_MS = 60_000
"""The first visit starts the MCP server and loads the tokenizer."""


@pytest.fixture(scope="module")
def app(server: ReplayServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppHarness]:
    config = openai_config(server) + github_mcp_block()
    with running_app(tmp_path_factory.mktemp("a11y"), config) as harness:
        yield harness


def search(call_id: str, intent: str, query: str) -> tuple[str, str, dict[str, str]]:
    return (call_id, "search_code", {"intent": intent, "query": query})


def send(page: Page, app: AppHarness, text: str) -> None:
    assert app.frontend_url is not None
    page.goto(app.frontend_url)
    page.get_by_test_id("chat-input").fill(text)
    page.get_by_test_id("send-button").click()


def test_the_chat_page_while_a_turn_streams_and_once_it_finished(
    app: AppHarness, page: Page, scenario: Scenario
) -> None:
    release = threading.Event()
    scenario.first = calls_script(
        [
            search("call_a", "Searching for MCP wiring", "mcp"),
            search("call_b", "Searching for OAuth handling", "oauth"),
        ],
        hold_when='"Searching for OAuth',
        release=release,
    )
    try:
        send(page, app, "Search for MCP wiring and OAuth handling")
        expect(page.get_by_test_id("tool-call").nth(1)).to_have_attribute(
            "data-state", "streaming", timeout=FIRST_LOAD_MS
        )
        expect(page.get_by_test_id("stop-button")).to_be_visible()
        assert_accessible(page)
    finally:
        release.set()
    expect(page.get_by_test_id("assistant-message").last).to_contain_text("Done.")
    # A second turn with one call, so the page holds a group and a lone card.
    scenario.first = calls_script([search("call_c", "Searching for the router", "router")])
    page.get_by_test_id("chat-input").fill("And the router")
    page.get_by_test_id("send-button").click()
    expect(page.get_by_test_id("assistant-message")).to_have_count(2)
    expect(page.get_by_test_id("assistant-message").last).to_contain_text("Done.")
    expect(page.get_by_test_id("tool-call")).to_have_count(3)
    page.get_by_test_id("tool-call").first.get_by_role("button").first.click()
    expect(page.get_by_test_id("tool-call-result").first).to_be_visible()
    assert_accessible(page)


def test_the_builder(app: AppHarness, page: Page) -> None:
    assert app.frontend_url is not None
    page.goto(app.frontend_url.rstrip("/") + "/agents")
    expect(page.get_by_test_id("describe-all-toggle").first).to_be_visible(timeout=FIRST_LOAD_MS)
    page.get_by_test_id("agent-name").fill("Reviewer")
    page.get_by_test_id("agent-save").click()
    expect(page.get_by_test_id("agent-row")).to_have_count(1)
    expect(page.get_by_test_id("builder-notice")).to_be_visible()
    assert_accessible(page)
