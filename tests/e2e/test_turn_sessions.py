"""One turn, one truth, in a real browser: a running turn belongs to its session, not to
the tab that started it.

A reload mid-intent, mid-text or mid-tool shows the same single message and keeps
following it live; a second tab joins the running turn, and so does the tab that left the
chat and reopens it from the sidebar; Stop works from a reloaded tab;
and a turn stored before the event log renders exactly as the old code rendered it.
The provider is an OpenAI-shaped SSE server on loopback, `github` a real stdio MCP
server, and the database a real SQLite file that starts at the pre-event-log revision.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from playwright.sync_api import Browser, Locator, Page, expect
from reflex.config import get_config
from reflex.testing import AppHarness

from tests.e2e.harness import database_path, github_mcp_block, running_app
from tests.e2e.scenario import Scenario, calls_script, openai_config, reply, send
from tests.support.legacy_db import write_legacy_database
from tests.support.sse_server import ReplayServer, Script
from tests.support.wire import openai_chunks

pytestmark = pytest.mark.e2e

MCP_WIRING = "Searching for MCP wiring in the server registry"
OAUTH = "Searching for OAuth handling in the callback router"
SEARCHES = [
    ("call_a", "search_code", {"intent": MCP_WIRING, "query": "mcp"}),
    ("call_b", "search_code", {"intent": OAUTH, "query": "oauth"}),
]
DONE = "Both searches are done."
REPLY = "The MCP wiring lives in the server registry; OAuth is handled in the callback router."

SHOWN = 15_000
"""Milliseconds to wait for a page (re)load to show the turn: the dev build is slow to boot."""

LIVE = ".iu-live, .iu-pulse, [data-state='streaming'], [data-state='running']"
"""Anything still marked as in flight: shimmering labels, pulsing icons, live cards."""

SOME_ID = re.compile(r"\S")

SNAPSHOT_JS = """
message => ({
  id: message.getAttribute('data-message-id'),
  status: message.getAttribute('data-status'),
  cards: [...message.querySelectorAll('[data-testid="tool-call"]')].map(card => [
    card.getAttribute('data-call-id'),
    card.getAttribute('data-state'),
    card.querySelector('[data-testid="tool-call-label"]').innerText,
  ]),
  headers: [...message.querySelectorAll('[data-testid="tool-group-header"]')].map(
    header => [header.innerText, header.getAttribute('aria-label')]),
  text: [...message.querySelectorAll('.iu-md')].map(part => part.innerText).join(' ')
    .replace(/\\s+/g, ' ').trim(),
})
"""


STREAM_RECORDER_JS = """
window.iuStreamLog = [];
const PageEventSource = window.EventSource;
window.EventSource = class extends PageEventSource {
  constructor(...args) {
    super(...args);
    this.addEventListener("open", () => window.iuStreamLog.push(["open", ""]));
    this.addEventListener("message", (event) => window.iuStreamLog.push(["frame", event.data]));
  }
};
"""


def record_streams(page: Page) -> Callable[[], list[tuple[str, str]]]:
    """Record what the page's turn streams do in each page load: `("open", "")` when one
    connects, `("frame", data)` for each frame as received. Returns the reader."""
    page.add_init_script(STREAM_RECORDER_JS)
    return lambda: [(kind, data) for kind, data in page.evaluate("window.iuStreamLog || []")]


def record_stream_frames(page: Page) -> Callable[[], list[str]]:
    """The frames the page's turn streams delivered so far in this page load."""
    log = record_streams(page)
    return lambda: [data for kind, data in log() if kind == "frame"]


def two_searches(scenario: Scenario) -> None:
    """The turn most tests run: two sibling searches, then a short reply; no pauses."""
    scenario.first, scenario.followup = calls_script(SEARCHES), reply(DONE)


@pytest.fixture(autouse=True)
def default_scripts(scenario: Scenario) -> Iterator[None]:
    two_searches(scenario)
    yield
    two_searches(scenario)  # a test's held scripts never reach the next test


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("turn-sessions")


