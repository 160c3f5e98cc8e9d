"""The rest of the chat page on the offline demo model: conversations, expanding a card,
the screen-reader live region, the language setting, and labels after a reload."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect
from reflex.testing import AppHarness

from tests.e2e.harness import running_app

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppHarness]:
    workdir = tmp_path_factory.mktemp("demo")
    workspace = workdir / "workspace"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "auth.py").write_text("def oauth_callback():\n    # OAuth handling\n")
    (workspace / "src" / "server.py").write_text("MCP = 'mcp wiring'\n# MCP registry\n")
    config = f"endpoints:\n  - kind: demo\n    pacing_ms: 5\nworkspace: {workspace}\n"
    with running_app(workdir, config) as harness:
        yield harness


def ask(page: Page, text: str) -> None:
    page.get_by_test_id("chat-input").fill(text)
    page.get_by_test_id("chat-input").press("Enter")


def test_demo_turn_streams_two_searches_and_replies(app: AppHarness, page: Page) -> None:
    assert app.frontend_url
    page.goto(app.frontend_url)
    ask(page, "find where OAuth and MCP are handled")
    cards = page.get_by_test_id("tool-call")
    expect(cards).to_have_count(2)
    expect(cards.nth(0)).to_have_attribute("data-state", "settled")
    expect(cards.nth(1)).to_have_attribute("data-state", "settled")
    labels = page.get_by_test_id("tool-call-label")
    expect(labels.nth(0)).to_contain_text("OAuth")
    expect(labels.nth(1)).to_contain_text("MCP")
    expect(page.get_by_test_id("assistant-message")).to_contain_text("OAuth")
    # Expanding a card (keyboard) shows its arguments and its result.
    head = cards.nth(0).get_by_role("button")
    head.focus()
    page.keyboard.press("Enter")
    expect(head).to_have_attribute("aria-expanded", "true")
    expect(cards.nth(0).get_by_test_id("tool-call-args")).to_contain_text('"pattern"')
    expect(cards.nth(0).get_by_test_id("tool-call-result")).to_contain_text("auth.py")
    # The live region announced a settled label once, not every growing sentence.
    expect(page.get_by_test_id("live-region")).not_to_have_text("")
    # Collapsing the group hides the cards; the header keeps its count for screen readers.
    header = page.get_by_test_id("tool-group-header")
    expect(header).to_have_attribute("aria-label", re.compile(r"2 tools$"))
    header.click()
    expect(header).to_have_attribute("aria-expanded", "false")
    expect(cards).to_have_count(0)


def test_conversations_can_be_created_renamed_selected_and_deleted(
    app: AppHarness, page: Page
) -> None:
    assert app.frontend_url
    page.goto(app.frontend_url)
    page.get_by_test_id("new-chat").click()
    ask(page, "list the files")
    expect(page.get_by_test_id("tool-call")).to_have_attribute("data-state", "settled")
    rows = page.get_by_test_id("conversation-row")
    first = rows.first
    expect(first).to_have_attribute("data-active", "true")
    first.get_by_test_id("conversation-rename").click()
    rename = page.get_by_test_id("conversation-rename-input")
    rename.fill("Renamed chat")
    rename.press("Enter")
    expect(page.get_by_test_id("conversation-title").first).to_have_text("Renamed chat")
    count = rows.count()
    page.get_by_test_id("new-chat").click()
    expect(page.get_by_test_id("tool-call")).to_have_count(0)
    page.get_by_test_id("conversation-title").first.click()
    expect(page.get_by_test_id("tool-call")).to_have_count(1)
    first.get_by_test_id("conversation-delete").click()
    expect(rows).to_have_count(count - 1)


def test_language_follows_the_browser_and_can_be_overridden(
    app: AppHarness, browser: Browser
) -> None:
    assert app.frontend_url
    context = browser.new_context(locale="es-ES")
    try:
        page = context.new_page()
        page.goto(app.frontend_url)
        expect(page.get_by_test_id("send-button")).to_have_text("Enviar")
        page.get_by_test_id("language-select").select_option("ja")
        expect(page.get_by_test_id("send-button")).to_have_text("送信")
        page.get_by_test_id("language-select").select_option("")
        expect(page.get_by_test_id("send-button")).to_have_text("Enviar")
    finally:
        context.close()
