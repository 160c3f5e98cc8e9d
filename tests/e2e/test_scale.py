"""The app as several backend workers on one Redis and one PostgreSQL, in a real browser.

Two workers of the production build (`running_workers`), each on a loopback address of
its own, with Reflex's Redis state manager (`REFLEX_REDIS_URL`) and the store on
PostgreSQL (`DB_URL`): the real servers of tests/support/servers.py, and a database made
for this module.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis
from playwright.sync_api import Page, expect

from tests.e2e.harness import Workers, running_workers
from tests.support import servers

pytestmark = pytest.mark.e2e

FIRST_LOAD_MS = 60_000
LISTING = "list the files"


@pytest.fixture(scope="module")
def workers(
    tmp_path_factory: pytest.TempPathFactory, redis_url: str, postgres_server_url: str
) -> Iterator[Workers]:
    workdir = tmp_path_factory.mktemp("scale")
    (workdir / "notes.md").write_text("# Notes\n")
    (workdir / "plan.md").write_text("# Plan\n")
    # Slow enough that the turn is still streaming when the page is first looked at.
    config = f"endpoints:\n  - kind: demo\n    pacing_ms: 80\nworkspace: {workdir}\n"
    with (
        servers.postgres_database(postgres_server_url) as db_url,
        running_workers(workdir, config, redis_url=redis_url, db_url=db_url) as started,
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
    assert token and _state_keys(workers.redis_url, token)


def _state_keys(url: str, token: str) -> list[bytes]:
    """The keys Reflex's Redis state manager holds for a tab: `{token}_{state name}`."""
    client = redis.Redis.from_url(url)
    try:
        return list(client.scan_iter(match=f"{token}_*"))
    finally:
        client.close()