@pytest.fixture(scope="module")
def legacy(workdir: Path) -> dict[str, Any]:
    """The app's database as it was before the event log (two stored turns)."""
    return write_legacy_database(database_path(workdir))


@pytest.fixture(scope="module")
def app(server: ReplayServer, workdir: Path, legacy: dict[str, Any]) -> Iterator[AppHarness]:
    with running_app(workdir, openai_config(server) + github_mcp_block()) as harness:
        yield harness


@pytest.fixture(scope="module")
def settled_without_reload(app: AppHarness, browser: Browser, scenario: Scenario) -> dict[str, Any]:
    """How the two-search turn looks once settled when nothing interrupted its view."""
    context = browser.new_context()
    try:
        page = context.new_page()
        two_searches(scenario)
        send(page, app, "Search the repo for MCP wiring and OAuth handling")
        return settled(page)
    finally:
        context.close()


def one_message(page: Page) -> Locator:
    """The page shows exactly one assistant message, carrying its message id."""
    message = page.get_by_test_id("assistant-message")
    expect(message).to_have_count(1, timeout=SHOWN)
    expect(message).to_have_attribute("data-message-id", SOME_ID)
    return message


def settled(page: Page) -> dict[str, Any]:
    """Wait until the turn ended and nothing is in flight; what its message shows."""
    message = one_message(page)
    expect(message).not_to_have_attribute("data-status", "streaming", timeout=SHOWN)
    expect(page.get_by_test_id("send-button")).to_be_visible()
    expect(page.locator(LIVE)).to_have_count(0)
    return message.evaluate(SNAPSHOT_JS)


def without_id(snapshot: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in snapshot.items() if key != "id"}


def test_reload_mid_intent_keeps_one_message_that_continues_live(
    app: AppHarness, page: Page, scenario: Scenario, settled_without_reload: dict[str, Any]
) -> None:
    release, release_reply = threading.Event(), threading.Event()
    scenario.first = calls_script(SEARCHES, hold_when='"Sea', release=release)
    scenario.followup = reply(DONE, hold_when="Both", release=release_reply)
    label = page.get_by_test_id("tool-call-label")
    try:
        send(page, app, "Search the repo for MCP wiring and OAuth handling")
        expect(label).to_have_text("Sea")
        message_id = one_message(page).get_attribute("data-message-id")
        page.reload()
        message = one_message(page)
        expect(message).to_have_attribute("data-message-id", message_id or "")
        expect(label).to_have_text("Sea", timeout=SHOWN)
        expect(page.get_by_test_id("tool-call")).to_have_attribute("data-state", "streaming")
        expect(page.get_by_test_id("stop-button")).to_be_visible()
        release.set()
        # The reply is held, so the turn is still running: these labels arrived live.
        expect(label).to_have_text([MCP_WIRING, OAUTH])
        expect(page.get_by_test_id("tool-call").nth(1)).to_have_attribute("data-state", "settled")
        expect(message).to_have_attribute("data-status", "streaming")
        expect(message).to_contain_text("Both")
        expect(message).not_to_contain_text(DONE)
    finally:
        release.set()
        release_reply.set()
    expect(message).to_contain_text(DONE)
    after = settled(page)
    assert after["id"] == message_id
    assert without_id(after) == without_id(settled_without_reload)
    page.reload()
    expect(label).to_have_text([MCP_WIRING, OAUTH], timeout=SHOWN)
    assert settled(page) == after


