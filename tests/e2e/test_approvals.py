"""Approvals and questions in a real browser, on the offline demo model.

An agent whose `delete_file` asks first (set with the builder's approval toggle) is asked
to delete migrations: the call waits as an approval card that leads with its intent, and
the reader approves it once, denies it with a reason the model reads, edits its
arguments (intent included), or allows the tool for the rest of the conversation or for
the agent; a reload and a second tab show the same waiting card, and the first answer
wins. A question (`ask_user_question`) is answered in the chat and resumes the turn. A
server restart while a call waits shows it waiting again, and approving it then runs the
call and finishes the turn.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect
from reflex.testing import AppHarness

from intent_ui.store import agents as agent_store
from intent_ui.store.db import init_db
from intent_ui.store.models import LOCAL_USER_ID
from tests.e2e.harness import database_path, running_app

pytestmark = pytest.mark.e2e

FIRST_LOAD_MS = 60_000
"""The first page of a module waits for the dev build."""

TOOLS = [
    "read_file",
    "write_file",
    "edit_file",
    "delete_file",
    "grep_search",
    "glob_search",
    "list_directory",
    "ask_user_question",
]
DELETE = "delete the staging migrations in migrations/staging"
INTENT = "Deleting the staging migrations"


def demo_config(workspace: Path) -> str:
    return f"endpoints:\n  - kind: demo\n    pacing_ms: 2\nworkspace: {workspace}\n"


def add_agent(workdir: Path, name: str, tool_options: Mapping[str, Mapping[str, Any]]) -> None:
    """An agent of the local user's, stored before the app starts."""
    workdir.mkdir(parents=True, exist_ok=True)
    url = f"sqlite:///{database_path(workdir)}"
    with mock.patch.dict(os.environ, {"DB_URL": url}):
        engine = init_db(url)
        agent_store.create_agent(
            engine, owner=LOCAL_USER_ID, name=name, tools=TOOLS, tool_options=tool_options
        )


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("approvals")


@pytest.fixture(scope="module")
def workspace(workdir: Path) -> Path:
    folder = workdir / "workspace"
    folder.mkdir()
    return folder


@pytest.fixture(scope="module")
def app(workdir: Path, workspace: Path) -> Iterator[AppHarness]:
    add_agent(workdir, "Cleaner", {})
    with running_app(workdir, demo_config(workspace)) as harness:
        yield harness


@pytest.fixture
def migrations(workspace: Path) -> Path:
    """The staging migrations, afresh for each test."""
    folder = workspace / "migrations" / "staging"
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("0001_users.sql", "0002_orders.sql"):
        (folder / name).write_text("-- migration\n")
    return folder


@pytest.fixture(scope="module")
def asks_first(app: AppHarness, browser_context: BrowserContext) -> None:
    """The builder switches "Ask first" on for `delete_file` (once per module)."""
    page = browser_context.new_page()
    assert app.frontend_url is not None
    page.goto(app.frontend_url.rstrip("/") + "/agents")
    page.get_by_test_id("agent-open").first.click()
    toggle = page.locator('[data-testid="approval-toggle"][data-tool="delete_file"]')
    expect(toggle).to_have_attribute("aria-pressed", "false", timeout=FIRST_LOAD_MS)
    toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "true")
    page.reload()
    page.get_by_test_id("agent-open").first.click()
    toggle = page.locator('[data-testid="approval-toggle"][data-tool="delete_file"]')
    expect(toggle).to_have_attribute("aria-pressed", "true", timeout=FIRST_LOAD_MS)
    # Reading tools do not ask by default, and the workspace default is off.
    read = page.locator('[data-testid="approval-toggle"][data-tool="read_file"]')
    expect(read).to_have_attribute("aria-pressed", "false")
    page.close()


@pytest.fixture(scope="module")
def browser_context(browser: Browser) -> Iterator[BrowserContext]:
    context = browser.new_context()
    yield context
    context.close()


