"""Sessions of password mode in a real browser: `/intents` asks who is signing in and
shows captured calls to operators only; signing out in a tab shared by two people leaves
nothing of the first (also while their turn streams, and when it ends); signing out
everywhere ends the session of another browser.

The app serves the offline demo model and, as `replay`, an OpenAI-shaped loopback server
whose stream can be held part-way, so a turn is still streaming while the tab signs out.
What the server sends is read off the websocket too: a var the page does not render is
still data the browser got.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, expect
from reflex.testing import AppHarness

from intent_ui.store import users as user_store
from intent_ui.store.capture_events import add_capture_events
from intent_ui.store.db import init_db
from tests.e2e.harness import database_path, running_app
from tests.e2e.scenario import Scenario, calls_script, reply
from tests.e2e.tabs import Tab, ask, url_of
from tests.e2e.test_users import (
    FIRST_LOAD_MS,
    SESSION_SECRET,
    monkeypatch_db_url,
    sign_in,
    wait_for_reply,
)
from tests.support.sse_server import ReplayServer

pytestmark = pytest.mark.e2e

PASSWORDS = {"alice": "alice-password", "bob": "bob-password", "carol": "carol-password"}
CAPTURED_INTENT = "Booking a ski trip to Munich"
ALICE_MESSAGE = "alice asks about the payroll export"
ALICE_INTENT = "Searching for the payroll export of alice"
HELD = "Searching for the payroll"
STREAMING = re.compile("^Searching for the payroll")
ALICE_CALLS = [("call_p", "grep_search", {"intent": ALICE_INTENT, "pattern": "payroll"})]


@pytest.fixture(autouse=True)
def default_scripts(scenario: Scenario) -> Iterator[None]:
    yield
    scenario.first, scenario.followup = reply("Hello!"), reply("Done.")


@pytest.fixture(scope="module")
def app(server: ReplayServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppHarness]:
    workdir: Path = tmp_path_factory.mktemp("sign-out")
    (workdir / "notes.md").write_text("payroll export runs on Fridays\n")
    with monkeypatch_db_url(f"sqlite:///{database_path(workdir)}") as url:
        engine = init_db(url)
        for name, password in PASSWORDS.items():
            user_store.add_user(engine, name, password)
        add_capture_events(
            engine,
            [
                {
                    "server": "bookings",
                    "tool": "book_car",
                    "intent": CAPTURED_INTENT,
                    "intent_context": "required",
                    "intent_source": "context_parameter",
                    "status": "ok",
                    "duration_ms": 3.0,
                    "timestamp": 1.0,
                }
            ],
        )
    config = (
        "endpoints:\n"
        "  - kind: demo\n    pacing_ms: 0\n"
        "  - name: replay\n    kind: openai\n"
        f"    base_url: {server.base_url}/v1\n"
        "    api_key: test-key\n    models: [gpt-4o-mini]\n"
        f"workspace: {workdir}\n"
        f"auth:\n  mode: password\n  secret: {SESSION_SECRET}\n  operators: [alice]\n"
    )
    with running_app(workdir, config) as harness:
        yield harness


def signed_in(tab: Tab, app: AppHarness, name: str) -> None:
    tab.page.goto(url_of(app))
    sign_in(tab.page, name, PASSWORDS[name])
    expect(tab.page.get_by_test_id("signed-in-as")).to_have_text(name, timeout=FIRST_LOAD_MS)


def test_intents_asks_for_a_sign_in_and_shows_captured_calls_to_operators_only(
    app: AppHarness, browser: Browser, contexts: list[Any]
) -> None:
    stranger = Tab(browser, contexts)
    stranger.page.goto(url_of(app, "/intents"))
    expect(stranger.page.get_by_test_id("login-name")).to_be_visible(timeout=FIRST_LOAD_MS)
    expect(stranger.page.get_by_test_id("capture-row")).to_have_count(0)
    assert not stranger.received(CAPTURED_INTENT)
    assert not stranger.received("book_car")

    bob = Tab(browser, contexts)
    signed_in(bob, app, "bob")
    bob.page.goto(url_of(app, "/intents"))
    expect(bob.page.get_by_test_id("capture-restricted")).to_contain_text("auth.operators")
    expect(bob.page.get_by_test_id("capture-row")).to_have_count(0)
    assert not bob.received("book_car")

    alice = Tab(browser, contexts)
    signed_in(alice, app, "alice")
    alice.page.goto(url_of(app, "/intents"))
    row = alice.page.get_by_test_id("capture-row")
    expect(row).to_have_attribute("data-tool", "book_car")
    expect(row.get_by_test_id("capture-row-intent")).to_have_text(CAPTURED_INTENT)
    expect(alice.page.get_by_test_id("capture-restricted")).to_have_count(0)
    assert not stranger.errors + bob.errors + alice.errors


def test_signing_out_mid_turn_leaves_nothing_of_alice_in_the_tab_bob_signs_into(
    app: AppHarness, browser: Browser, contexts: list[Any], scenario: Scenario
) -> None:
    release = threading.Event()
    scenario.first = calls_script(ALICE_CALLS, hold_when=HELD, release=release)
    scenario.followup = reply("The payroll export is in notes.md.")
    shared = Tab(browser, contexts)
    watcher = Tab(browser, contexts)  # alice's own second browser: sees her turn end
    try:
        signed_in(shared, app, "alice")
        page = shared.page
        page.get_by_test_id("endpoint-select").select_option("replay")
        ask(page, ALICE_MESSAGE)
        expect(page.get_by_test_id("tool-call-label")).to_have_text(STREAMING)
        signed_in(watcher, app, "alice")
        watcher.page.get_by_test_id("conversation-title").click()
        expect(watcher.page.get_by_test_id("tool-call-label")).to_have_text(STREAMING)

        page.get_by_test_id("logout").click()
        signed_out_at = len(shared.frames)
        sign_in(page, "bob", PASSWORDS["bob"])
        expect(page.get_by_test_id("signed-in-as")).to_have_text("bob")
        expect(page.get_by_test_id("conversation-row")).to_have_count(0)
        expect(page.get_by_test_id("tool-call")).to_have_count(0)
        expect(page.get_by_test_id("user-message")).to_have_count(0)
        expect(page.get_by_test_id("endpoint-select")).to_have_value("demo")
    finally:
        release.set()
    # Alice's turn ends (her other browser shows it): her list does not come back here.
    wait_for_reply(watcher.page, 1)
    expect(page.get_by_test_id("conversation-row")).to_have_count(0)
    ask(page, "list the files")  # bob's own turn round-trips
    wait_for_reply(page, 1)
    expect(page.get_by_test_id("conversation-row")).to_have_count(1)
    expect(page.get_by_test_id("conversation-title")).to_have_text("list the files")
    expect(page.get_by_text(ALICE_MESSAGE)).to_have_count(0)
    for marker in (ALICE_MESSAGE, HELD, "call_p", "payroll export is in"):
        assert not shared.received(marker, since=signed_out_at), marker
    assert not shared.errors + watcher.errors


def test_signing_out_everywhere_ends_the_session_of_another_browser(
    app: AppHarness, browser: Browser, contexts: list[Any]
) -> None:
    here, there = Tab(browser, contexts), Tab(browser, contexts)
    signed_in(here, app, "carol")
    signed_in(there, app, "carol")
    ask(there.page, "list the files")
    wait_for_reply(there.page, 1)

    here.page.get_by_test_id("logout-everywhere").click()
    expect(here.page.get_by_test_id("login-name")).to_be_visible()
    there.page.reload()
    expect(there.page.get_by_test_id("login-name")).to_be_visible(timeout=FIRST_LOAD_MS)
    expect(there.page.get_by_test_id("signed-in-as")).to_have_count(0)
    expect(there.page.get_by_test_id("conversation-row")).to_have_count(0)

    sign_in(there.page, "carol", PASSWORDS["carol"])  # a new sign-in is a new session
    expect(there.page.get_by_test_id("conversation-title")).to_have_text("list the files")
    assert not here.errors + there.errors
