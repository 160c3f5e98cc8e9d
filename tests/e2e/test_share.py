"""A read-only link in a real browser, with two browser contexts: the owner (signed in, in
password mode) shares the conversation; a stranger who never signs in opens the link and
follows the running turn live, read-only; the owner revokes the link and the stranger's
page stops receiving, and a reload shows only that the link was revoked.

The provider is an OpenAI-shaped SSE server on loopback whose stream is held part-way, so
the turn is still running while each step is checked (no sleeps).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect
from reflex.testing import AppHarness

from tests.e2e.axe import assert_accessible
from tests.e2e.harness import add_password_users, running_app
from tests.e2e.scenario import Scenario, calls_script, openai_config, reply
from tests.e2e.tabs import Tab, ask, url_of
from tests.support.sse_server import ReplayServer

pytestmark = pytest.mark.e2e

FIRST_LOAD_MS = 60_000
SESSION_SECRET = "e2e-only-session-secret-share-0123456789"
PASSWORDS = {"alice": "alice-password"}

FIRST_QUESTION = "Say hello"
FIRST_REPLY = "Hello from the stored turn!"
QUESTION = "Plan the key rotation and audit who reads the secrets"
ROTATION = "Planning the key rotation for the payments service"
AUDIT = "Auditing who can read the payments secrets"
CALLS = [
    ("call_r", "grep_search", {"intent": ROTATION, "pattern": "rotation"}),
    ("call_a", "grep_search", {"intent": AUDIT, "pattern": "secrets"}),
]
HELD_AT = '"Pla'  # the first intent's first characters have streamed
# What the settled cards say (grep_search reports its outcome over the intent).
SETTLED = ["Found 1 match for rotation", "Found 1 match for secrets"]
PARTIAL = "The rotation"
DONE = "The rotation plan and the audit are ready."

SHARE_URL = re.compile(r"^https?://[^/]+/share/[A-Za-z0-9_-]{32,}$")


@pytest.fixture(autouse=True)
def default_scripts(scenario: Scenario) -> Iterator[None]:
    scenario.first, scenario.followup = reply(FIRST_REPLY), reply(DONE)
    yield
    scenario.first, scenario.followup = reply(FIRST_REPLY), reply(DONE)


@pytest.fixture(scope="module")
def app(server: ReplayServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppHarness]:
    workdir: Path = tmp_path_factory.mktemp("share")
    (workdir / "notes.md").write_text("key rotation runs monthly; secrets are read by ops\n")
    add_password_users(workdir, PASSWORDS)
    extra = f"workspace: {workdir}\nauth:\n  mode: password\n  secret: {SESSION_SECRET}\n"
    with running_app(workdir, openai_config(server, extra)) as harness:
        yield harness


def owner_with_a_shared_conversation(app: AppHarness, owner: Tab) -> str:
    """alice signs in, has one finished turn, shares the conversation; the link's URL."""
    page = owner.page
    page.goto(url_of(app))
    expect(page.get_by_test_id("login-name")).to_be_visible(timeout=FIRST_LOAD_MS)
    page.get_by_test_id("login-name").fill("alice")
    page.get_by_test_id("login-password").fill(PASSWORDS["alice"])
    page.get_by_test_id("login-submit").click()
    expect(page.get_by_test_id("signed-in-as")).to_have_text("alice", timeout=FIRST_LOAD_MS)
    expect(page.get_by_test_id("share-create")).to_have_count(0)  # no conversation yet
    ask(page, FIRST_QUESTION)
    message = page.get_by_test_id("assistant-message")
    expect(message).to_contain_text(FIRST_REPLY)
    expect(message).to_have_attribute("data-status", "complete")
    page.get_by_test_id("share-create").click()
    share_url = page.get_by_test_id("share-url")
    expect(share_url).to_have_value(SHARE_URL)
    expect(page.get_by_test_id("share-revoke")).to_be_visible()
    url = share_url.input_value()
    assert url.startswith(url_of(app, "/share/"))
    assert_accessible(page)
    return url


def stranger_opens(stranger: Tab, app: AppHarness, url: str) -> Page:
    """A browser that never signed in: the chat asks it to sign in; the link opens."""
    page = stranger.page
    page.goto(url_of(app))
    expect(page.get_by_test_id("login-page")).to_be_visible(timeout=FIRST_LOAD_MS)
    page.goto(url)
    expect(page.get_by_test_id("share-notice")).to_have_text(
        "Read-only view of a shared conversation", timeout=FIRST_LOAD_MS
    )
    expect(page.get_by_test_id("user-message").first).to_have_text(FIRST_QUESTION)
    expect(page.get_by_test_id("assistant-message").first).to_contain_text(FIRST_REPLY)
    return page


def read_only(page: Page) -> None:
    for testid in ("chat-input", "send-button", "stop-button", "new-chat", "share-create"):
        expect(page.get_by_test_id(testid)).to_have_count(0)
    expect(page.get_by_test_id("login-page")).to_have_count(0)
    # Cards are lines that do not open: a share token gets no arguments or results.
    expect(page.locator("[data-testid='tool-call'] button")).to_have_count(0)
    expect(page.get_by_test_id("tool-call-args")).to_have_count(0)


def held_turn(scenario: Scenario) -> tuple[threading.Event, threading.Event]:
    """The next turn's calls wait at HELD_AT, and its reply at PARTIAL, until the test sets
    the first event, then the second."""
    release, release_reply = threading.Event(), threading.Event()
    scenario.first = calls_script(CALLS, hold_when=HELD_AT, release=release)
    scenario.followup = reply(DONE, hold_when=PARTIAL, release=release_reply)
    return release, release_reply