@pytest.fixture
def chat(app: AppHarness, browser_context: BrowserContext, asks_first: None) -> Iterator[Page]:
    """A page on a new chat with the Cleaner agent."""
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    assert app.frontend_url is not None
    page.goto(app.frontend_url)
    expect(page.get_by_test_id("chat-input")).to_be_visible(timeout=FIRST_LOAD_MS)
    new_chat(page)
    expect(page.get_by_test_id("agent-select")).to_have_value(re.compile(r"^(?!default$).+"))
    yield page
    page.close()
    assert not errors, f"page errors: {errors}"


def send(page: Page, text: str) -> None:
    """Send `text` and wait until its turn is on the page."""
    turns = page.get_by_test_id("assistant-message")
    before = turns.count()
    page.get_by_test_id("chat-input").fill(text)
    page.get_by_test_id("send-button").click()
    expect(turns).to_have_count(before + 1, timeout=FIRST_LOAD_MS)


def new_chat(page: Page, agent: str = "Cleaner") -> None:
    """Start a new chat with `agent`, once the page shows it empty."""
    page.get_by_test_id("new-chat").click()
    expect(page.get_by_test_id("assistant-message")).to_have_count(0)
    page.get_by_test_id("agent-select").select_option(label=agent)


def last_turn(page: Page) -> Locator:
    return page.get_by_test_id("assistant-message").last


def waiting_card(page: Page) -> Locator:
    card = last_turn(page).get_by_test_id("approval-card")
    expect(card).to_have_attribute("data-state", "waiting", timeout=FIRST_LOAD_MS)
    return card


def test_an_approval_leads_with_the_intent_and_approve_once_runs_the_call(
    chat: Page, migrations: Path
) -> None:
    send(chat, DELETE)
    card = waiting_card(chat)
    expect(card.get_by_test_id("approval-intent")).to_have_text(f"Approve: {INTENT}")
    expect(card).to_contain_text("delete_file")
    arguments = card.get_by_test_id("approval-arguments")
    expect(arguments).to_contain_text('"path": "migrations/staging"')
    expect(arguments).not_to_contain_text(INTENT)  # the intent leads; the tool never sees it
    for testid, text in (
        ("approval-approve", "Approve once"),
        ("approval-always-conversation", "Always for delete_file in this conversation"),
        ("approval-always-agent", "Always for delete_file for this agent"),
    ):
        expect(card.get_by_test_id(testid)).to_have_text(text)
    call = last_turn(chat).get_by_test_id("tool-call")
    expect(call).to_have_attribute("data-waiting", "true")
    expect(chat).to_have_title(re.compile(r"^Approval needed · "))
    assert migrations.exists()  # nothing ran before the decision
    card.get_by_test_id("approval-approve").click()
    expect(card.get_by_test_id("approval-decision")).to_have_text("Approved by you · once")
    expect(call).to_have_attribute("data-state", "settled")
    expect(card.get_by_test_id("approval-approve")).to_have_count(0)
    expect(chat).not_to_have_title(re.compile("Approval needed"))
    assert not migrations.exists()


def test_a_group_does_not_collapse_while_one_of_its_calls_waits(
    chat: Page, migrations: Path
) -> None:
    send(chat, "list the files and delete migrations/staging")
    card = waiting_card(chat)
    header = last_turn(chat).get_by_test_id("tool-group-header")
    expect(header).to_have_attribute("aria-expanded", "true")
    header.click()
    expect(header).to_have_attribute("aria-expanded", "true")
    expect(card).to_be_visible()
    card.get_by_test_id("approval-deny").click()
    expect(card.get_by_test_id("approval-decision")).to_have_text("Denied by you")
    header.click()
    expect(header).to_have_attribute("aria-expanded", "false")


