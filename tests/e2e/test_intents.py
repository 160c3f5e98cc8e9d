"""The intents page at `/intents` in a real browser, over a store that a wrapped MCP server
filled through `StoreSink`: per-tool rows, Call Coverage over required-context calls, and
the optional-context share shown apart."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp.shared.memory import create_connected_server_and_client_session
from playwright.sync_api import Locator, Page, expect
from reflex.testing import AppHarness

from intent_ui.capture import StoreSink, with_intent_capture
from intent_ui.core.capture import CONTEXT_ARG
from intent_ui.store.db import dispose_engines, init_db
from intent_ui.store.models import LOCAL_USER_ID
from tests.e2e.axe import assert_accessible
from tests.e2e.harness import running_app
from tests.support.capture_servers import build_fastmcp
from tests.support.dashboard_seed import DAY, Call, record_turn_with_calls

pytestmark = pytest.mark.e2e


async def _serve_calls(db_url: str) -> None:
    """Real tool calls through the real wrapper: 3 required-context calls (2 with an
    intent), 4 optional-context calls on the widget tool (1 with an intent), and one call
    of the tool that owns its `context`."""
    sink = StoreSink(db_url)
    server = with_intent_capture(build_fastmcp("bookings"), intent=True, sink=sink)
    async with create_connected_server_and_client_session(server) as session:
        await session.list_tools()
        await session.call_tool("book_car", {"city": "Munich", "days": 2, CONTEXT_ARG: "Ski trip"})
        await session.call_tool("book_car", {"city": "Oslo", "days": 1, CONTEXT_ARG: "Fjords"})
        await session.call_tool("book_car", {"city": "Rome", "days": 3})
        await session.call_tool("refresh_map", {"area": "centre", CONTEXT_ARG: "Find parking"})
        for area in ("north", "south", "east"):
            await session.call_tool("refresh_map", {"area": area})
        await session.call_tool("annotate", {"text": "hi", "context": "tool's own"})
    sink.close()


def _own_turns(db_url: str) -> None:
    """Two of the local user's turns, copied for the dashboard as they ended: today five
    calls (two identical sibling intents, a vague one that failed, one without an
    intent, one MCP call whose intent is optional), and one call forty days ago."""
    engine = init_db(db_url)
    now = time.time()
    record_turn_with_calls(
        engine,
        LOCAL_USER_ID,
        [
            Call("read_file", "Reading the OAuth callback router"),
            Call("read_file", "Reading the OAuth callback router"),
            Call("grep_search", "Searching", state="error"),
            Call("list_files", None),
            Call("search_issues", "Looking for open OAuth bugs", server="github"),
        ],
        at=now,
    )
    record_turn_with_calls(
        engine,
        LOCAL_USER_ID,
        [Call("read_file", "Reading last quarter's release notes")],
        at=now - 40 * DAY,
    )


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppHarness]:
    workdir: Path = tmp_path_factory.mktemp("intents")
    db_url = f"sqlite:///{workdir / 'intent_ui.db'}"
    anyio.run(_serve_calls, db_url)
    _own_turns(db_url)
    dispose_engines()
    with running_app(workdir, "") as harness:
        yield harness


def test_intents_page_shows_coverage_per_tool(app: AppHarness, page: Page) -> None:
    assert app.frontend_url is not None
    page.goto(app.frontend_url.rstrip("/") + "/intents")
    expect(page.get_by_test_id("capture-coverage")).to_have_text("67%")
    expect(page.get_by_test_id("capture-optional-share")).to_have_text("25%")
    expect(page.get_by_test_id("capture-calls")).to_have_text("8")

    rows = page.get_by_test_id("capture-row")
    expect(rows).to_have_count(3)
    book = page.locator('[data-testid="capture-row"][data-tool="book_car"]')
    expect(book.get_by_test_id("capture-row-coverage")).to_have_text("67%")
    expect(book.get_by_test_id("capture-row-optional")).to_have_text("—")
    expect(book.get_by_test_id("capture-row-intent")).to_have_text("Fjords")
    widget = page.locator('[data-testid="capture-row"][data-tool="refresh_map"]')
    expect(widget.get_by_test_id("capture-row-coverage")).to_have_text("—")
    expect(widget.get_by_test_id("capture-row-optional")).to_have_text("25%")
    owner = page.locator('[data-testid="capture-row"][data-tool="annotate"]')
    expect(owner.get_by_test_id("capture-calls-cell")).to_have_text("1")
    expect(owner.get_by_test_id("capture-row-coverage")).to_have_text("—")


def _row(page: Page, kind: str, **attrs: str) -> Locator:
    selector = "".join(f'[data-{name}="{value}"]' for name, value in attrs.items())
    return page.locator(f'[data-testid="dashboard-{kind}-row"]{selector}')


def expect_cells(row: Locator, **cells: str) -> None:
    for name, text in cells.items():
        expect(row.get_by_test_id(f"dashboard-cell-{name}")).to_have_text(text)


def test_the_dashboard_counts_both_sources_per_tool_server_and_agent(
    app: AppHarness, page: Page
) -> None:
    assert app.frontend_url is not None
    page.goto(app.frontend_url.rstrip("/") + "/intents")
    # 6 calls of the app's own turns and the 8 captured ones.
    expect(page.get_by_test_id("dashboard-calls")).to_have_text("14")
    # Required: 5 own (4 with an intent) and 3 captured (2): 6 of 8.
    expect(page.get_by_test_id("dashboard-coverage")).to_have_text("75%")
    # Optional: the MCP call (with one) and the widget's 4 (1 with one): 2 of 5.
    expect(page.get_by_test_id("dashboard-optional-share")).to_have_text("40%")
    # "Searching", and the captured "Ski trip", "Fjords", "Find parking".
    expect(page.get_by_test_id("dashboard-vague")).to_have_text("4")
    expect(page.get_by_test_id("dashboard-duplicates")).to_have_text("2")
    expect(page.get_by_test_id("dashboard-failures")).to_have_text("1")

    expect(page.get_by_test_id("dashboard-tool-row")).to_have_count(7)
    read = _row(page, "tool", tool="read_file", source="app")
    expect_cells(read, calls="3", coverage="100%", optional="—", duplicates="2", failures="0")
    grep = _row(page, "tool", tool="grep_search", source="app")
    expect_cells(grep, calls="1", vague="1", failures="1")
    expect_cells(_row(page, "tool", tool="list_files"), calls="1", coverage="0%")
    mcp = _row(page, "tool", tool="search_issues", server="github")
    expect_cells(mcp, calls="1", coverage="—", optional="100%")
    book = _row(page, "tool", tool="book_car", source="captured")
    expect_cells(book, calls="3", coverage="67%")
    expect_cells(_row(page, "server", server="", source="app"), calls="5")
    expect_cells(_row(page, "server", server="github"), calls="1")
    expect_cells(_row(page, "server", server="bookings", source="captured"), calls="8")
    agent = page.get_by_test_id("dashboard-agent-row")
    expect(agent).to_have_count(1)
    expect(agent.get_by_test_id("dashboard-pick")).to_have_text("Default agent")
    expect_cells(agent, calls="6", duplicates="2")


def test_the_intent_lists_and_the_chart(app: AppHarness, page: Page) -> None:
    assert app.frontend_url is not None
    page.goto(app.frontend_url.rstrip("/") + "/intents")
    top = page.get_by_test_id("dashboard-top-intent").first
    expect(top.get_by_test_id("dashboard-intent-text")).to_have_text(
        "Reading the OAuth callback router"
    )
    expect(top.get_by_test_id("dashboard-intent-count")).to_have_text("2")
    vague = page.get_by_test_id("dashboard-vague-intent").get_by_test_id("dashboard-intent-text")
    expect(vague).to_have_count(4)
    assert sorted(vague.all_inner_texts()) == ["Find parking", "Fjords", "Searching", "Ski trip"]
    twin = page.get_by_test_id("dashboard-duplicate-intent")
    expect(twin).to_have_count(1)
    expect(twin).to_contain_text("2 calls to read_file")
    failed = page.get_by_test_id("dashboard-failure-intent")
    expect(failed.get_by_test_id("dashboard-intent-text")).to_have_text("Searching")
    expect(failed).to_contain_text("1 of 1 call failed")

    # All time runs from the oldest call, forty days ago, to today: one bar a day.
    chart = page.get_by_test_id("dashboard-chart")
    expect(chart.locator("svg.recharts-surface").first).to_be_visible()
    expect(chart.locator(".recharts-bar-rectangle").first).to_be_visible()
    rows = page.get_by_test_id("dashboard-chart-row")
    expect(rows).to_have_count(41)
    expect(rows.first.locator("td").nth(1)).to_have_text("1")
    expect(rows.last.locator("td").nth(1)).to_have_text("13")
    expect(page.get_by_test_id("dashboard-stripper-note")).to_contain_text(
        "Everything else is kept as written: names"
    )
    assert_accessible(page)


def test_the_period_the_source_and_a_picked_row_narrow_the_dashboard(
    app: AppHarness, page: Page
) -> None:
    assert app.frontend_url is not None
    page.goto(app.frontend_url.rstrip("/") + "/intents")
    calls = page.get_by_test_id("dashboard-calls")
    expect(calls).to_have_text("14")
    page.get_by_test_id("dashboard-period").select_option("30d")
    expect(calls).to_have_text("13")  # the call of forty days ago is out
    expect(page.get_by_test_id("dashboard-chart-row")).to_have_count(30)
    page.get_by_test_id("dashboard-period").select_option("all")
    expect(calls).to_have_text("14")

    _row(page, "tool", tool="read_file", source="app").get_by_test_id("dashboard-pick").click()
    expect(page.get_by_test_id("dashboard-scope")).to_contain_text("tool read_file")
    expect(calls).to_have_text("3")
    texts = page.get_by_test_id("dashboard-top-intent").get_by_test_id("dashboard-intent-text")
    expect(texts).to_have_text(
        ["Reading the OAuth callback router", "Reading last quarter's release notes"]
    )
    expect(page.get_by_test_id("dashboard-tool-row")).to_have_count(7)  # the tables stay
    page.get_by_test_id("dashboard-scope-clear").click()
    expect(page.get_by_test_id("dashboard-scope")).to_have_count(0)
    expect(calls).to_have_text("14")

    page.get_by_test_id("dashboard-source").select_option("captured")
    expect(calls).to_have_text("8")
    expect(page.get_by_test_id("dashboard-coverage")).to_have_text("67%")
    expect(page.get_by_test_id("dashboard-optional-share")).to_have_text("25%")
    expect(page.get_by_test_id("dashboard-agent-row")).to_have_count(0)
    page.get_by_test_id("dashboard-source").select_option("app")
    expect(calls).to_have_text("6")
    expect(page.get_by_test_id("dashboard-tool-row")).to_have_count(4)
    # The captured servers' panel is the captured calls whatever the source picked.
    expect(page.get_by_test_id("capture-calls")).to_have_text("8")


@pytest.fixture(scope="module")
def empty_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppHarness]:
    with running_app(tmp_path_factory.mktemp("intents-empty"), "") as harness:
        yield harness


def test_intents_page_without_captured_calls_says_how_to_get_them(
    empty_app: AppHarness, page: Page
) -> None:
    assert empty_app.frontend_url is not None
    page.goto(empty_app.frontend_url.rstrip("/") + "/intents")
    expect(page.get_by_test_id("capture-empty")).to_contain_text("StoreSink")
    expect(page.get_by_test_id("capture-coverage")).to_have_count(0)
    expect(page.get_by_test_id("capture-row")).to_have_count(0)
    expect(page.get_by_test_id("dashboard-empty")).to_be_visible()
    expect(page.get_by_test_id("dashboard-calls")).to_have_count(0)
