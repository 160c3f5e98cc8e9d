"""The app as several backend workers on one Redis and one PostgreSQL, in a real browser.

Three workers of the production build (`running_workers`), each on a loopback address of
its own, with Reflex's Redis state manager (`REFLEX_REDIS_URL`) and the store on
PostgreSQL (`DB_URL`): the real servers of tests/support/servers.py, and a database made
for this module. A tab opened at `workers.url(i)` talks to worker `i` only, so a turn
streamed by one worker is watched, stopped, approved and answered from a tab of another,
two tabs on two workers race to send, and the last two tests kill a worker each: one
mid-turn, one while a call waits for approval (the third worker is what the first kill
leaves two of).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect
from sqlalchemy import create_engine

from intent_ui.agent.cluster import ClusterConfig
from intent_ui.core.turn import TurnView
from intent_ui.store.turns import load_events
from tests.e2e.harness import Workers, running_workers
from tests.support import servers

pytestmark = pytest.mark.e2e

FIRST_LOAD_MS = 60_000
LISTING = "list the files"
LONG = "search for notes, then read plan.md, then search for plan and read notes.md"
SLOW = "slow"
"""The endpoint that streams `LONG` for about twenty seconds: long enough to act on
mid-turn from a tab opened meanwhile."""
DELETE = "delete the staging migrations in migrations/staging"
ASKING = "ask me which database to use: Postgres or SQLite"
CLEANER = "Cleaner"
ENDED_WITHIN_MS = 5_000


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The workers' folder, which is their workspace too."""
    return tmp_path_factory.mktemp("scale")


@pytest.fixture(scope="module")
def workers(workdir: Path, redis_url: str, postgres_server_url: str) -> Iterator[Workers]:
    (workdir / "notes.md").write_text("# Notes\n")
    (workdir / "plan.md").write_text("# Plan\n")
    # Slow enough that the turn is still streaming when the page is first looked at.
    config = (
        "endpoints:\n  - kind: demo\n    pacing_ms: 80\n"
        f"  - kind: demo\n    name: {SLOW}\n    pacing_ms: 250\nworkspace: {workdir}\n"
        f"model_specs:\n  - name: {CLEANER}\n    endpoint: demo\n    model: demo\n"
        "    require_approval: [delete_file]\n"
    )
    with (
        servers.postgres_database(postgres_server_url) as db_url,
        running_workers(workdir, config, redis_url=redis_url, db_url=db_url, workers=3) as started,
    ):
        yield started


def test_a_turn_streams_settles_and_reloads_on_redis_and_postgresql(
    workers: Workers, page: Page
) -> None:
    page.goto(workers.url(0))
    expect(page.get_by_test_id("chat-page")).to_be_visible(timeout=FIRST_LOAD_MS)
    page.get_by_test_id("chat-input").fill(LISTING)
    page.get_by_test_id("send-button").click()
    message = page.get_by_test_id("assistant-message")
    expect(message).to_have_count(1, timeout=FIRST_LOAD_MS)
    expect(message).to_have_attribute("data-status", "streaming")
    expect(page.get_by_test_id("stop-button")).to_be_visible()
    expect(message).to_have_attribute("data-status", "complete")
    expect(page.get_by_test_id("tool-call")).to_have_attribute("data-state", "settled")
    expect(message).to_contain_text("notes.md")
    message_id = message.get_attribute("data-message-id")
    labels = page.get_by_test_id("tool-call-label").all_inner_texts()

    page.reload()
    expect(message).to_have_count(1, timeout=FIRST_LOAD_MS)
    expect(message).to_have_attribute("data-message-id", message_id or "")
    expect(message).to_have_attribute("data-status", "complete")
    expect(message).to_contain_text("notes.md")
    expect(page.get_by_test_id("tool-call-label")).to_have_text(labels)
    expect(page.get_by_test_id("user-message")).to_have_text(LISTING)
    # The tab's UI state is kept in Redis, where any worker can load it.
    token = page.evaluate("() => window.sessionStorage.getItem('token')")
    assert workers.redis_url is not None
    assert token and _state_keys(workers.redis_url, token)


@pytest.fixture
def tabs(browser: Browser) -> Iterator[BrowserContext]:
    """One browser's tabs (each test's own, closed after it)."""
    context = browser.new_context()
    yield context
    context.close()


def open_tab(context: BrowserContext, workers: Workers, worker: int) -> Page:
    page = context.new_page()
    page.goto(workers.url(worker))
    expect(page.get_by_test_id("chat-page")).to_be_visible(timeout=FIRST_LOAD_MS)
    return page


