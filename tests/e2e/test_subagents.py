"""Subagents in a real browser, on the offline demo model.

The agent "Lead" delegates the audit of the callback router to the saved agent
"Auditor", whose `read_file` asks first. The parent card is labelled by the call's
intent; under it the ticker follows the child live (its latest label, running time,
calls so far, model); the child's approval waits in the parent turn under the child's
name and, approved, reaches the child, whose read runs for real over the workspace.
Opening the card shows the child's calls as cards; a reload shows the same.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest
from playwright.sync_api import Browser, Locator, Page, expect
from reflex.testing import AppHarness

from intent_ui.store import agents as agent_store
from intent_ui.store.db import init_db
from intent_ui.store.models import LOCAL_USER_ID
from tests.e2e.harness import database_path, running_app

pytestmark = pytest.mark.e2e

FIRST_LOAD_MS = 60_000
"""The first page of a module waits for the dev build."""

DELEGATE = "delegate the audit of the callback router to Auditor"
INTENT = "Delegating the audit of the callback router"
READ = "Reading callbacks/router.py"

# Every distinct text the ticker showed, recorded in the page as it changes.
RECORD_TICKER = """
window.__tickers = [];
new MutationObserver(() => {
  const ticker = document.querySelector('[data-testid="subagent-ticker"]');
  const text = ticker ? ticker.textContent : "";
  const seen = window.__tickers;
  if (text && seen[seen.length - 1] !== text) seen.push(text);
}).observe(document.body, { subtree: true, childList: true, characterData: true });
"""


def add_agents(workdir: Path) -> None:
    """The two agents, stored before the app starts."""
    workdir.mkdir(parents=True, exist_ok=True)
    url = f"sqlite:///{database_path(workdir)}"
    with mock.patch.dict(os.environ, {"DB_URL": url}):
        engine = init_db(url)
        agent_store.create_agent(
            engine, owner=LOCAL_USER_ID, name="Lead", tools=["subagent"], tool_options={}
        )
        agent_store.create_agent(
            engine,
            owner=LOCAL_USER_ID,
            name="Auditor",
            tools=["grep_search", "read_file"],
            tool_options={"read_file": {"require_approval": True}},
        )


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppHarness]:
    workdir = tmp_path_factory.mktemp("subagents")
    workspace = workdir / "workspace"
    (workspace / "callbacks").mkdir(parents=True)
    (workspace / "callbacks" / "router.py").write_text(
        '"""The callback router: where OAuth callbacks land."""\n\n'
        "def route(path):\n    return path  # the callback router\n"
    )
    add_agents(workdir)
    config = f"endpoints:\n  - kind: demo\n    pacing_ms: 15\nworkspace: {workspace}\n"
    with running_app(workdir, config) as harness:
        yield harness


@pytest.fixture
def page(app: AppHarness, browser: Browser) -> Iterator[Page]:
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    assert app.frontend_url is not None
    page.goto(app.frontend_url)
    expect(page.get_by_test_id("chat-input")).to_be_visible(timeout=FIRST_LOAD_MS)
    yield page
    context.close()
    assert not errors, f"page errors: {errors}"


def parent_card(page: Page) -> Locator:
    """The turn's own card: the first `tool-call` of the last turn."""
    return page.get_by_test_id("assistant-message").last.get_by_test_id("tool-call").first


def test_the_builder_offers_the_subagent_tool(app: AppHarness, page: Page) -> None:
    assert app.frontend_url is not None
    page.goto(app.frontend_url.rstrip("/") + "/agents")
    page.get_by_test_id("agent-open").first.click()
    toggle = page.locator('[data-testid="approval-toggle"][data-tool="subagent"]')
    expect(toggle).to_have_count(1, timeout=FIRST_LOAD_MS)


def test_the_ticker_follows_the_child_and_its_approval_bubbles_up(
    app: AppHarness, page: Page
) -> None:
    page.get_by_test_id("new-chat").click()
    page.get_by_test_id("agent-select").select_option(label="Lead")
    page.evaluate(RECORD_TICKER)
    page.get_by_test_id("chat-input").fill(DELEGATE)
    page.get_by_test_id("send-button").click()

    card = parent_card(page)
    expect(card.get_by_test_id("tool-call-label").first).to_have_text(INTENT, timeout=FIRST_LOAD_MS)
    ticker = card.get_by_test_id("subagent-ticker")
    # The child's read waits for the reader: the approval is the parent turn's, named.
    approval = card.get_by_test_id("approval-card")
    expect(approval).to_have_attribute("data-state", "waiting", timeout=FIRST_LOAD_MS)
    expect(approval.get_by_test_id("approval-intent")).to_have_text(f"Auditor: Approve: {READ}")
    expect(page).to_have_title(re.compile(r"^Approval needed · "))
    expect(ticker).to_have_attribute("data-live", "true")
    expect(ticker.get_by_test_id("subagent-latest")).to_have_text(READ)
    expect(ticker.get_by_test_id("subagent-calls")).to_have_text("2 calls")
    expect(ticker).to_contain_text("demo")
    # Live: the ticker went through the child's first call before its second, and its
    # running time counts up while the child waits.
    seen: list[str] = page.evaluate("window.__tickers")
    first = next(i for i, text in enumerate(seen) if "1 call" in text)
    assert any("2 calls" in text for text in seen[first:]), seen
    clock = ticker.get_by_test_id("subagent-elapsed")
    before = clock.inner_text()
    expect(clock).not_to_have_text(before, timeout=5_000)

    approval.get_by_test_id("approval-approve").click()
    expect(card).to_have_attribute("data-state", "settled", timeout=FIRST_LOAD_MS)
    expect(ticker).to_have_attribute("data-live", "false")
    expect(page).not_to_have_title(re.compile("Approval needed"))
    reply = page.get_by_test_id("assistant-message").last
    expect(reply).to_contain_text("Auditor reported back", timeout=FIRST_LOAD_MS)
    # The read ran for real: the child's answer cites the file.
    expect(reply).to_contain_text("router.py")

    # Opening the card shows the child's calls as cards; a reload shows the same (the
    # page remembers the card open).
    card = parent_card(page)
    expect(card.get_by_test_id("subagent-children")).to_have_count(0)
    card.locator(".iu-card-head").first.click()
    for attempt in range(2):
        card = parent_card(page)
        children = card.get_by_test_id("subagent-children").get_by_test_id("tool-call")
        expect(children).to_have_count(2)
        expect(children.nth(0)).to_have_attribute("data-state", "settled")
        expect(children.nth(1)).to_have_attribute("data-state", "settled")
        expect(children.nth(1)).to_contain_text("Approved by you · once")
        expect(card.get_by_test_id("subagent-calls")).to_have_text("2 calls")
        # An opened child card shows its arguments and result like any card.
        if attempt == 0:
            children.nth(1).locator(".iu-card-head").click()
        expect(children.nth(1).get_by_test_id("tool-call-result")).to_contain_text("router")
        if attempt == 0:
            page.reload()
            expect(page.get_by_test_id("chat-input")).to_be_visible(timeout=FIRST_LOAD_MS)