def test_a_finished_round_stays_on_the_page_while_the_reply_streams(
    app: AppHarness, page: Page, scenario: Scenario
) -> None:
    """Once the reply starts, the live view sends the finished round apart from the part
    still streaming; the round's cards must stay the same elements (not mounted again,
    which would replay their settle animation and lose the reader's place)."""
    release = threading.Event()
    scenario.first = calls_script(SEARCHES)
    scenario.followup = Script.sse(
        openai_chunks(text=REPLY, finish_reason="stop"), delay_s=0.2, hold_after=0, release=release
    )
    cards = page.get_by_test_id("tool-call")
    try:
        send(page, app, "Search the repo for MCP wiring and OAuth handling")
        expect(cards).to_have_count(2)
        expect(cards.nth(0)).to_have_attribute("data-state", "settled")
        expect(cards.nth(1)).to_have_attribute("data-state", "settled")
        cards.evaluate_all("cards => cards.forEach(card => { card.iuKept = true; })")
    finally:
        release.set()
    message = one_message(page)
    expect(message).to_contain_text("The MCP")
    expect(message).to_have_attribute("data-status", "streaming")
    assert cards.evaluate_all("cards => cards.map(card => card.iuKept === true)") == [True, True]
    expect(page.get_by_test_id("tool-call-label")).to_have_text([MCP_WIRING, OAUTH])
    expect(message).to_contain_text(REPLY)
    settled(page)


def test_a_push_carries_the_card_that_changed_not_its_settled_sibling(
    app: AppHarness, page: Page, scenario: Scenario
) -> None:
    """While the second call's intent streams, the first card no longer changes: the
    frames the page receives carry the second card only (nothing of the first card
    travels again), and the page still shows both."""
    release = threading.Event()
    scenario.first = calls_script(
        SEARCHES, hold_when='"Searching for OAuth handling in the', release=release
    )
    frames = record_stream_frames(page)
    label = page.get_by_test_id("tool-call-label")
    try:
        send(page, app, "Search the repo for MCP wiring and OAuth handling")
        expect(label).to_have_text([MCP_WIRING, re.compile("^Searching for OAuth handling in")])
        received = frames()
    finally:
        release.set()
    while_b_streams = [frame for frame in received if "Searching for OAuth" in frame]
    assert len(while_b_streams) >= 2
    assert not [frame for frame in while_b_streams if '"call_a"' in frame]
    expect(label).to_have_text([MCP_WIRING, OAUTH])
    settled(page)


LONG_INTENT = "Fixing the 🐛 in " + "very " * 40 + "deep code 🚀 now"
FULL_TITLE_ONLY = "very " * 25
"""Longer than a label on screen can be (it is capped): only a whole title carries it."""


def test_a_long_title_grows_by_appends_and_a_reload_gets_it_whole(
    app: AppHarness, page: Page, scenario: Scenario
) -> None:
    """A streaming card's full label (its title) travels as what it gained per push,
    not whole again every push; offsets survive emoji (two units in the page, one on the
    server). The group header showing that intent streams its title the same way and is
    named by the text it shows. A reloaded tab is sent the titles whole at once, without
    waiting for new fragments."""
    release = threading.Event()
    scenario.first = calls_script(
        [
            ("call_a", "search_code", {"intent": "Listing the repo", "query": "ls"}),
            ("call_b", "search_code", {"intent": LONG_INTENT, "query": "bugs"}),
        ],
        hold_when="deep code",
        release=release,
    )
    frames = record_stream_frames(page)
    label = page.get_by_test_id("tool-call-label").nth(1)
    header_label = page.get_by_test_id("tool-group-label")
    header = page.get_by_test_id("tool-group-header")
    streamed_so_far = re.compile(r"^Fixing the 🐛 in (very ){40}deep code")
    try:
        send(page, app, "Fix the deep bug")
        expect(label).to_have_attribute("title", streamed_so_far)
        assert LONG_INTENT.startswith(label.get_attribute("title") or "")
        expect(header_label).to_have_attribute("title", streamed_so_far)
        expect(header).to_have_attribute("aria-label", f"{header_label.inner_text()}, 2 tools")
        whole_titles = [frame for frame in frames() if FULL_TITLE_ONLY in frame]
        assert len(whole_titles) <= 2, "the title was sent whole on most pushes"
        page.reload()
        expect(label).to_have_attribute("title", streamed_so_far, timeout=SHOWN)
        expect(header_label).to_have_attribute("title", streamed_so_far)
        expect(page.get_by_test_id("tool-call").nth(1)).to_have_attribute("data-state", "streaming")
    finally:
        release.set()
    expect(page.get_by_test_id("tool-call").nth(1)).to_have_attribute("data-state", "settled")
    expect(label).to_have_attribute("title", LONG_INTENT)
    assert len(label.inner_text()) <= 120