def send(page: Page, text: str, *, agent: str = "", endpoint: str = "") -> Locator:
    """Send `text` in a new chat (with `agent` and `endpoint`, values of their pickers);
    its turn."""
    page.get_by_test_id("new-chat").click()
    expect(page.get_by_test_id("assistant-message")).to_have_count(0)
    if agent:
        page.get_by_test_id("agent-select").select_option(agent)
    if endpoint:
        page.get_by_test_id("endpoint-select").select_option(endpoint)
    page.get_by_test_id("chat-input").fill(text)
    page.get_by_test_id("send-button").click()
    turn = page.get_by_test_id("assistant-message")
    expect(turn).to_have_count(1, timeout=FIRST_LOAD_MS)
    return turn


def open_conversation_of(
    context: BrowserContext, workers: Workers, worker: int, other: Page
) -> tuple[Page, Locator]:
    """A new tab on `worker` showing the conversation `other` shows; it and its last turn."""
    active = other.locator('[data-testid="conversation-row"][data-active="true"]')
    conversation_id = active.get_attribute("data-conversation-id")
    page = open_tab(context, workers, worker)
    row = page.locator(
        f'[data-testid="conversation-row"][data-conversation-id="{conversation_id}"]'
    )
    row.get_by_test_id("conversation-title").click(timeout=FIRST_LOAD_MS)
    return page, page.get_by_test_id("assistant-message").last


def same_labels(one: Locator, other: Locator, limit_s: float = 10.0) -> None:
    """Until both tabs show the same labels (each streams on its own clock)."""
    deadline = time.monotonic() + limit_s
    while (seen := (one.all_inner_texts(), other.all_inner_texts()))[0] != seen[1]:
        assert time.monotonic() < deadline, f"the tabs' labels differ: {seen}"
        time.sleep(0.05)


def stored_end(workers: Workers, message_id: str) -> tuple[str | None, str | None]:
    """The stop reason and error the store holds for the turn."""
    engine = create_engine(workers.db_url)
    try:
        view = TurnView.replay(load_events(engine, message_id))
    finally:
        engine.dispose()
    return view.stop_reason, view.error


def test_a_turn_on_one_worker_is_watched_and_stopped_from_a_tab_of_the_other(
    workers: Workers, tabs: BrowserContext
) -> None:
    on_a = open_tab(tabs, workers, 0)
    turn_a = send(on_a, LONG, endpoint=SLOW)
    labels_a = turn_a.get_by_test_id("tool-call-label")
    expect(labels_a.first).to_be_visible(timeout=FIRST_LOAD_MS)
    on_b, turn_b = open_conversation_of(tabs, workers, 1, on_a)
    message_id = turn_a.get_attribute("data-message-id") or ""
    expect(turn_b).to_have_attribute("data-message-id", message_id)
    expect(turn_b).to_have_attribute("data-status", "streaming")
    labels_b = turn_b.get_by_test_id("tool-call-label")
    # Live: the calls that start after B opened the turn show up in B too, as in A.
    seen = labels_b.count()
    expect(labels_b).to_have_count(seen + 1, timeout=FIRST_LOAD_MS)
    same_labels(labels_a, labels_b)
    on_b.get_by_test_id("stop-button").click()
    for turn in (turn_a, turn_b):
        expect(turn).to_have_attribute("data-status", "cancelled")
    expect(on_a.get_by_test_id("stop-button")).to_have_count(0)
    expect(labels_b).to_have_text(labels_a.all_inner_texts())
    assert stored_end(workers, message_id)[0] == "cancelled"


def test_two_tabs_on_two_workers_sending_at_once_start_one_turn(
    workers: Workers, tabs: BrowserContext
) -> None:
    on_a = open_tab(tabs, workers, 0)
    first = send(on_a, LISTING)
    expect(first).to_have_attribute("data-status", "complete")
    on_b, _ = open_conversation_of(tabs, workers, 1, on_a)
    expect(on_b.get_by_test_id("assistant-message")).to_have_count(1)
    for page, text in ((on_a, "read plan.md"), (on_b, "read notes.md")):
        page.get_by_test_id("chat-input").fill(text)
    # Both clicks leave within a millisecond of each other, one to each worker.
    on_a.evaluate("() => document.querySelector('[data-testid=send-button]').click()")
    on_b.evaluate("() => document.querySelector('[data-testid=send-button]').click()")
    refused = re.compile("already running in this conversation")
    alerts = [page.get_by_role("alert").filter(has_text=refused) for page in (on_a, on_b)]
    deadline = time.monotonic() + 30
    while not any(alert.count() for alert in alerts) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sum(alert.count() for alert in alerts) == 1, "exactly one tab is told to wait"
    winner = on_b if alerts[0].count() else on_a
    expect(winner.get_by_test_id("assistant-message").last).to_have_attribute(
        "data-status", "complete", timeout=FIRST_LOAD_MS
    )
    # One question and one answer each, never two turns woven together, in both tabs.
    for page in (on_a, on_b):
        page.reload()
        expect(page.get_by_test_id("assistant-message")).to_have_count(2, timeout=FIRST_LOAD_MS)
        expect(page.get_by_test_id("user-message")).to_have_count(2)
        expect(page.get_by_test_id("assistant-message").last).to_have_attribute(
            "data-status", "complete"
        )
    asked = winner.get_by_test_id("user-message").last.inner_text()
    expect(on_a.get_by_test_id("user-message").last).to_have_text(asked)
    expect(on_b.get_by_test_id("user-message").last).to_have_text(asked)