def test_deny_sends_the_reason_to_the_model(chat: Page, migrations: Path) -> None:
    send(chat, DELETE)
    card = waiting_card(chat)
    card.get_by_test_id("approval-reason").fill("they are still needed")
    card.get_by_test_id("approval-deny").click()
    expect(card.get_by_test_id("approval-decision")).to_have_text(
        "Denied by you: they are still needed"
    )
    turn = last_turn(chat)
    expect(turn.get_by_test_id("tool-call")).to_have_attribute("data-state", "cancelled")
    # The model read the reason: the demo quotes it back.
    expect(turn).to_contain_text("Their reason: they are still needed")
    assert sorted(p.name for p in migrations.iterdir()) == ["0001_users.sql", "0002_orders.sql"]


def test_edit_rewrites_the_arguments_and_the_intent(chat: Page, migrations: Path) -> None:
    send(chat, DELETE)
    card = waiting_card(chat)
    card.get_by_test_id("approval-edit").click()
    editor = card.get_by_test_id("approval-edit-arguments")
    expect(editor).to_have_value(re.compile(INTENT))
    edited = {
        "intent": "Deleting only the users migration",
        "path": "migrations/staging/0001_users.sql",
    }
    editor.fill(json.dumps(edited))
    card.get_by_test_id("approval-edit-submit").click()
    expect(card.get_by_test_id("approval-decision")).to_have_text(
        "Approved by you · once · with your edits"
    )
    turn = last_turn(chat)
    expect(turn.get_by_test_id("tool-call")).to_have_attribute("data-state", "settled")
    # The rewritten intent is honoured: it is what the card's first line says now.
    expect(card.get_by_test_id("approval-intent")).to_have_text(
        "Approve: Deleting only the users migration"
    )
    assert [p.name for p in migrations.iterdir()] == ["0002_orders.sql"]
    chat.reload()
    expect(last_turn(chat).get_by_test_id("approval-intent")).to_have_text(
        "Approve: Deleting only the users migration", timeout=FIRST_LOAD_MS
    )


def test_always_in_this_conversation_skips_its_later_approvals(
    chat: Page, migrations: Path
) -> None:
    send(chat, DELETE)
    card = waiting_card(chat)
    card.get_by_test_id("approval-always-conversation").click()
    expect(card.get_by_test_id("approval-decision")).to_have_text(
        "Approved by you · always for this tool in this conversation"
    )
    expect(chat.get_by_test_id("send-button")).to_be_visible()
    (migrations.parent / "old.sql").write_text("-- old\n")
    send(chat, "delete migrations/old.sql")
    turn = last_turn(chat)
    expect(turn.get_by_test_id("tool-call")).to_have_attribute("data-state", "settled")
    expect(turn.get_by_test_id("approval-card")).to_have_count(0)
    assert not (migrations.parent / "old.sql").exists()
    # Another conversation asks again.
    new_chat(chat)
    send(chat, "delete migrations/staging/0001_users.sql")
    waiting_card(chat).get_by_test_id("approval-deny").click()


def test_a_reload_and_a_second_tab_show_the_waiting_card_and_the_first_answer_wins(
    chat: Page, browser_context: BrowserContext, app: AppHarness, migrations: Path
) -> None:
    send(chat, DELETE)
    waiting_card(chat)
    chat.reload()
    card = waiting_card(chat)
    expect(card.get_by_test_id("approval-intent")).to_have_text(f"Approve: {INTENT}")
    other = browser_context.new_page()
    try:
        assert app.frontend_url is not None
        other.goto(app.frontend_url)
        there = waiting_card(other)
        there.get_by_test_id("approval-approve").click()
        expect(there.get_by_test_id("approval-decision")).to_have_text("Approved by you · once")
        # The first tab sees the decision at once, and its buttons are gone.
        expect(card.get_by_test_id("approval-decision")).to_have_text("Approved by you · once")
        expect(card.get_by_test_id("approval-approve")).to_have_count(0)
    finally:
        other.close()
    expect(last_turn(chat).get_by_test_id("tool-call")).to_have_attribute("data-state", "settled")
    assert not migrations.exists()