def test_a_card_keeps_keyboard_focus_when_its_turn_ends(
    app: AppHarness, page: Page, scenario: Scenario
) -> None:
    """The finished turn moves from the live view to the history as new elements; a
    reader on a card stays on it, and Enter still opens it."""
    release = threading.Event()
    scenario.first = calls_script(SEARCHES)
    scenario.followup = reply(DONE, hold_when="Both", release=release)
    cards = page.get_by_test_id("tool-call")
    try:
        send(page, app, "Search the repo for MCP wiring and OAuth handling")
        expect(cards.nth(0)).to_have_attribute("data-state", "settled")
        expect(one_message(page)).to_contain_text("Both")
        cards.nth(0).get_by_role("button").focus()
    finally:
        release.set()
    expect(one_message(page)).to_contain_text(DONE)
    settled(page)
    focused = page.evaluate(
        "document.activeElement.closest('[data-testid=\"tool-call\"]')?.dataset.callId ?? null"
    )
    assert focused == "call_a"
    page.keyboard.press("Enter")
    expect(cards.nth(0).get_by_role("button")).to_have_attribute("aria-expanded", "true")


def test_reload_mid_text_keeps_one_message_and_completes_the_reply(
    app: AppHarness, page: Page, scenario: Scenario
) -> None:
    release = threading.Event()
    scenario.first = calls_script([SEARCHES[0]])
    scenario.followup = reply(REPLY, hold_when="server registry", release=release)
    try:
        send(page, app, "Where is the MCP wiring?")
        message = one_message(page)
        expect(message).to_contain_text("The MCP wiring lives in the server registry")
        expect(page.get_by_test_id("tool-call")).to_have_attribute("data-state", "settled")
        page.reload()
        message = one_message(page)
        expect(message).to_contain_text(
            "The MCP wiring lives in the server registry", timeout=SHOWN
        )
        expect(message).not_to_contain_text("callback router")
        expect(page.get_by_test_id("tool-call-label")).to_have_text(MCP_WIRING)
    finally:
        release.set()
    expect(message).to_contain_text(REPLY)
    after = settled(page)
    assert after["status"] == "complete"
    assert after["text"] == REPLY
    page.reload()
    expect(page.get_by_test_id("assistant-message")).to_contain_text(REPLY, timeout=SHOWN)
    assert settled(page) == after


LONG_REPLY = " ".join(
    f"Paragraph {n} of the reply names the registry, the router and the tests."
    for n in range(1, 13)
)


def kill_connections_to(port: int) -> None:
    """Abort every TCP connection to `port` on loopback, as a network drop would (the
    kernel's socket destroy, `ss -K`): the browser sees its streams fail mid-response."""
    subprocess.run(
        ["ss", "-K", "dst", "127.0.0.1", "dport", "=", f":{port}"],
        check=True,
        capture_output=True,
    )


def test_a_dropped_stream_resumes_without_a_gap_or_a_duplicate(
    app: AppHarness, page: Page, scenario: Scenario
) -> None:
    """The page's connections to the server are cut while the reply streams, and frames
    go by unseen; the page reconnects by itself and resumes from the last frame it had
    (not from a fresh copy of the turn), so the reply reads exactly as written, nothing
    missing, nothing twice."""
    release = threading.Event()
    scenario.first = calls_script([SEARCHES[0]])
    scenario.followup = reply(LONG_REPLY, delay_s=0.03, hold_when="Paragraph 2 of", release=release)
    streams = record_streams(page)
    backend = urlparse(get_config().api_url).port
    assert backend is not None
    try:
        send(page, app, "Where is the MCP wiring?")
        message = one_message(page)
        expect(message).to_contain_text("Paragraph 1 of the reply")
        release.set()
        expect(message).to_contain_text("Paragraph 3 of the reply")
        kill_connections_to(backend)
        expect(message).to_contain_text("Paragraph 6 of the reply")
    finally:
        release.set()
    after = settled(page)
    assert after["status"] == "complete"
    assert after["text"] == LONG_REPLY
    assert after["cards"][0][1:] == ["settled", MCP_WIRING]
    log = streams()
    opened = [i for i, (kind, _) in enumerate(log) if kind == "open"]
    assert len(opened) >= 2, "the stream never dropped"
    resumed = [json.loads(data)["ops"] for kind, data in log[opened[1] :] if kind == "frame"]
    assert not [ops for ops in resumed if ["reset"] in ops], "the page was sent the turn again"


