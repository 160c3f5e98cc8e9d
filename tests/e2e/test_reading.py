"""Reading a turn in a real browser: display densities, running times, the call timeline
and disambiguated sibling cards, live and after a reload.

The provider is an OpenAI-shaped SSE server on loopback; `github` is the real stdio MCP
test server; the database is a real SQLite file.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Locator, Page, expect
from reflex.testing import AppHarness

from intent_ui.core.display import format_elapsed
from tests.e2e.axe import assert_accessible
from tests.e2e.harness import github_mcp_block, running_app
from tests.e2e.scenario import Scenario, calls_script, openai_config, reply
from tests.support.sse_server import ReplayServer, Script
from tests.support.wire import openai_chunks

pytestmark = pytest.mark.e2e

FIRST_LOAD_MS = 60_000
"""The first visit starts the MCP server."""

ELAPSED = re.compile(r"^(\d+\.\ds|\d+m \d\ds|\d+h \d\dm)$")

FOUR_INTENTS = [
    "Searching for MCP wiring",
    "Searching for OAuth handling",
    "Searching for the callback router",
    "Searching for token refresh",
]


@pytest.fixture(scope="module")
def app(server: ReplayServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppHarness]:
    config = openai_config(server) + github_mcp_block()
    with running_app(tmp_path_factory.mktemp("reading"), config) as harness:
        yield harness


@pytest.fixture
def full_density(app: AppHarness, page: Page) -> Iterator[None]:
    """Each test starts and ends at the full density (the setting is remembered)."""
    yield
    assert app.frontend_url is not None
    page.goto(app.frontend_url)
    page.get_by_test_id("density-select").select_option("full")
    expect(page.get_by_test_id("density-select")).to_have_value("full")


def search(call_id: str, intent: str, query: str) -> tuple[str, str, dict[str, str]]:
    return (call_id, "search_code", {"intent": intent, "query": query})


def four_searches() -> list[tuple[str, str, dict[str, str]]]:
    return [search(f"call_{i}", intent, f"q{i}") for i, intent in enumerate(FOUR_INTENTS)]


def send(page: Page, app: AppHarness, text: str, *, new_page: bool = True) -> None:
    assert app.frontend_url is not None
    if new_page:
        page.goto(app.frontend_url)
        page.get_by_test_id("new-chat").click()
    page.get_by_test_id("chat-input").fill(text)
    page.get_by_test_id("send-button").click()


def settled_turn(page: Page, app: AppHarness, scenario: Scenario) -> None:
    """One turn: a group of four searches, settled, then a reply."""
    scenario.first = calls_script(four_searches(), delay_s=0.0)
    scenario.followup = reply("Done.")
    send(page, app, "Search four things")
    expect(page.get_by_test_id("assistant-message").last).to_contain_text(
        "Done.", timeout=FIRST_LOAD_MS
    )
    expect(page.get_by_test_id("tool-call")).to_have_count(4)


def expect_full(page: Page) -> None:
    expect(page.get_by_test_id("tool-group-header")).to_have_attribute("aria-expanded", "true")
    expect(page.get_by_test_id("tool-call")).to_have_count(4)
    expect(page.get_by_test_id("tool-call-label")).to_have_text(FOUR_INTENTS)
    # A card opens to show its arguments.
    page.get_by_test_id("tool-call").first.get_by_role("button").click()
    expect(page.get_by_test_id("tool-call-args")).to_contain_text('"query": "q0"')
    page.get_by_test_id("tool-call").first.get_by_role("button").click()
    expect(page.get_by_test_id("tool-call-args")).to_have_count(0)


def expect_intents(page: Page) -> None:
    # One line per call, the group open, no argument previews even for an opened card.
    expect(page.get_by_test_id("tool-group-header")).to_have_attribute("aria-expanded", "true")
    expect(page.get_by_test_id("tool-call-label")).to_have_text(FOUR_INTENTS)
    expect(page.get_by_test_id("call-elapsed")).to_have_count(4)
    expect(page.get_by_test_id("tool-call").get_by_role("button")).to_have_count(0)
    expect(page.get_by_test_id("tool-call-args")).to_have_count(0)


def expect_header_only(page: Page) -> None:
    header = page.get_by_test_id("tool-group-header")
    expect(header).to_have_attribute("aria-expanded", "false")
    expect(header).to_have_attribute("aria-label", re.compile(r"4 tools"))
    expect(page.get_by_test_id("tool-call")).to_have_count(0)
    expect(page.get_by_test_id("group-elapsed")).to_have_text(ELAPSED)


def test_each_density_shows_the_same_labels_and_survives_a_reload(
    app: AppHarness, page: Page, scenario: Scenario, server: ReplayServer, full_density: None
) -> None:
    settled_turn(page, app, scenario)
    header_text = page.get_by_test_id("tool-group-label").inner_text()
    requests = len(server.requests)
    select = page.get_by_test_id("density-select")
    expect_full(page)

    select.select_option("intents")
    expect_intents(page)
    page.reload()
    expect(page.get_by_test_id("density-select")).to_have_value("intents")
    expect_intents(page)

    page.get_by_test_id("density-select").select_option("header")
    expect_header_only(page)
    expect(page.get_by_test_id("tool-group-label")).to_have_text(header_text)
    page.reload()
    expect(page.get_by_test_id("density-select")).to_have_value("header")
    expect_header_only(page)
    # Opening one group there shows its cards, with the same labels.
    page.get_by_test_id("tool-group-header").click()
    expect(page.get_by_test_id("tool-group-header")).to_have_attribute("aria-expanded", "true")
    expect(page.get_by_test_id("tool-call-label")).to_have_text(FOUR_INTENTS)

    page.get_by_test_id("density-select").select_option("full")
    expect_full(page)
    page.reload()
    expect(page.get_by_test_id("density-select")).to_have_value("full")
    expect_full(page)
    # No switch asked the model anything again.
    assert len(server.requests) == requests


def test_a_live_turn_switches_density_while_it_streams(
    app: AppHarness, page: Page, scenario: Scenario, full_density: None
) -> None:
    release = threading.Event()
    scenario.first = calls_script(
        four_searches(), hold_when='"Searching for token', release=release
    )
    try:
        send(page, app, "Search four things, slowly")
        labels = page.get_by_test_id("tool-call-label")
        expect(labels).to_have_count(4, timeout=FIRST_LOAD_MS)
        partial = re.compile(r"^Searching for token")
        expect(labels.nth(3)).to_have_text(partial)
        page.get_by_test_id("density-select").select_option("header")
        expect(page.get_by_test_id("tool-call")).to_have_count(0)
        expect(page.get_by_test_id("tool-group-label")).to_have_text(partial)
        page.get_by_test_id("density-select").select_option("intents")
        expect(labels).to_have_text([*FOUR_INTENTS[:3], partial])
        expect(page.get_by_test_id("tool-call").last).to_have_attribute("data-state", "streaming")
    finally:
        release.set()
    expect(page.get_by_test_id("tool-call").last).to_have_attribute("data-state", "settled")
    expect(labels).to_have_text(FOUR_INTENTS)


def test_running_times_tick_while_in_flight_and_freeze_once_settled(
    app: AppHarness, page: Page, scenario: Scenario
) -> None:
    scenario.first = calls_script(four_searches(), delay_s=0.0)
    scenario.followup = reply("Done.")
    send(page, app, "Search four things")
    message = page.get_by_test_id("assistant-message").last
    expect(message).to_contain_text("Done.", timeout=FIRST_LOAD_MS)
    settled = page.get_by_test_id("call-elapsed")
    expect(settled).to_have_count(4)
    frozen = [fixed_duration(settled.nth(i)) for i in range(4)]
    group_frozen = fixed_duration(page.get_by_test_id("group-elapsed"))

    # A second turn held mid-stream: its call counts up in the browser, also for a
    # reader who asked for reduced motion (a clock is information, not animation)...
    page.emulate_media(reduced_motion="reduce")
    release = threading.Event()
    scenario.first = calls_script(
        [search("call_live", "Searching for slow things", "slow")],
        hold_when='"Searching for slow',
        release=release,
    )
    try:
        send(page, app, "And one more", new_page=False)
        live = page.locator('[data-testid="tool-call"][data-call-id="call_live"]').get_by_test_id(
            "call-elapsed"
        )
        expect(live).to_have_text(ELAPSED)
        assert live.get_attribute("data-settled-at") is None
        first = live.inner_text()
        expect(live).not_to_have_text(first)
        second = live.inner_text()
        expect(live).not_to_have_text(second)
        # ...while the settled calls of the first turn keep their durations.
        assert [settled.nth(i).inner_text() for i in range(4)] == frozen
        assert page.get_by_test_id("group-elapsed").first.inner_text() == group_frozen
    finally:
        release.set()
    expect(page.get_by_test_id("assistant-message").last).to_contain_text("Done.")
    expect(live).to_have_attribute("data-settled-at", re.compile(r"^\d+$"))
    live_frozen = fixed_duration(live)
    page.reload()
    durations = page.get_by_test_id("call-elapsed")
    expect(durations).to_have_count(5)
    assert [durations.nth(i).inner_text() for i in range(5)] == [*frozen, live_frozen]
    expect(page.get_by_test_id("group-elapsed")).to_have_text(group_frozen)


def fixed_duration(element: Locator) -> str:
    """A settled time: it reads the duration between its own timestamps."""
    started = int(element.get_attribute("data-started-at") or "0")
    ended = int(element.get_attribute("data-settled-at") or "0")
    assert started > 0 and ended >= started
    expected = format_elapsed(ended - started)
    expect(element).to_have_text(expected)
    return expected


def test_the_timeline_jumps_to_a_card_by_mouse_and_keyboard(
    app: AppHarness, page: Page, scenario: Scenario, full_density: None
) -> None:
    settled_turn(page, app, scenario)
    timeline = page.get_by_test_id("timeline")
    marks = page.get_by_test_id("timeline-mark")
    expect(timeline).to_have_attribute("role", "list")
    expect(marks).to_have_count(4)
    card_ids = [c.get_attribute("data-call-id") for c in page.get_by_test_id("tool-call").all()]
    assert [m.get_attribute("data-call-id") for m in marks.all()] == card_ids
    for mark, intent in zip(marks.all(), FOUR_INTENTS, strict=True):
        expect(mark).to_have_attribute("aria-label", intent)
        expect(mark).to_have_attribute("title", intent)
        expect(mark).to_have_attribute("data-state", "settled")

    # Keyboard, with the group shown as its header line: Tab moves between marks, Enter
    # and Space open the group and the card and bring it into view.
    page.get_by_test_id("density-select").select_option("header")
    expect(page.get_by_test_id("tool-call")).to_have_count(0)
    marks.nth(0).focus()
    page.keyboard.press("Tab")
    expect(marks.nth(1)).to_be_focused()
    page.keyboard.press("Enter")
    card = page.locator('[data-testid="tool-call"][data-call-id="call_1"]')
    expect(card.get_by_role("button")).to_have_attribute("aria-expanded", "true")
    expect(card.get_by_test_id("tool-call-args")).to_contain_text('"query": "q1"')
    expect(card).to_be_in_viewport()
    marks.nth(3).focus()
    page.keyboard.press(" ")
    card = page.locator('[data-testid="tool-call"][data-call-id="call_3"]')
    expect(card.get_by_role("button")).to_have_attribute("aria-expanded", "true")
    assert_accessible(page)

    # Mouse, at the full density.
    page.get_by_test_id("density-select").select_option("full")
    marks.nth(2).click()
    card = page.locator('[data-testid="tool-call"][data-call-id="call_2"]')
    expect(card.get_by_role("button")).to_have_attribute("aria-expanded", "true")
    expect(card.get_by_test_id("tool-call-args")).to_contain_text('"query": "q2"')
    expect(card).to_be_in_viewport()


def test_a_turn_with_few_calls_has_no_timeline(
    app: AppHarness, page: Page, scenario: Scenario
) -> None:
    scenario.first = calls_script(four_searches()[:3], delay_s=0.0)
    scenario.followup = reply("Done.")
    send(page, app, "Search three things")
    expect(page.get_by_test_id("assistant-message").last).to_contain_text(
        "Done.", timeout=FIRST_LOAD_MS
    )
    expect(page.get_by_test_id("tool-call")).to_have_count(3)
    expect(page.get_by_test_id("timeline")).to_have_count(0)


def test_identical_sibling_intents_are_told_apart_by_their_arguments(
    app: AppHarness, page: Page, scenario: Scenario
) -> None:
    same = "Searching the codebase"
    release = threading.Event()
    scenario.first = calls_script(
        [search("call_o", same, "oauth"), search("call_m", same, "mcp")], delay_s=0.0
    )
    # The reply is held, so the turn is still live once both calls settled.
    scenario.followup = Script.sse(
        openai_chunks(text="Both searches are done.", finish_reason="stop"),
        hold_after=1,
        release=release,
    )
    expected = [f'{same} · "oauth"', f'{same} · "mcp"']
    try:
        send(page, app, "Search the codebase twice")
        cards = page.get_by_test_id("tool-call")
        expect(cards.nth(1)).to_have_attribute("data-state", "settled", timeout=FIRST_LOAD_MS)
        expect(page.get_by_test_id("assistant-message").last).to_have_attribute(
            "data-status", "streaming"
        )
        expect(page.get_by_test_id("tool-call-label")).to_have_text(expected)
        expect(page.get_by_test_id("tool-group-label")).to_have_text(same)
        message_id = page.get_by_test_id("assistant-message").last.get_attribute("data-message-id")
        assert message_id
    finally:
        release.set()
    message = page.get_by_test_id("assistant-message").last
    expect(message).to_contain_text("Both searches are done.")
    # The same turn, the same id: live, settled, and after a reload.
    expect(message).to_have_attribute("data-message-id", message_id)
    page.reload()
    expect(page.get_by_test_id("tool-call-label")).to_have_text(expected)
    expect(page.get_by_test_id("tool-group-label")).to_have_text(same)
    expect(page.get_by_test_id("assistant-message").last).to_have_attribute(
        "data-message-id", message_id
    )


def test_a_browser_clock_set_an_hour_ahead_still_counts_from_the_start(
    app: AppHarness, browser: Browser, scenario: Scenario
) -> None:
    context = browser.new_context()
    context.add_init_script("Date.now = (real => () => real() + 3_600_000)(Date.now);")
    page = context.new_page()
    release = threading.Event()
    scenario.first = calls_script(
        [search("call_skew", "Searching with a skewed clock", "skew")],
        hold_when='"Searching with',
        release=release,
    )
    try:
        send(page, app, "Search with a skewed clock")
        ticking = page.locator(
            '[data-call-id="call_skew"] [data-testid="call-elapsed"]:not([data-settled-at])'
        )
        expect(ticking).to_have_text(re.compile(r"^\d+\.\ds$"), timeout=FIRST_LOAD_MS)
    finally:
        release.set()
        context.close()
