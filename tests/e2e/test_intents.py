"""The intents page at `/intents` in a real browser, over a store that a wrapped MCP server
filled through `StoreSink`: per-tool rows, Call Coverage over required-context calls, and
the optional-context share shown apart."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp.shared.memory import create_connected_server_and_client_session
from playwright.sync_api import Page, expect
from reflex.testing import AppHarness

from intent_ui.capture import StoreSink, with_intent_capture
from intent_ui.core.capture import CONTEXT_ARG
from intent_ui.store.db import dispose_engines
from tests.e2e.harness import running_app
from tests.support.capture_servers import build_fastmcp

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


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppHarness]:
    workdir: Path = tmp_path_factory.mktemp("intents")
    anyio.run(_serve_calls, f"sqlite:///{workdir / 'intent_ui.db'}")
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