def test_reload_mid_tool_shows_it_running_then_settled(
    app: AppHarness, page: Page, scenario: Scenario, tmp_path: Path
) -> None:
    gate = tmp_path / "index-built"
    intent = "Waiting for the index to build"
    scenario.first = calls_script(
        [("call_w", "slow", {"intent": intent, "seconds": 60, "until": str(gate)})]
    )
    card = page.get_by_test_id("tool-call")
    label = page.get_by_test_id("tool-call-label")
    try:
        send(page, app, "Build the index")
        expect(card).to_have_attribute("data-state", "running")
        page.reload()
        one_message(page)
        expect(card).to_have_attribute("data-state", "running", timeout=SHOWN)
        expect(label).to_have_text(intent)
    finally:
        gate.touch()
    expect(card).to_have_attribute("data-state", "settled")
    expect(label).to_have_text(intent)
    after = settled(page)
    page.reload()
    expect(card).to_have_attribute("data-state", "settled", timeout=SHOWN)
    assert settled(page) == after


def test_a_second_tab_joins_the_running_turn(
    app: AppHarness, page: Page, scenario: Scenario, settled_without_reload: dict[str, Any]
) -> None:
    release = threading.Event()
    scenario.first = calls_script(SEARCHES, hold_when='"Searching for OAuth hand', release=release)
    second = page.context.new_page()
    errors: list[str] = []
    second.on("pageerror", lambda exc: errors.append(str(exc)))
    tabs = (page, second)
    try:
        send(page, app, "Search the repo for MCP wiring and OAuth handling")
        expect(page.get_by_test_id("tool-call-label").nth(1)).to_have_text(
            "Searching for OAuth hand"
        )
        assert app.frontend_url is not None
        second.goto(app.frontend_url)  # the same user; the browser remembers the chat
        ids = []
        for tab in tabs:
            ids.append(one_message(tab).get_attribute("data-message-id"))
            expect(tab.get_by_test_id("tool-call-label")).to_have_text(
                [MCP_WIRING, "Searching for OAuth hand"], timeout=SHOWN
            )
            expect(tab.get_by_test_id("tool-group-label")).to_have_text("Searching for OAuth hand")
        assert ids[0] == ids[1]
    finally:
        release.set()
    try:
        ends = [settled(tab) for tab in tabs]
        assert ends[0] == ends[1]
        assert without_id(ends[0]) == without_id(settled_without_reload)
    finally:
        second.close()
    assert not errors, f"page errors in the second tab: {errors}"


def test_reopening_the_running_chat_from_the_sidebar_follows_it(
    app: AppHarness, page: Page, scenario: Scenario, settled_without_reload: dict[str, Any]
) -> None:
    release = threading.Event()
    scenario.first = calls_script(SEARCHES, hold_when='"Searching for OAuth hand', release=release)
    label = page.get_by_test_id("tool-call-label")
    try:
        send(page, app, "Search the repo for MCP wiring and OAuth handling")
        expect(label.nth(1)).to_have_text("Searching for OAuth hand")
        active = page.locator('[data-testid="conversation-row"][data-active="true"]')
        conversation_id = active.get_attribute("data-conversation-id")
        page.get_by_test_id("new-chat").click()
        expect(page.get_by_test_id("assistant-message")).to_have_count(0)
        page.locator(
            f'[data-testid="conversation-row"][data-conversation-id="{conversation_id}"] '
            '[data-testid="conversation-title"]'
        ).click()
        one_message(page)
        expect(label).to_have_text([MCP_WIRING, "Searching for OAuth hand"])
        expect(page.get_by_test_id("stop-button")).to_be_visible()
    finally:
        release.set()
    expect(label).to_have_text([MCP_WIRING, OAUTH])
    assert without_id(settled(page)) == without_id(settled_without_reload)


