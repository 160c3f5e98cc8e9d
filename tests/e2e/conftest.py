"""Browser fixtures: the real app under AppHarness, driven by Playwright + Chromium, and
the loopback provider server a module's app talks to."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from tests.e2e.scenario import Scenario, start_server
from tests.support.sse_server import ReplayServer

ROOT = Path(__file__).resolve().parents[2]

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def chromium_executable() -> str | None:
    """CHROMIUM_PATH, then Debian's chromium, then Playwright's own browser (None)."""
    explicit = os.environ.get("CHROMIUM_PATH")
    if explicit:
        return explicit
    for candidate in ("/usr/bin/chromium", shutil.which("chromium") or ""):
        if candidate and Path(candidate).exists():
            return candidate
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    # Module-scoped on purpose: pytest-playwright's session loop breaks asyncio.run().
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_executable(), args=CHROMIUM_ARGS, headless=True
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert not errors, f"page errors: {errors}"


@pytest.fixture
def open_page(browser: Browser) -> Iterator[Callable[..., Page]]:
    """`open_page(**options)`: a page in a browser context of its own, made with
    Playwright's context options (`color_scheme="dark"`, a phone's viewport and touch);
    like `page`, a page error fails the test. Closed after it."""
    opened: list[tuple[BrowserContext, list[str]]] = []

    def open_(**options: Any) -> Page:
        context = browser.new_context(**options)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        opened.append((context, errors))
        return page

    yield open_
    for context, _ in opened:
        context.close()
    errors = [error for _, page_errors in opened for error in page_errors]
    assert not errors, f"page errors: {errors}"


@pytest.fixture
def contexts(browser: Browser) -> Iterator[list[BrowserContext]]:
    """Browser contexts a test opens (one per user or device), closed after it."""
    made: list[BrowserContext] = []
    yield made
    for context in made:
        context.close()


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    """The provider script of a module's app; each test sets what it needs."""
    return Scenario()


@pytest.fixture(scope="module")
def server(scenario: Scenario) -> Iterator[ReplayServer]:
    """The loopback OpenAI-shaped SSE server answering with `scenario`."""
    replay = start_server(scenario)
    yield replay
    replay.stop()