def test_an_approval_and_a_question_are_decided_from_a_tab_of_the_other_worker(
    workers: Workers, tabs: BrowserContext, workdir: Path
) -> None:
    staging = workdir / "migrations" / "staging"
    staging.mkdir(parents=True, exist_ok=True)
    (staging / "0001_users.sql").write_text("-- migration\n")
    on_a = open_tab(tabs, workers, 0)
    send(on_a, DELETE, agent=f"spec:{CLEANER}")
    card_a = on_a.get_by_test_id("approval-card").last
    expect(card_a).to_have_attribute("data-state", "waiting", timeout=FIRST_LOAD_MS)
    _, turn_b = open_conversation_of(tabs, workers, 1, on_a)
    card_b = turn_b.get_by_test_id("approval-card")
    expect(card_b).to_have_attribute("data-state", "waiting", timeout=FIRST_LOAD_MS)
    assert staging.exists()
    card_b.get_by_test_id("approval-approve").click()
    for card in (card_b, card_a):
        expect(card.get_by_test_id("approval-decision")).to_have_text("Approved by you · once")
    expect(turn_b.get_by_test_id("tool-call").last).to_have_attribute("data-state", "settled")
    assert not staging.exists()

    send(on_a, ASKING)
    question_a = on_a.get_by_test_id("question-card").last
    expect(question_a).to_have_attribute("data-state", "waiting", timeout=FIRST_LOAD_MS)
    _, turn_b = open_conversation_of(tabs, workers, 1, on_a)
    question_b = turn_b.get_by_test_id("question-card")
    expect(question_b).to_have_attribute("data-state", "waiting", timeout=FIRST_LOAD_MS)
    question_b.get_by_test_id("question-answer").fill("SQLite, for now")
    question_b.get_by_test_id("question-submit").click()
    for card in (question_b, question_a):
        expect(card.get_by_test_id("question-answered")).to_have_text(
            "You answered: SQLite, for now"
        )
    expect(turn_b).to_have_attribute("data-status", "complete", timeout=FIRST_LOAD_MS)


def test_a_worker_killed_mid_turn_ends_its_turn_in_the_other_workers_tabs(
    workers: Workers, tabs: BrowserContext
) -> None:
    """Worker 0 does not come back."""
    on_a = open_tab(tabs, workers, 0)
    turn_a = send(on_a, LONG, endpoint=SLOW)
    expect(turn_a.get_by_test_id("tool-call-label").first).to_be_visible(timeout=FIRST_LOAD_MS)
    on_b, turn_b = open_conversation_of(tabs, workers, 1, on_a)
    expect(turn_b).to_have_attribute("data-status", "streaming")
    streamed = turn_b.get_by_test_id("tool-call-label").all_inner_texts()
    workers.kill(0)
    killed = time.monotonic()
    expect(turn_b).to_have_attribute("data-status", "cancelled", timeout=ENDED_WITHIN_MS)
    noticed_s = time.monotonic() - killed
    assert noticed_s < ENDED_WITHIN_MS / 1000
    expect(on_b.get_by_test_id("stop-button")).to_have_count(0)
    message_id = turn_b.get_attribute("data-message-id") or ""
    assert stored_end(workers, message_id)[0] == "interrupted"
    # Every call the tab had seen stays, as the store has it; the conversation takes its
    # next turn at once.
    ended = turn_b.get_by_test_id("tool-call-label")
    assert ended.count() >= len(streamed) > 0
    shown = ended.all_inner_texts()
    on_b.reload()
    expect(on_b.get_by_test_id("assistant-message").last).to_have_attribute(
        "data-status", "cancelled", timeout=FIRST_LOAD_MS
    )
    expect(on_b.get_by_test_id("tool-call-label")).to_have_text(shown)
    on_b.get_by_test_id("chat-input").fill(LISTING)
    on_b.get_by_test_id("send-button").click()
    after = on_b.get_by_test_id("assistant-message")
    expect(after).to_have_count(2, timeout=FIRST_LOAD_MS)
    expect(after.last).to_have_attribute("data-status", "complete", timeout=FIRST_LOAD_MS)