def test_stop_from_a_reloaded_tab_cancels_the_turn(
    app: AppHarness, page: Page, scenario: Scenario
) -> None:
    release = threading.Event()
    scenario.first = calls_script(SEARCHES, hold_when='"Searching for MCP', release=release)
    card = page.get_by_test_id("tool-call")
    label = page.get_by_test_id("tool-call-label")
    try:
        send(page, app, "Start, reload, stop")
        expect(label).to_have_text("Searching for MCP")
        page.reload()
        one_message(page)
        expect(label).to_have_text("Searching for MCP", timeout=SHOWN)
        page.get_by_test_id("stop-button").click()
        expect(card).to_have_attribute("data-state", "cancelled")
        expect(label).to_have_text("Cancelled: Searching for MCP")
    finally:
        release.set()
    after = settled(page)
    assert after["status"] == "cancelled"
    assert [state for _, state, _ in after["cards"]] == ["cancelled"]
    page.reload()
    expect(card).to_have_attribute("data-state", "cancelled", timeout=SHOWN)
    assert settled(page) == after


def test_a_turn_stored_before_the_event_log_renders_as_it_did(
    app: AppHarness, page: Page, legacy: dict[str, Any]
) -> None:
    rows = legacy["rows"]
    (conversation,) = rows["conversations"]
    assistant_ids = [
        m["id"]
        for m in sorted(rows["messages"], key=lambda m: m["position"])
        if m["role"] == "assistant"
    ]
    assert app.frontend_url is not None
    page.goto(app.frontend_url)
    page.locator(
        f'[data-testid="conversation-row"][data-conversation-id="{conversation["id"]}"] '
        '[data-testid="conversation-title"]'
    ).click()
    messages = page.get_by_test_id("assistant-message")
    expect(messages).to_have_count(len(assistant_ids), timeout=SHOWN)
    assert [m.get_attribute("data-message-id") for m in messages.all()] == assistant_ids
    # A group shown by its summary starts collapsed: open it to read its cards.
    headers = page.get_by_test_id("tool-group-header")
    for index in range(headers.count()):
        header = headers.nth(index)
        if header.get_attribute("aria-expanded") == "false":
            header.click()
            expect(header).to_have_attribute("aria-expanded", "true")
    for message_id, rendered in legacy["rendered"].items():
        message = page.locator(f'[data-testid="assistant-message"][data-message-id="{message_id}"]')
        for call_id, card in rendered["cards"].items():
            shown = message.locator(f'[data-testid="tool-call"][data-call-id="{call_id}"]')
            expect(shown).to_have_attribute("data-state", card["state"])
            expect(shown.get_by_test_id("tool-call-label")).to_have_text(card["label"])
        calls_per_group: dict[int, int] = {}
        for call in rows["tool_calls"]:
            if call["message_id"] == message_id:
                calls_per_group[call["block"]] = calls_per_group.get(call["block"], 0) + 1
        # A group of one call renders as its card alone, without a header.
        group_labels = [
            header["text"]
            for group, header in sorted(rendered["headers"].items(), key=lambda h: int(h[0]))
            if calls_per_group[int(group)] > 1
        ]
        expect(message.get_by_test_id("tool-group-label")).to_have_text(group_labels)
        text = message.evaluate(SNAPSHOT_JS)["text"]
        assert text.split() == rendered["text"].split()
    expect(page.locator(LIVE)).to_have_count(0)
