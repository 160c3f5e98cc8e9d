"""The chat page in a real browser: live intent cards and the three-phase group header.

The provider is an OpenAI-shaped SSE server on loopback replaying recorded-shape streams;
`github` is a real stdio MCP server process; the database is a real SQLite file.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest
from playwright.sync_api import Browser, Dialog, Page, expect
from reflex.testing import AppHarness

from tests.e2e.harness import LOOPBACK_ACTIONS, github_mcp_block, running_app
from tests.e2e.scenario import (
    Scenario,
    calls_script,
    openai_config,
    reply,
    send,
)
from tests.support.loopback import serve_get
from tests.support.sse_server import ReplayServer

pytestmark = pytest.mark.e2e

MCP_WIRING = "Searching for MCP wiring in the server registry"
OAUTH = "Searching for OAuth handling in the callback router"


@pytest.fixture(scope="module")
def call_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcp") / "calls.jsonl"


@pytest.fixture(scope="module")
def app(
    server: ReplayServer, call_log: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AppHarness]:
    config = openai_config(server) + github_mcp_block(call_log) + LOOPBACK_ACTIONS
    with running_app(tmp_path_factory.mktemp("chat"), config) as harness:
        yield harness


def search(call_id: str, intent: str, query: str) -> tuple[str, str, dict[str, str]]:
    return (call_id, "search_code", {"intent": intent, "query": query})


def test_two_sibling_searches_stream_distinct_labels_and_settle(
    app: AppHarness, page: Page, scenario: Scenario, call_log: Path
) -> None:
    release = threading.Event()
    scenario.first = calls_script(
        [search("call_a", MCP_WIRING, "mcp"), search("call_b", OAUTH, "oauth")],
        hold_when='"Searching for OAuth hand',
        release=release,
    )
    try:
        send(page, app, "Search the repo for MCP wiring and OAuth handling")
        cards = page.get_by_test_id("tool-call")
        labels = page.get_by_test_id("tool-call-label")
        header = page.get_by_test_id("tool-group-header")
        # Mid-stream: the second intent is still typing; the header tracks the live call.
        expect(cards).to_have_count(2)
        expect(cards.nth(1)).to_have_attribute("data-state", "streaming")
        expect(labels.nth(1)).to_have_text("Searching for OAuth hand")
        expect(labels.nth(0)).to_have_text(MCP_WIRING)
        expect(page.get_by_test_id("tool-group-label")).to_have_text("Searching for OAuth hand")
        expect(header).to_have_attribute("aria-label", "Searching for OAuth hand, 2 tools")
    finally:
        release.set()
    # Settled: each card keeps its own sentence; the header shows the last one to settle.
    expect(cards.nth(0)).to_have_attribute("data-state", "settled")
    expect(cards.nth(1)).to_have_attribute("data-state", "settled")
    expect(labels.nth(0)).to_have_text(MCP_WIRING)
    expect(labels.nth(1)).to_have_text(OAUTH)
    expect(header).to_have_text(f"{OAUTH} — github")
    expect(page.get_by_test_id("assistant-message").last).to_contain_text("Done.")
    # The MCP server never saw the injected intent.
    received = [json.loads(line) for line in call_log.read_text().splitlines()]
    assert [r["args"]["query"] for r in received[-2:]] == ["mcp", "oauth"]
    assert all("intent" not in r["args"] for r in received)
    # A reload renders the same labels from storage.
    page.reload()
    expect(page.get_by_test_id("tool-call-label")).to_have_text([MCP_WIRING, OAUTH])
    expect(page.get_by_test_id("tool-group-header")).to_have_text(f"{OAUTH} — github")


def test_out_of_order_settlement_does_not_rewind_the_header(
    app: AppHarness, page: Page, scenario: Scenario
) -> None:
    slow = ("call_slow", "slow", {"intent": "Waiting for the slow index", "seconds": 1.0})
    fast = search("call_fast", "Searching for the fast path", "fast")
    scenario.first = calls_script([slow, fast], delay_s=0.0)
    send(page, app, "Run the slow one and the fast one")
    cards = page.get_by_test_id("tool-call")
    expect(cards.nth(1)).to_have_attribute("data-state", "settled")
    expect(cards.nth(0)).to_have_attribute("data-state", "settled", timeout=10_000)
    # The slow call started first but settled last: the header shows it, not list order.
    expect(page.get_by_test_id("tool-group-label")).to_have_text("Waiting for the slow index")


def test_long_intent_truncates_without_changing_the_group_height(
    app: AppHarness, page: Page, scenario: Scenario
) -> None:
    long_intent = "Searching " + "very " * 58 + "carefully"
    assert len(long_intent) >= 300
    release = threading.Event()
    scenario.first = calls_script(
        [search("call_s", "Searching briefly", "a"), search("call_l", long_intent, "b")],
        hold_when='"Searching very',
        release=release,
    )
    try:
        send(page, app, "One short and one very long search")
        group = page.get_by_test_id("tool-group")
        labels = page.get_by_test_id("tool-call-label")
        expect(labels.nth(1)).to_have_text("Searching very")
        before = group.bounding_box()
    finally:
        release.set()
    expect(page.get_by_test_id("tool-call").nth(1)).to_have_attribute("data-state", "settled")
    after = group.bounding_box()
    assert before is not None and after is not None
    assert after["height"] == before["height"]
    shown = labels.nth(1).inner_text()
    assert len(shown) <= 120 and shown.endswith("…")
    expect(labels.nth(1)).to_have_attribute("title", long_intent)


def test_error_shows_its_framing(app: AppHarness, page: Page, scenario: Scenario) -> None:
    scenario.first = calls_script(
        [("call_crash", "crash", {"intent": "Crashing the server on purpose", "reason": "x"})]
    )
    send(page, app, "Crash the server")
    card = page.get_by_test_id("tool-call")
    expect(card).to_have_attribute("data-state", "error", timeout=15_000)
    expect(page.get_by_test_id("tool-call-label")).to_have_text(
        "Failed: Crashing the server on purpose"
    )


def test_stop_mid_stream_cancels_the_call(app: AppHarness, page: Page, scenario: Scenario) -> None:
    release = threading.Event()
    scenario.first = calls_script(
        [search("call_c", "Searching for the cancel path", "cancel")],
        hold_when='"Searching for the can',
        release=release,
    )
    try:
        send(page, app, "Start and stop")
        label = page.get_by_test_id("tool-call-label")
        expect(label).to_have_text("Searching for the can")
        page.get_by_test_id("stop-button").click()
        expect(page.get_by_test_id("tool-call")).to_have_attribute("data-state", "cancelled")
        expect(label).to_have_text("Cancelled: Searching for the can")
        expect(page.get_by_test_id("send-button")).to_be_visible()
    finally:
        release.set()
    page.reload()
    expect(page.get_by_test_id("tool-call")).to_have_attribute("data-state", "cancelled")


def test_markup_in_an_intent_renders_as_text(
    app: AppHarness, page: Page, scenario: Scenario
) -> None:
    dialogs: list[str] = []

    def dismiss(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", dismiss)
    intent = "Checking <img src=x onerror=alert(1)> payload"
    scenario.first = calls_script([search("call_x", intent, "x")])
    send(page, app, "Try the markup")
    label = page.get_by_test_id("tool-call-label")
    expect(label).to_have_text(intent)
    expect(label.locator("img")).to_have_count(0)
    assert dialogs == []


def test_a_reply_image_is_never_loaded_and_links_show_their_target(
    app: AppHarness, page: Page, scenario: Scenario, server: ReplayServer
) -> None:
    leak = f"{server.base_url}/pixel.png?secret=the-users-data"
    scenario.first = reply(
        f"Here you go ![tracking pixel]({leak}) and [the docs](https://docs.example.org/oauth)."
    )
    before = len(server.requests)
    send(page, app, "Show me the docs")
    image = page.get_by_test_id("reply-image")
    expect(image).to_contain_text("tracking pixel")
    expect(image).to_contain_text(leak)
    message = page.get_by_test_id("assistant-message").last
    expect(message.locator("img")).to_have_count(0)
    link = message.get_by_role("link", name="the docs")
    expect(link).to_have_attribute("href", "https://docs.example.org/oauth")
    expect(message).to_contain_text("https://docs.example.org/oauth")
    assert [r.path for r in server.requests[before:] if "pixel" in r.path] == []


def test_reduced_motion_removes_the_shimmer(
    app: AppHarness, browser: Browser, scenario: Scenario
) -> None:
    motions: tuple[tuple[Literal["no-preference", "reduce"], str], ...] = (
        ("no-preference", "iu-shimmer"),
        ("reduce", "none"),
    )
    for motion, expected in motions:
        release = threading.Event()
        scenario.first = calls_script(
            [search("call_m", "Searching with motion settings", "m")],
            hold_when='"Searching with',
            release=release,
        )
        context = browser.new_context(reduced_motion=motion)
        try:
            page = context.new_page()
            send(page, app, f"Motion {motion}")
            label = page.get_by_test_id("tool-call-label")
            expect(label).to_have_text("Searching with")
            animation = label.evaluate("el => getComputedStyle(el, '::after').animationName")
            assert animation == expected
        finally:
            release.set()
            context.close()


def test_agent_with_describe_intent_off_shows_default_labels_for_that_tool(
    app: AppHarness, page: Page, scenario: Scenario, server: ReplayServer
) -> None:
    from intent_ui.store import agents as agent_store
    from intent_ui.store.db import database_url, init_db
    from intent_ui.store.models import LOCAL_USER_ID

    engine = init_db(database_url())
    agent = agent_store.create_agent(
        engine,
        name="Half-described",
        tools=["search_code_mcp_github", "slow_mcp_github"],
        tool_options={"slow_mcp_github": {"describe_intent": True}},
        owner=LOCAL_USER_ID,
    )
    scenario.first = calls_script(
        [
            search("call_s", "Searching for OAuth handling", "oauth"),
            ("call_w", "slow", {"intent": "Waiting for the index", "seconds": 0.1}),
        ]
    )
    assert app.frontend_url
    page.goto(app.frontend_url)
    page.get_by_test_id("agent-select").select_option(str(agent.id))
    page.get_by_test_id("chat-input").fill("Use the half-described agent")
    page.get_by_test_id("send-button").click()
    cards = page.get_by_test_id("tool-call")
    expect(cards.nth(0)).to_have_attribute("data-state", "settled")
    expect(cards.nth(1)).to_have_attribute("data-state", "settled")
    expect(page.get_by_test_id("tool-call-label")).to_have_text(
        ["Ran search_code in github", "Waiting for the index"]
    )
    offered = {t["function"]["name"]: t["function"] for t in server.requests[-2].json["tools"]}
    assert set(offered) == {"search_code", "slow"}
    assert "intent" not in offered["search_code"]["parameters"]["properties"]
    assert next(iter(offered["slow"]["parameters"]["properties"])) == "intent"


@pytest.fixture
def pets_api() -> Iterator[tuple[str, list[str]]]:
    """A loopback REST API the imported action calls; records the paths it served."""
    seen: list[str] = []
    with serve_get(json.dumps([{"name": "Rex"}, {"name": "Tom"}]).encode(), seen=seen) as api:
        yield api, seen


def test_chat_calls_an_imported_action_with_its_intent(
    app: AppHarness,
    page: Page,
    scenario: Scenario,
    pets_api: tuple[str, list[str]],
    tmp_path: Path,
) -> None:
    base, seen = pets_api
    port = base.rsplit(":", 1)[1]
    document = {
        "openapi": "3.0.3",
        "info": {"title": "Pets", "version": "1"},
        "servers": [{"url": f"{base}/v1"}],
        "paths": {"/pets": {"get": {"operationId": "listPets", "summary": "List pets."}}},
    }
    spec = tmp_path / "pets.json"
    spec.write_text(json.dumps(document))
    tool_id = f"listPets_action_127---0---0---1_{port}"
    assert app.frontend_url
    page.goto(app.frontend_url.rstrip("/") + "/agents")
    page.get_by_test_id("agent-new").click()
    page.get_by_test_id("agent-name").fill("Pet keeper")
    page.get_by_test_id("agent-save").click()
    expect(page.get_by_test_id("agent-row").filter(has_text="Pet keeper")).to_have_count(1)
    page.locator('[data-testid="action-upload"] input[type="file"]').set_input_files(spec)
    switch = page.locator(f'[data-testid="describe-intent-toggle"][data-tool="{tool_id}"]')
    expect(switch).to_have_attribute("aria-pressed", "false", timeout=60_000)
    page.locator(f'[data-testid="tool-pick"][data-tool="{tool_id}"]').check()
    switch.click()
    expect(switch).to_have_attribute("aria-pressed", "true")

    scenario.first = calls_script(
        [("call_p", f"listPets_action_127_0_0_1_{port}", {"intent": "Listing every pet"})]
    )
    page.goto(app.frontend_url)
    page.get_by_test_id("agent-select").select_option(label="Pet keeper")
    page.get_by_test_id("chat-input").fill("Which pets are there?")
    page.get_by_test_id("send-button").click()
    expect(page.get_by_test_id("tool-call")).to_have_attribute("data-state", "settled")
    expect(page.get_by_test_id("tool-call-label")).to_have_text("Listing every pet")
    assert seen == ["/v1/pets"]