def test_a_worker_killed_while_a_call_waits_leaves_it_waiting_and_another_worker_runs_it(
    workers: Workers, tabs: BrowserContext, workdir: Path
) -> None:
    """After the test above (worker 0 is gone): the turn runs on worker 2, killed in its
    turn; worker 1, whose tab shows it, goes on with it."""
    staging = workdir / "migrations" / "staging"
    staging.mkdir(parents=True, exist_ok=True)
    (staging / "0002_orders.sql").write_text("-- migration\n")
    on_c = open_tab(tabs, workers, 2)
    send(on_c, DELETE, agent=f"spec:{CLEANER}")
    expect(on_c.get_by_test_id("approval-card").last).to_have_attribute(
        "data-state", "waiting", timeout=FIRST_LOAD_MS
    )
    on_b, turn_b = open_conversation_of(tabs, workers, 1, on_c)
    card_b = turn_b.get_by_test_id("approval-card")
    expect(card_b).to_have_attribute("data-state", "waiting", timeout=FIRST_LOAD_MS)
    conversation_id = (
        on_b.locator('[data-testid="conversation-row"][data-active="true"]').get_attribute(
            "data-conversation-id"
        )
        or ""
    )
    held = _lease(workers, conversation_id)
    assert held is not None, "the turn's worker holds its lease while it waits"
    workers.kill(2)
    _until_held_by_another(workers, conversation_id, held)
    # Still waiting, in the same tab, as if nothing had happened.
    expect(card_b).to_have_attribute("data-state", "waiting")
    expect(turn_b).to_have_attribute("data-status", "streaming")
    assert staging.exists()
    card_b.get_by_test_id("approval-approve").click()
    expect(card_b.get_by_test_id("approval-decision")).to_have_text("Approved by you · once")
    expect(turn_b.get_by_test_id("tool-call").last).to_have_attribute("data-state", "settled")
    expect(turn_b).to_have_attribute("data-status", "complete", timeout=FIRST_LOAD_MS)
    assert not staging.exists()
    message_id = turn_b.get_attribute("data-message-id") or ""
    assert stored_end(workers, message_id) == ("end_turn", None)


def test_a_tab_whose_ui_state_redis_lost_shows_its_conversation_again_by_itself(
    workers: Workers, tabs: BrowserContext
) -> None:
    """On worker 1, which the kills above leave running."""
    page = open_tab(tabs, workers, 1)
    turn = send(page, LISTING)
    expect(turn).to_have_attribute("data-status", "complete", timeout=FIRST_LOAD_MS)
    token = page.evaluate("() => window.sessionStorage.getItem('token')")
    assert workers.redis_url is not None and token
    client = redis.Redis.from_url(workers.redis_url)
    try:
        client.delete(*_state_keys(workers.redis_url, token))  # as a Redis restarted empty
    finally:
        client.close()
    # The tab's next event, whatever it is, finds a new state.
    page.get_by_test_id("density-select").select_option("intents")
    expect(page.get_by_test_id("assistant-message")).to_have_attribute(
        "data-status", "complete", timeout=FIRST_LOAD_MS
    )
    expect(page.get_by_test_id("user-message")).to_have_text(LISTING)
    expect(page.locator('[data-testid="conversation-row"][data-active="true"]')).to_have_count(1)


def _lease(workers: Workers, conversation_id: str) -> bytes | None:
    """Who holds the conversation's lease: `{worker}:{message}`."""
    assert workers.redis_url is not None
    client = redis.Redis.from_url(workers.redis_url)
    try:
        held = client.get(ClusterConfig(url=workers.redis_url).lease(conversation_id))
    finally:
        client.close()
    assert held is None or isinstance(held, bytes)
    return held


def _until_held_by_another(workers: Workers, conversation_id: str, first: bytes) -> None:
    """Until the conversation's lease, `first` before, is held by another worker for the
    same turn (the killed one's expired, and the worker that took the turn over holds
    it): a decision sent before that finds nobody running the turn, and the page says
    so."""
    deadline = time.monotonic() + 30
    while (held := _lease(workers, conversation_id)) in (first, None):
        assert time.monotonic() < deadline, "no worker took the waiting turn over"
        time.sleep(0.05)
    assert held is not None and held.endswith(first.rpartition(b":")[2])


def _state_keys(url: str, token: str) -> list[bytes]:
    """The keys Reflex's Redis state manager holds for a tab: `{token}_{state name}`."""
    client = redis.Redis.from_url(url)
    try:
        return list(client.scan_iter(match=f"{token}_*"))
    finally:
        client.close()