def test_a_stranger_follows_the_running_turn_live_and_read_only(
    app: AppHarness, browser: Browser, contexts: list[BrowserContext], scenario: Scenario
) -> None:
    owner, stranger = Tab(browser, contexts), Tab(browser, contexts)
    url = owner_with_a_shared_conversation(app, owner)
    release, release_reply = held_turn(scenario)
    try:
        ask(owner.page, QUESTION)
        expect(owner.page.get_by_test_id("tool-call-label")).to_have_text("Pla")
        page = stranger_opens(stranger, app, url)
        turn = page.get_by_test_id("assistant-message").nth(1)
        label = page.get_by_test_id("tool-call-label")
        expect(label).to_have_text("Pla")
        expect(page.get_by_test_id("tool-call")).to_have_attribute("data-state", "streaming")
        expect(turn).to_have_attribute("data-status", "streaming")
        read_only(page)
        release.set()
        # The reply is held, so the turn still runs: these labels arrived live.
        expect(label).to_have_text(SETTLED)
        expect(page.get_by_test_id("tool-call").nth(1)).to_have_attribute("data-state", "settled")
        expect(turn).to_contain_text(PARTIAL)
        expect(turn).to_have_attribute("data-status", "streaming")
        read_only(page)
    finally:
        release.set()
        release_reply.set()
    expect(turn).to_contain_text(DONE)
    expect(turn).to_have_attribute("data-status", "complete")
    expect(page.locator(".iu-live, .iu-pulse")).to_have_count(0)
    read_only(page)
    assert_accessible(page)
    # What the stranger sees is what the owner sees, label for label.
    assert label.all_inner_texts() == owner.page.get_by_test_id("tool-call-label").all_inner_texts()
    page.reload()
    expect(page.get_by_test_id("tool-call-label")).to_have_text(SETTLED, timeout=FIRST_LOAD_MS)
    expect(page.get_by_test_id("assistant-message").nth(1)).to_contain_text(DONE)
    read_only(page)
    assert not owner.errors + stranger.errors


def test_revoking_the_link_stops_the_strangers_page_and_a_reload_shows_nothing(
    app: AppHarness, browser: Browser, contexts: list[BrowserContext], scenario: Scenario
) -> None:
    owner, stranger = Tab(browser, contexts), Tab(browser, contexts)
    url = owner_with_a_shared_conversation(app, owner)
    release, release_reply = held_turn(scenario)
    try:
        ask(owner.page, QUESTION)
        page = stranger_opens(stranger, app, url)
        label = page.get_by_test_id("tool-call-label")
        expect(label).to_have_text("Pla")
        message_id = (
            page.get_by_test_id("assistant-message").nth(1).get_attribute("data-message-id")
        )
        assert message_id

        owner.page.get_by_test_id("share-revoke").click()
        expect(owner.page.get_by_test_id("share-url")).to_have_count(0)
        expect(owner.page.get_by_test_id("share-create")).to_be_visible()

        # The stranger's stream ends and the page forgets the conversation.
        expect(page.get_by_test_id("share-revoked")).to_be_visible()
        expect(page.get_by_test_id("share-notice")).to_have_count(0)
        expect(page.get_by_test_id("assistant-message")).to_have_count(0)
        expect(page.get_by_test_id("user-message")).to_have_count(0)
        # The turn goes on for its owner; nothing of what follows reaches the stranger.
        release.set()
        release_reply.set()
        expect(owner.page.get_by_test_id("tool-call-label")).to_have_text(SETTLED)
        expect(owner.page.get_by_test_id("assistant-message").nth(1)).to_contain_text(DONE)
    finally:
        release.set()
        release_reply.set()
    held = page.evaluate(
        "id => [window.iuTurns.replySource(id), window.iuTurns.get(id, 'card:call_a')]",
        message_id,
    )
    assert held[0] in ("", None) and held[1] in ("", None), held
    expect(page.get_by_text(DONE)).to_have_count(0)
    expect(page.get_by_text(SETTLED[1])).to_have_count(0)

    page.reload()
    expect(page.get_by_test_id("share-revoked")).to_be_visible(timeout=FIRST_LOAD_MS)
    expect(page.get_by_test_id("assistant-message")).to_have_count(0)
    expect(page.get_by_test_id("user-message")).to_have_count(0)
    expect(page.get_by_text(FIRST_QUESTION)).to_have_count(0)
    assert_accessible(page)

    # A new link is another address; the revoked one stays revoked.
    owner.page.get_by_test_id("share-create").click()
    expect(owner.page.get_by_test_id("share-url")).to_have_value(SHARE_URL)
    assert owner.page.get_by_test_id("share-url").input_value() != url
    page.goto(url)
    expect(page.get_by_test_id("share-revoked")).to_be_visible(timeout=FIRST_LOAD_MS)
    assert not owner.errors + stranger.errors


def test_an_unknown_link_shows_nothing(
    app: AppHarness, browser: Browser, contexts: list[BrowserContext]
) -> None:
    stranger = Tab(browser, contexts)
    stranger.page.goto(url_of(app, "/share/" + "x" * 32))
    expect(stranger.page.get_by_test_id("share-revoked")).to_be_visible(timeout=FIRST_LOAD_MS)
    expect(stranger.page.get_by_test_id("share-notice")).to_have_count(0)
    expect(stranger.page.get_by_test_id("chat-input")).to_have_count(0)
    assert not stranger.errors
