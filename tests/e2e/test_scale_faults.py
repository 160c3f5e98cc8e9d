"""The servers two workers share restart mid-turn, in a real browser.

Two workers of the production build (`running_workers`) on a Redis and a PostgreSQL of
this module's own (tests/support/servers.py: private servers, so the machine's shared
ones are never stopped). A turn streams on worker 0 while a tab of worker 1 follows it;
the store or Redis goes away for a moment and comes back. The turn ends as it would
have and a reload shows all of it from the store. With the store gone both tabs keep
streaming; with Redis gone (it comes back empty) the tabs' state is lost, and a tab
reloaded shows the whole turn and goes on working.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect
from sqlalchemy import create_engine

from intent_ui.core.turn import TurnView
from intent_ui.store.turns import load_events
from tests.e2e.harness import Workers, running_workers
from tests.support import servers

pytestmark = pytest.mark.e2e

FIRST_LOAD_MS = 60_000
LONG = "search for notes, then read plan.md, then search for plan and read notes.md"
DOWN_S = 2.0
"""Long enough for several flushes, renewals and reads to fail."""


@pytest.fixture(scope="module")
def private_redis() -> Iterator[servers.PrivateServer]:
    with servers.private_redis_server() as server:
        yield server


@pytest.fixture(scope="module")
def private_postgres() -> Iterator[servers.PrivateServer]:
    with servers.private_postgres_server() as server:
        yield server


@pytest.fixture(scope="module")
def workers(
    tmp_path_factory: pytest.TempPathFactory,
    private_redis: servers.PrivateServer,
    private_postgres: servers.PrivateServer,
) -> Iterator[Workers]:
    workdir = tmp_path_factory.mktemp("scale-faults")
    (workdir / "notes.md").write_text("# Notes\n")
    (workdir / "plan.md").write_text("# Plan\n")
    # About twenty seconds for LONG: a restart fits inside the turn.
    config = f"endpoints:\n  - kind: demo\n    pacing_ms: 200\nworkspace: {workdir}\n"
    with (
        servers.postgres_database(private_postgres.url) as db_url,
        running_workers(workdir, config, redis_url=private_redis.url, db_url=db_url) as started,
    ):
        yield started


@pytest.fixture
def tabs(browser: Browser) -> Iterator[BrowserContext]:
    context = browser.new_context()
    yield context
    context.close()


def open_tab(context: BrowserContext, workers: Workers, worker: int) -> Page:
    page = context.new_page()
    page.goto(workers.url(worker))
    expect(page.get_by_test_id("chat-page")).to_be_visible(timeout=FIRST_LOAD_MS)
    return page


def streaming_on_both(context: BrowserContext, workers: Workers) -> tuple[Page, Page]:
    """A turn streaming on worker 0, and a tab of worker 1 following it."""
    on_a = open_tab(context, workers, 0)
    on_a.get_by_test_id("new-chat").click()
    on_a.get_by_test_id("chat-input").fill(LONG)
    on_a.get_by_test_id("send-button").click()
    turn = on_a.get_by_test_id("assistant-message")
    expect(turn.get_by_test_id("tool-call-label").first).to_be_visible(timeout=FIRST_LOAD_MS)
    active = on_a.locator('[data-testid="conversation-row"][data-active="true"]')
    conversation_id = active.get_attribute("data-conversation-id")
    on_b = open_tab(context, workers, 1)
    row = on_b.locator(
        f'[data-testid="conversation-row"][data-conversation-id="{conversation_id}"]'
    )
    row.get_by_test_id("conversation-title").click(timeout=FIRST_LOAD_MS)
    expect(on_b.get_by_test_id("assistant-message")).to_have_attribute("data-status", "streaming")
    return on_a, on_b


def labels(page: Page) -> Locator:
    return page.get_by_test_id("assistant-message").last.get_by_test_id("tool-call-label")


def ends_whole(on_a: Page, on_b: Page) -> None:
    """Both tabs show the turn complete with the same calls and reply, and so does a
    reload of each from the store."""
    for page in (on_a, on_b):
        expect(page.get_by_test_id("assistant-message").last).to_have_attribute(
            "data-status", "complete", timeout=FIRST_LOAD_MS
        )
    shown = labels(on_a).all_inner_texts()
    reply = on_a.get_by_test_id("assistant-message").last.inner_text()
    assert len(shown) == 4 and "notes.md" in reply  # LONG's two searches and two reads
    expect(labels(on_b)).to_have_text(shown)
    for page in (on_a, on_b):
        page.reload()
        turn = page.get_by_test_id("assistant-message").last
        expect(turn).to_have_attribute("data-status", "complete", timeout=FIRST_LOAD_MS)
        expect(labels(page)).to_have_text(shown)
        assert turn.inner_text() == reply


def takes_a_next_turn(page: Page) -> None:
    """Send in the open conversation; its turn completes (the page may also show one the
    other tab sent meanwhile)."""
    turns = page.get_by_test_id("assistant-message")
    before = turns.count()
    asked = f"list the files ({page.url})"
    page.get_by_test_id("chat-input").fill(asked)
    page.get_by_test_id("send-button").click()
    expect(page.get_by_test_id("user-message").last).to_have_text(asked, timeout=FIRST_LOAD_MS)
    assert turns.count() > before
    expect(turns.last).to_have_attribute("data-status", "complete", timeout=FIRST_LOAD_MS)


def test_postgresql_restarted_mid_turn_loses_nothing_streamed(
    workers: Workers, tabs: BrowserContext, private_postgres: servers.PrivateServer
) -> None:
    on_a, on_b = streaming_on_both(tabs, workers)
    before = labels(on_b).count()
    private_postgres.stop()
    try:
        # The store is down: both tabs keep streaming.
        for page in (on_a, on_b):
            expect(labels(page)).to_have_count(before + 1, timeout=FIRST_LOAD_MS)
        time.sleep(DOWN_S)
    finally:
        private_postgres.start()
    ends_whole(on_a, on_b)
    takes_a_next_turn(on_b)


def test_redis_restarted_mid_turn_loses_no_turn_and_the_tabs_go_on(
    workers: Workers, tabs: BrowserContext, private_redis: servers.PrivateServer
) -> None:
    on_a, on_b = streaming_on_both(tabs, workers)
    message_id = on_a.get_by_test_id("assistant-message").last.get_attribute("data-message-id")
    active = on_a.locator('[data-testid="conversation-row"][data-active="true"]')
    conversation_id = active.get_attribute("data-conversation-id")
    private_redis.stop()
    try:
        time.sleep(DOWN_S)
    finally:
        private_redis.start()  # empty: the tabs' state, the streams and the leases are gone
    # The turn runs on: its worker takes its lease back and writes its log to the end.
    deadline = time.monotonic() + FIRST_LOAD_MS / 1000
    while (end := stored_end(workers, message_id or "")) is None:
        assert time.monotonic() < deadline, "the turn did not end"
        time.sleep(0.2)
    assert end == "end_turn"
    # A tab whose state Redis lost loads again cleanly: the whole turn, then the next.
    for page in (on_a, on_b):
        page.reload()
        expect(page.get_by_test_id("chat-page")).to_be_visible(timeout=FIRST_LOAD_MS)
        row = page.locator(
            f'[data-testid="conversation-row"][data-conversation-id="{conversation_id}"]'
        )
        row.get_by_test_id("conversation-title").click(timeout=FIRST_LOAD_MS)
        turn = page.get_by_test_id("assistant-message").last
        expect(turn).to_have_attribute("data-message-id", message_id or "")
        expect(turn).to_have_attribute("data-status", "complete")
    assert labels(on_a).count() == 4
    expect(labels(on_b)).to_have_text(labels(on_a).all_inner_texts())
    takes_a_next_turn(on_a)
    takes_a_next_turn(on_b)


def stored_end(workers: Workers, message_id: str) -> str | None:
    """The turn's stop reason as the store has it (None while it runs)."""
    engine = create_engine(workers.db_url)
    try:
        return TurnView.replay(load_events(engine, message_id)).stop_reason
    finally:
        engine.dispose()
