"""OpenAPI uploads in a real browser, under `auth: password`.

An import bomb (a few KB whose shared `$ref`s inline to millions of nodes) uploaded in one
tab is refused with the limit named, while another user's turn keeps streaming in another
tab: the import's work is bounded and runs off the event loop that streams every turn. And
a document belongs to the user who uploaded it: another user neither sees it nor loses
their own document for the same API.

The chat's provider is the loopback OpenAI-shaped SSE server (`scenario`); the database a
real SQLite file, read back through the store.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect
from reflex.testing import AppHarness
from sqlalchemy import Engine

from intent_ui.store import actions as action_store
from intent_ui.store import users as user_store
from intent_ui.store.db import init_db
from tests.e2e.harness import database_path, running_app
from tests.e2e.scenario import Scenario, calls_script, openai_config, reply
from tests.e2e.test_users import SESSION_SECRET, monkeypatch_db_url, sign_in
from tests.support.openapi_bombs import ref_bomb
from tests.support.sse_server import ReplayServer

pytestmark = pytest.mark.e2e

FIRST_LOAD_MS = 60_000
"""The first visit of a page compiles it (dev build) and loads the tokenizer."""
PASSWORDS = {"alice": "alice-upload-password", "bob": "bob-upload-password"}
INTENTS = [
    "Searching the whole workspace for the marker that the slow stream keeps writing out",
    "Reading every match of the marker one character at a time while the other tab imports",
]
BOMB_REFUSED = "expands to more than 100,000 schema nodes through shared $refs"


def pets(operation_id: str, title: str) -> dict[str, Any]:
    return {
        "openapi": "3.0.0",
        "info": {"title": title},
        "servers": [{"url": "https://pets.example"}],
        "paths": {"/pets": {"get": {"operationId": operation_id, "summary": title}}},
    }


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("uploads")


@pytest.fixture(scope="module")
def app(server: ReplayServer, workdir: Path) -> Iterator[AppHarness]:
    with monkeypatch_db_url(f"sqlite:///{database_path(workdir)}") as url:
        engine = init_db(url)
        for name, password in PASSWORDS.items():
            user_store.add_user(engine, name, password)
    config = openai_config(server) + (
        f"workspace: {workdir}\nauth:\n  mode: password\n  secret: {SESSION_SECRET}\n"
    )
    with running_app(workdir, config) as harness:
        yield harness


@pytest.fixture(scope="module")
def engine(app: AppHarness, workdir: Path) -> Engine:
    return init_db(f"sqlite:///{database_path(workdir)}")


def signed_in(browser: Browser, contexts: list[BrowserContext], app: AppHarness, name: str) -> Page:
    """A tab of its own (cookies and all) signed in as `name`, on the chat page."""
    assert app.frontend_url is not None
    context = browser.new_context()
    contexts.append(context)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(app.frontend_url)
    sign_in(page, name, PASSWORDS[name])
    expect(page.get_by_test_id("signed-in-as")).to_have_text(name, timeout=FIRST_LOAD_MS)
    return page


def open_builder(page: Page, app: AppHarness) -> None:
    assert app.frontend_url is not None
    page.goto(app.frontend_url.rstrip("/") + "/agents")
    expect(page.get_by_test_id("describe-all-toggle").first).to_be_visible(timeout=FIRST_LOAD_MS)


def upload(page: Page, path: Path, document: dict[str, Any]) -> None:
    path.write_text(json.dumps(document))
    page.locator('[data-testid="action-upload"] input[type="file"]').set_input_files(path)


def action_switch(page: Page, tool_id: str) -> Any:
    return page.locator(f'[data-testid="describe-intent-toggle"][data-tool="{tool_id}"]')


LABEL_TIMES_JS = """
() => {
  window.__labelTimes = [];
  let last = '';
  new MutationObserver(() => {
    const labels = [...document.querySelectorAll('[data-testid="tool-call-label"]')]
      .map(label => label.innerText).join('|');
    if (labels !== last) { last = labels; window.__labelTimes.push(Date.now()); }
  }).observe(document.body, {subtree: true, childList: true, characterData: true});
}
"""
"""Records when the page's card labels change (each arriving fragment of an intent)."""