def test_a_question_is_answered_in_the_chat_and_resumes_the_turn(chat: Page) -> None:
    send(chat, "ask me which database to use: Postgres or SQLite")
    card = last_turn(chat).get_by_test_id("question-card")
    expect(card).to_have_attribute("data-state", "waiting", timeout=FIRST_LOAD_MS)
    expect(card).to_contain_text("Which database to use?")
    expect(card.get_by_test_id("question-choice")).to_have_text(["Postgres", "SQLite"])
    expect(chat).to_have_title(re.compile(r"^Question for you · "))
    card.get_by_test_id("question-answer").fill("SQLite, for now")
    card.get_by_test_id("question-submit").click()
    expect(card.get_by_test_id("question-answered")).to_have_text("You answered: SQLite, for now")
    turn = last_turn(chat)
    expect(turn).to_contain_text("You answered: SQLite, for now")
    expect(turn.get_by_test_id("tool-call-label")).to_have_text("Asking which database to use")


def test_always_for_this_agent_is_stored_in_the_agent(
    chat: Page, app: AppHarness, migrations: Path
) -> None:
    # Last in the module: the agent stops asking for good.
    send(chat, DELETE)
    card = waiting_card(chat)
    card.get_by_test_id("approval-always-agent").click()
    expect(card.get_by_test_id("approval-decision")).to_have_text(
        "Approved by you · always for this tool for this agent"
    )
    expect(chat.get_by_test_id("send-button")).to_be_visible()
    new_chat(chat)
    (migrations.parent / "next.sql").write_text("-- next\n")
    send(chat, "delete migrations/next.sql")
    turn = last_turn(chat)
    expect(turn.get_by_test_id("tool-call")).to_have_attribute(
        "data-state", "settled", timeout=FIRST_LOAD_MS
    )
    expect(turn.get_by_test_id("approval-card")).to_have_count(0)
    assert app.frontend_url is not None
    chat.goto(app.frontend_url.rstrip("/") + "/agents")
    chat.get_by_test_id("agent-open").first.click()
    toggle = chat.locator('[data-testid="approval-toggle"][data-tool="delete_file"]')
    expect(toggle).to_have_attribute("aria-pressed", "false", timeout=FIRST_LOAD_MS)


def test_a_restart_while_a_call_waits_asks_again_and_approving_finishes_the_turn(
    browser: Browser, tmp_path: Path
) -> None:
    workspace = tmp_path / "workspace"
    (workspace / "migrations" / "staging").mkdir(parents=True)
    (workspace / "migrations" / "staging" / "0001.sql").write_text("--\n")
    add_agent(tmp_path, "Careful", {"delete_file": {"require_approval": True}})
    context = browser.new_context()
    try:
        page = context.new_page()
        with running_app(tmp_path, demo_config(workspace)) as first:
            assert first.frontend_url is not None
            page.goto(first.frontend_url)
            page.get_by_test_id("agent-select").select_option(
                label="Careful", timeout=FIRST_LOAD_MS
            )
            send(page, DELETE)
            waiting_card(page)
            # The tab goes first: the server waits for its open turn stream to close
            # before it stops.
            page.goto("about:blank")
        with running_app(tmp_path, demo_config(workspace)) as second:
            assert second.frontend_url is not None
            page.goto(second.frontend_url)
            # Another port is another origin: the page does not remember the chat.
            page.get_by_test_id("conversation-title").first.click(timeout=FIRST_LOAD_MS)
            card = waiting_card(page)  # asked again, as it was before the restart
            expect(card.get_by_test_id("approval-intent")).to_have_text(f"Approve: {INTENT}")
            assert (workspace / "migrations" / "staging" / "0001.sql").exists()
            card.get_by_test_id("approval-approve").click()
            expect(card.get_by_test_id("approval-decision")).to_have_text("Approved by you · once")
            turn = last_turn(page)
            expect(turn.get_by_test_id("tool-call")).to_have_attribute("data-state", "settled")
            expect(turn).to_have_attribute("data-status", "complete", timeout=FIRST_LOAD_MS)
            expect(turn.get_by_test_id("chat-error")).to_have_count(0)
        assert not (workspace / "migrations" / "staging").exists()
    finally:
        context.close()
