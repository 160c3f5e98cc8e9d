"""Two users in two browser contexts: neither sees, opens, renames or deletes the other's
conversation or agent, also when the browser sends the raw Reflex event with the other's
id; memories stay apart; a turn starts only through `send`.

Raw events: Reflex's client calls `window.__reflex_otel.onEventSend(event)` (its tracing
hook) just before it emits an event on the websocket. An init script installs that hook
and, when armed, rewrites the next matching event into the one the test wants to send,
the way a hand-written websocket client would.

Header mode runs on the offline demo model behind a trusted `X-Forwarded-User` header (set
per context with `extra_http_headers`, which Chromium also sends on the websocket
handshake); password mode signs in on `/login`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect
from reflex.testing import AppHarness
from sqlalchemy import Engine

from intent_ui.store import agents as agent_store
from intent_ui.store import conversations as conv_store
from intent_ui.store import users as user_store
from intent_ui.store.capture_events import add_capture_events
from intent_ui.store.db import dispose_engines, init_db
from intent_ui.store.memory import DbMemoryStore
from intent_ui.ui.builder_state import AgentsState
from intent_ui.ui.chat_state import ChatState
from intent_ui.ui.live_view import LiveView
from tests.e2e.harness import running_app
from tests.e2e.tabs import ask, new_agent

pytestmark = pytest.mark.e2e

FIRST_LOAD_MS = 60_000
SECRET_TEXT = "alice private note"
SESSION_SECRET = "e2e-only-session-secret-0123456789abcdef"

RAW_EVENT_HOOK = """
window.__rawEvent = null;
window.__reflex_otel = {
  onEventSend(event) {
    const raw = window.__rawEvent;
    if (raw && event.name.endsWith(raw.trigger)) {
      window.__rawEvent = null;
      event.name = raw.name;
      event.payload = raw.payload;
    }
  },
};
"""


def send_raw(page: Page, trigger_testid: str, trigger: str, name: str, **payload: Any) -> None:
    """Send `name(**payload)` as the event the next click on `trigger_testid` would send."""
    page.evaluate(
        "raw => { window.__rawEvent = raw; }",
        {"trigger": trigger, "name": name, "payload": payload},
    )
    page.get_by_test_id(trigger_testid).first.click()
    page.wait_for_function("window.__rawEvent === null")  # the hook sent it


def chat_event(handler: str) -> str:
    return f"{ChatState.get_full_name()}.{handler}"


def round_trip(page: Page) -> None:
    """Rename the page's own (first) conversation to its own title: once the rename box
    has come and gone, the server has handled every event this page sent before (one
    socket's events are handled in order). Renaming re-renders no messages, so whatever
    an earlier raw event put on the page stays there to be seen."""
    page.get_by_test_id("conversation-rename").first.click()
    box = page.get_by_test_id("conversation-rename-input")
    expect(box).to_be_visible()
    box.press("Enter")
    expect(box).to_have_count(0)


def wait_for_reply(page: Page, count: int) -> None:
    replies = page.get_by_test_id("assistant-message")
    expect(replies).to_have_count(count)
    expect(replies.last).to_have_attribute("data-status", "complete")


def open_as(
    browser: Browser, contexts: list[BrowserContext], url: str, headers: dict[str, str]
) -> Page:
    context = browser.new_context(extra_http_headers=headers)
    contexts.append(context)
    context.add_init_script(RAW_EVENT_HOOK)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(url)
    return page


# --- header mode --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def header_workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("users-header")


@pytest.fixture(scope="module")
def header_app(header_workdir: Path) -> Iterator[AppHarness]:
    workspace = header_workdir / "workspace"
    workspace.mkdir()
    (workspace / "notes.md").write_text("# notes\n")
    config = (
        "endpoints:\n  - kind: demo\n    pacing_ms: 0\n"
        f"workspace: {workspace}\n"
        "auth:\n  mode: header\n"
    )
    with running_app(header_workdir, config) as harness:
        yield harness


@contextlib.contextmanager
def monkeypatch_db_url(url: str) -> Iterator[str]:
    """`DB_URL` set to `url` (it wins over an explicit URL in `init_db`), then restored."""
    saved = os.environ.get("DB_URL")
    os.environ["DB_URL"] = url
    try:
        yield url
    finally:
        dispose_engines()
        if saved is None:
            os.environ.pop("DB_URL", None)
        else:
            os.environ["DB_URL"] = saved


@pytest.fixture(scope="module")
def header_engine(header_app: AppHarness, header_workdir: Path) -> Iterator[Engine]:
    # The harness has set DB_URL to this database for as long as the app runs.
    yield init_db(f"sqlite:///{header_workdir / 'intent_ui.db'}")


def as_user(name: str) -> dict[str, str]:
    return {"X-Forwarded-User": name}


def test_neither_user_can_reach_the_others_conversation(
    header_app: AppHarness, header_engine: Engine, browser: Browser, contexts: list[Any]
) -> None:
    url = header_app.frontend_url
    assert url
    alice = open_as(browser, contexts, url, as_user("alice"))
    expect(alice.get_by_test_id("signed-in-as")).to_have_text("alice", timeout=FIRST_LOAD_MS)
    ask(alice, SECRET_TEXT)
    wait_for_reply(alice, 1)
    row = alice.get_by_test_id("conversation-row")
    expect(row).to_have_count(1)
    alices_chat = row.get_attribute("data-conversation-id")
    assert alices_chat

    bob = open_as(browser, contexts, url, as_user("bob"))
    expect(bob.get_by_test_id("signed-in-as")).to_have_text("bob", timeout=FIRST_LOAD_MS)
    expect(bob.get_by_test_id("conversation-row")).to_have_count(0)
    ask(bob, "list the files")
    wait_for_reply(bob, 1)
    expect(bob.get_by_test_id("conversation-row")).to_have_count(1)
    # Guessed ids, sent as raw events.
    for handler in ("select_chat", "start_rename"):
        send_raw(bob, "new-chat", ".new_chat", chat_event(handler), conversation_id=alices_chat)
        round_trip(bob)
        expect(bob.get_by_text(SECRET_TEXT)).to_have_count(0)
        # An id bob does not own opens nothing: the thread shows no messages at all.
        expect(bob.get_by_test_id("user-message")).to_have_count(0)
    send_raw(bob, "new-chat", ".new_chat", chat_event("rename_chat"), form={"title": "pwned"})
    send_raw(bob, "new-chat", ".new_chat", chat_event("delete_chat"), conversation_id=alices_chat)
    round_trip(bob)
    expect(bob.get_by_test_id("conversation-row")).to_have_count(1)
    expect(bob.get_by_test_id("conversation-title")).to_have_text("list the files")

    alice.reload()
    expect(alice.get_by_test_id("conversation-title")).to_have_text(SECRET_TEXT)
    expect(alice.get_by_test_id("user-message")).to_have_text(SECRET_TEXT)
    stored = conv_store.get_conversation(
        header_engine, alices_chat, owner=user_store.ensure_user(header_engine, "alice").id
    )
    assert stored is not None and stored.title == SECRET_TEXT


def test_neither_user_can_reach_the_others_agent(
    header_app: AppHarness, header_engine: Engine, browser: Browser, contexts: list[Any]
) -> None:
    url = header_app.frontend_url
    assert url
    agents_url = url.rstrip("/") + "/agents"
    alice = open_as(browser, contexts, agents_url, as_user("alice"))
    expect(alice.get_by_test_id("agent-new")).to_be_visible(timeout=FIRST_LOAD_MS)
    agent_id = new_agent(alice, "Alice's reviewer")

    bob = open_as(browser, contexts, agents_url, as_user("bob"))
    expect(bob.get_by_test_id("agent-new")).to_be_visible(timeout=FIRST_LOAD_MS)
    expect(bob.get_by_test_id("agent-row")).to_have_count(0)
    builder = AgentsState.get_full_name()
    for handler in ("open_agent", "duplicate", "delete"):
        send_raw(bob, "agent-new", ".new_agent", f"{builder}.{handler}", agent_id=agent_id)
    # Bob's own save round-trips after the raw events.
    bob.get_by_test_id("agent-name").fill("Bob's")
    bob.get_by_test_id("agent-save").click()
    expect(bob.get_by_test_id("agent-row")).to_have_count(1)
    expect(bob.get_by_test_id("agent-row")).to_have_text("Bob's0 tools")
    expect(bob.get_by_text("Alice's reviewer")).to_have_count(0)
    # The chat's agent picker does not offer it either, even when picked by a raw event.
    bob.goto(url)
    picker = bob.get_by_test_id("agent-select")
    expect(picker.locator("option")).to_have_count(2)  # default + Bob's
    send_raw(bob, "new-chat", ".new_chat", chat_event("set_agent"), value=agent_id)
    expect(picker).not_to_have_value(agent_id)

    alice_id = user_store.ensure_user(header_engine, "alice").id
    kept = agent_store.get_agent(header_engine, agent_id, owner=alice_id)
    assert kept is not None and kept.name == "Alice's reviewer"


def test_a_shared_agent_is_read_only_for_others(
    header_app: AppHarness, header_engine: Engine, browser: Browser, contexts: list[Any]
) -> None:
    url = header_app.frontend_url
    assert url
    agents_url = url.rstrip("/") + "/agents"
    carol = open_as(browser, contexts, agents_url, as_user("carol"))
    expect(carol.get_by_test_id("agent-new")).to_be_visible(timeout=FIRST_LOAD_MS)
    agent_id = new_agent(carol, "Team helper")
    carol.get_by_test_id("agent-share").click()
    expect(carol.get_by_test_id("agent-share")).to_have_attribute("aria-pressed", "true")

    dave = open_as(browser, contexts, agents_url, as_user("dave"))
    shared = dave.get_by_test_id("agent-row").filter(has_text="Team helper")
    expect(shared).to_have_attribute("data-shared", "true", timeout=FIRST_LOAD_MS)
    expect(shared).to_have_attribute("data-own", "false")
    expect(shared.get_by_test_id("agent-delete")).to_have_count(0)
    shared.get_by_test_id("agent-open").click()
    expect(dave.get_by_test_id("agent-read-only")).to_be_visible()
    dave.get_by_test_id("agent-name").fill("Dave's now")
    dave.get_by_test_id("agent-save").click()
    expect(dave.get_by_test_id("builder-error")).to_contain_text("read-only")
    builder = AgentsState.get_full_name()
    send_raw(dave, "agent-new", ".new_agent", f"{builder}.delete", agent_id=agent_id)
    expect(dave.get_by_test_id("builder-error")).to_contain_text("Only its owner")
    shared.get_by_test_id("agent-duplicate").click()
    expect(dave.get_by_test_id("agent-row").filter(has_text="Copy of Team helper")).to_have_count(1)
    carol_id = user_store.ensure_user(header_engine, "carol").id
    kept = agent_store.get_agent(header_engine, agent_id, owner=carol_id)
    assert kept is not None and kept.name == "Team helper"


def test_memories_belong_to_the_user_who_made_them(
    header_app: AppHarness, header_engine: Engine, browser: Browser, contexts: list[Any]
) -> None:
    url = header_app.frontend_url
    assert url
    erin = open_as(browser, contexts, url, as_user("erin"))
    expect(erin.get_by_test_id("signed-in-as")).to_have_text("erin", timeout=FIRST_LOAD_MS)
    ask(erin, "remember editor is helix")
    wait_for_reply(erin, 1)
    memory = DbMemoryStore(header_engine)
    erin_id = user_store.ensure_user(header_engine, "erin").id
    frank_id = user_store.ensure_user(header_engine, "frank").id
    with ThreadPoolExecutor(1) as pool:  # Playwright's loop runs in this thread
        assert pool.submit(asyncio.run, memory.get_all(erin_id)).result() == {"editor": "helix"}
        assert pool.submit(asyncio.run, memory.get_all(frank_id)).result() == {}


def test_a_turn_starts_only_through_send(
    header_app: AppHarness, browser: Browser, contexts: list[Any]
) -> None:
    url = header_app.frontend_url
    assert url
    gina = open_as(browser, contexts, url, as_user("gina"))
    expect(gina.get_by_test_id("signed-in-as")).to_have_text("gina", timeout=FIRST_LOAD_MS)
    ask(gina, "list the files")
    wait_for_reply(gina, 1)
    # The live view's own event only follows a running turn; sent raw, it starts nothing.
    live = f"{LiveView.get_full_name()}.follow"
    send_raw(gina, "conversation-title", ".select_chat", live)
    ask(gina, "list the files again")
    wait_for_reply(gina, 2)
    gina.reload()
    expect(gina.get_by_test_id("assistant-message")).to_have_count(2)
    expect(gina.get_by_test_id("user-message")).to_have_count(2)


def test_intents_is_refused_without_the_header_and_shown_to_operators_only(
    header_app: AppHarness, header_engine: Engine, browser: Browser, contexts: list[Any]
) -> None:
    captured = "Booking a ski trip to Munich"
    add_capture_events(
        header_engine,
        [
            {
                "tool": "book_car",
                "intent": captured,
                "intent_context": "required",
                "intent_source": "context_parameter",
                "status": "ok",
                "duration_ms": 1.0,
                "timestamp": 1.0,
            }
        ],
    )
    url = header_app.frontend_url
    assert url
    intents = url.rstrip("/") + "/intents"
    page = open_as(browser, contexts, intents, {})
    expect(page.get_by_test_id("auth-error")).to_contain_text(
        "no X-Forwarded-User header", timeout=FIRST_LOAD_MS
    )
    expect(page.get_by_test_id("capture-row")).to_have_count(0)
    expect(page.get_by_text(captured)).to_have_count(0)
    # Signed in, but the configuration names no operators: told why, shown nothing.
    hank = open_as(browser, contexts, intents, as_user("hank"))
    expect(hank.get_by_test_id("capture-restricted")).to_contain_text(
        "operators only", timeout=FIRST_LOAD_MS
    )
    expect(hank.get_by_test_id("capture-row")).to_have_count(0)
    expect(hank.get_by_text(captured)).to_have_count(0)


def test_a_request_without_the_header_is_refused(
    header_app: AppHarness, browser: Browser, contexts: list[Any]
) -> None:
    url = header_app.frontend_url
    assert url
    page = open_as(browser, contexts, url, {})
    expect(page.get_by_test_id("auth-error")).to_contain_text(
        "no X-Forwarded-User header", timeout=FIRST_LOAD_MS
    )
    expect(page.get_by_test_id("conversation-row")).to_have_count(0)
    ask(page, "list the files")
    expect(page.get_by_test_id("user-message")).to_have_count(0)


# --- password mode ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def password_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppHarness]:
    workdir = tmp_path_factory.mktemp("users-password")
    with monkeypatch_db_url(f"sqlite:///{workdir / 'intent_ui.db'}") as url:
        engine = init_db(url)
        user_store.add_user(engine, "alice", "alice-password")
        user_store.add_user(engine, "bob", "bob-password")
        user_store.add_user(engine, "carol", "carol-password")
    config = (
        "endpoints:\n  - kind: demo\n    pacing_ms: 0\n"
        f"workspace: {workdir}\n"
        f"auth:\n  mode: password\n  secret: {SESSION_SECRET}\n"
    )
    with running_app(workdir, config) as harness:
        yield harness


def sign_in(page: Page, name: str, password: str) -> None:
    expect(page.get_by_test_id("login-name")).to_be_visible(timeout=FIRST_LOAD_MS)
    page.get_by_test_id("login-name").fill(name)
    page.get_by_test_id("login-password").fill(password)
    page.get_by_test_id("login-submit").click()


def test_five_wrong_passwords_make_that_name_wait(
    password_app: AppHarness, browser: Browser, contexts: list[Any]
) -> None:
    """Guessing is slowed: after five failures for one name, even the right password is
    refused for a while, and the page says how long; other names are not held up."""
    url = password_app.frontend_url
    assert url
    page = open_as(browser, contexts, url, {})
    error = page.get_by_test_id("login-error")
    for attempt in range(5):  # one tab's events are handled in the order sent
        sign_in(page, "carol", f"guess-{attempt}")
        expect(error).to_contain_text("do not match")
    sign_in(page, "carol", "carol-password")
    expect(error).to_contain_text("Too many failed sign-ins; try again in 5 minutes.")
    expect(page.get_by_test_id("signed-in-as")).to_have_count(0)
    sign_in(page, "alice", "alice-password")
    expect(page.get_by_test_id("signed-in-as")).to_have_text("alice")


def test_password_users_sign_in_and_stay_apart(
    password_app: AppHarness, browser: Browser, contexts: list[Any]
) -> None:
    url = password_app.frontend_url
    assert url
    alice = open_as(browser, contexts, url, {})
    sign_in(alice, "alice", "wrong")
    expect(alice.get_by_test_id("login-error")).to_contain_text("do not match")
    sign_in(alice, "alice", "alice-password")
    expect(alice.get_by_test_id("signed-in-as")).to_have_text("alice")
    ask(alice, SECRET_TEXT)
    wait_for_reply(alice, 1)
    alices_chat = alice.get_by_test_id("conversation-row").get_attribute("data-conversation-id")
    assert alices_chat

    bob = open_as(browser, contexts, url, {})
    sign_in(bob, "bob", "bob-password")
    expect(bob.get_by_test_id("signed-in-as")).to_have_text("bob")
    expect(bob.get_by_test_id("conversation-row")).to_have_count(0)
    ask(bob, "list the files")
    wait_for_reply(bob, 1)
    send_raw(bob, "new-chat", ".new_chat", chat_event("select_chat"), conversation_id=alices_chat)
    round_trip(bob)
    expect(bob.get_by_text(SECRET_TEXT)).to_have_count(0)
    send_raw(bob, "new-chat", ".new_chat", chat_event("delete_chat"), conversation_id=alices_chat)
    round_trip(bob)

    # A forged cookie is not a session.
    bob.get_by_test_id("logout").click()
    expect(bob.get_by_test_id("login-name")).to_be_visible()
    bob.context.add_cookies([{"name": "intent_ui_session", "value": "alice", "url": url}])
    bob.goto(url)
    expect(bob.get_by_test_id("login-name")).to_be_visible()

    alice.reload()
    expect(alice.get_by_test_id("conversation-title")).to_have_text(SECRET_TEXT)