REFUSED_AT_JS = """
text => {
  window.__refusedAt = null;
  new MutationObserver(() => {
    const error = document.querySelector('[data-testid="builder-error"]');
    if (window.__refusedAt === null && error && error.innerText.includes(text)) {
      window.__refusedAt = Date.now();
    }
  }).observe(document.body, {subtree: true, childList: true, characterData: true});
}
"""
"""Records when the builder first shows the refusal."""


def test_an_import_bomb_is_refused_while_another_users_turn_keeps_streaming(
    app: AppHarness,
    engine: Engine,
    browser: Browser,
    contexts: list[BrowserContext],
    scenario: Scenario,
    tmp_path: Path,
) -> None:
    release = threading.Event()
    calls = [
        (f"call_{i}", "grep_search", {"intent": intent, "pattern": "marker"})
        for i, intent in enumerate(INTENTS)
    ]
    # One argument character per chunk, paced: the intents type out for several seconds,
    # then the stream waits for `release`, so the turn is still running when checked.
    scenario.first = calls_script(
        calls, delay_s=0.03, fragment_size=1, hold_when=INTENTS[-1], release=release
    )
    scenario.followup = reply("Done.")
    streaming = signed_in(browser, contexts, app, "alice")
    importing = signed_in(browser, contexts, app, "bob")
    open_builder(importing, app)
    importing.evaluate(REFUSED_AT_JS, BOMB_REFUSED)
    streaming.evaluate(LABEL_TIMES_JS)
    try:
        streaming.get_by_test_id("chat-input").fill("Find the marker")
        streaming.get_by_test_id("send-button").click()
        label = streaming.get_by_test_id("tool-call-label")
        expect(label.first).to_contain_text("Searching the", timeout=FIRST_LOAD_MS)

        started = importing.evaluate("Date.now()")
        upload(importing, tmp_path / "bomb.json", ref_bomb(levels=6))
        expect(importing.get_by_test_id("builder-error")).to_contain_text(
            f"bomb.json: the OpenAPI document {BOMB_REFUSED}"
        )
        refused = importing.evaluate("window.__refusedAt")
        arrived = streaming.evaluate("window.__labelTimes")
        # While the bomb was being read and refused, the other tab's labels kept arriving.
        assert any(started < at < refused for at in arrived), (started, refused, arrived)
        expect(streaming.get_by_test_id("assistant-message")).to_have_attribute(
            "data-status", "streaming"
        )
        expect(label).to_have_count(2)
        expect(label.last).to_have_text(INTENTS[-1])
    finally:
        release.set()
    expect(streaming.get_by_test_id("assistant-message")).to_have_attribute(
        "data-status", "complete"
    )
    expect(streaming.get_by_test_id("assistant-message")).to_contain_text("Done.")
    bob = user_store.ensure_user(engine, "bob").id
    assert action_store.list_action_documents(engine, owner=bob) == []


def test_an_uploaded_document_belongs_to_the_user_who_uploaded_it(
    app: AppHarness,
    engine: Engine,
    browser: Browser,
    contexts: list[BrowserContext],
    tmp_path: Path,
) -> None:
    alice = signed_in(browser, contexts, app, "alice")
    open_builder(alice, app)
    upload(alice, tmp_path / "alice.json", pets("listPets", "Alice's pets"))
    expect(alice.get_by_test_id("builder-notice")).to_contain_text("Imported 1 action")
    alices_action = "listPets_action_pets---example"
    expect(action_switch(alice, alices_action)).to_be_visible()

    bob = signed_in(browser, contexts, app, "bob")
    open_builder(bob, app)
    expect(action_switch(bob, alices_action)).to_have_count(0)
    expect(bob.get_by_text("Alice's pets")).to_have_count(0)
    # Bob's own document for the same API is his, and leaves Alice's in place.
    upload(bob, tmp_path / "bob.json", pets("adoptPet", "Bob's pets"))
    expect(action_switch(bob, "adoptPet_action_pets---example")).to_be_visible()
    expect(action_switch(bob, alices_action)).to_have_count(0)

    alice.reload()
    expect(action_switch(alice, alices_action)).to_be_visible(timeout=FIRST_LOAD_MS)
    expect(action_switch(alice, "adoptPet_action_pets---example")).to_have_count(0)
    titles = {
        name: [
            d.title
            for d in action_store.list_action_documents(
                engine, owner=user_store.ensure_user(engine, name).id
            )
        ]
        for name in PASSWORDS
    }
    assert titles == {"alice": ["Alice's pets"], "bob": ["Bob's pets"]}
