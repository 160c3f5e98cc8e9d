"""Regenerate README's screenshots from the running app.

    source scripts/env.sh && python scripts/screenshots.py

Starts the real app (AppHarness) against a loopback OpenAI-shaped stream and the test
MCP server `github`, pauses the stream while the second intent is typing (streaming
shot), then lets it finish (settled shot). Then a turn of four calls, two of them with the
same intent, at each display density; that turn again in the light and the dark theme,
on a phone, and the builder in the dark theme. Writes docs/streaming.png,
docs/settled.png, docs/density-full.png, docs/density-intents.png,
docs/density-header.png, docs/chat-light.png, docs/chat-dark.png, docs/phone.png and
docs/builder-dark.png.
"""

from __future__ import annotations

import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import Browser, Page, expect, sync_playwright  # noqa: E402
from reflex.testing import AppHarness  # noqa: E402

from tests.e2e.conftest import CHROMIUM_ARGS, chromium_executable  # noqa: E402
from tests.e2e.harness import github_mcp_block, running_app  # noqa: E402
from tests.e2e.scenario import (  # noqa: E402
    Scenario,
    calls_script,
    openai_config,
    reply,
    start_server,
)

OUT = ROOT / "docs"


def main() -> None:
    scenario = Scenario()
    release = threading.Event()
    scenario.first = calls_script(
        [
            ("call_a", "search_code", {"intent": "Searching for MCP wiring", "query": "mcp"}),
            ("call_b", "search_code", {"intent": "Searching for OAuth handling", "query": "oauth"}),
        ],
        hold_when='"Searching for OAuth ha',
        release=release,
    )
    scenario.followup = reply(
        "MCP wiring lives in `src/server.py`; OAuth is handled in `src/auth.py`."
    )
    server = start_server(scenario)
    OUT.mkdir(exist_ok=True)
    with (
        tempfile.TemporaryDirectory() as workdir,
        running_app(Path(workdir), openai_config(server) + github_mcp_block()) as app,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(
            executable_path=chromium_executable(), args=CHROMIUM_ARGS
        )
        page = browser.new_page(viewport={"width": 1100, "height": 560})
        assert app.frontend_url
        page.goto(app.frontend_url)
        page.get_by_test_id("chat-input").fill("Search the repo for MCP wiring and OAuth handling")
        page.get_by_test_id("send-button").click()
        expect(page.get_by_test_id("tool-call-label").nth(1)).to_contain_text("Searching for OAuth")
        expect(page.get_by_test_id("tool-group-label")).to_contain_text("Searching for OAuth")
        page.screenshot(path=str(OUT / "streaming.png"))
        release.set()
        expect(page.get_by_test_id("assistant-message").last).to_contain_text("src/auth.py")
        page.wait_for_timeout(600)  # let the settle crossfade finish before the shot
        page.screenshot(path=str(OUT / "settled.png"))

        scenario.first = calls_script(
            [
                ("call_c", "search_code", {"intent": SAME, "query": "oauth"}),
                ("call_d", "search_code", {"intent": SAME, "query": "mcp"}),
                (
                    "call_e",
                    "search_code",
                    {"intent": "Searching for token refresh", "query": "refresh"},
                ),
                (
                    "call_f",
                    "search_code",
                    {"intent": "Searching for session expiry", "query": "expiry"},
                ),
            ],
            delay_s=0.0,
        )
        scenario.followup = reply(
            "OAuth lives in `src/auth.py`, MCP in `src/server.py`; tokens refresh in "
            "`src/tokens.py` and sessions expire in `src/session.py`."
        )
        page.get_by_test_id("new-chat").click()
        page.get_by_test_id("chat-input").fill("Where are OAuth, MCP, token refresh and expiry?")
        page.get_by_test_id("send-button").click()
        expect(page.get_by_test_id("assistant-message").last).to_contain_text("src/session.py")
        expect(page.get_by_test_id("timeline-mark")).to_have_count(4)
        written = [OUT / "streaming.png", OUT / "settled.png"]
        for density in ("full", "intents", "header"):
            page.get_by_test_id("density-select").select_option(density)
            expect(page.get_by_test_id("assistant-message").last).to_have_attribute(
                "data-density", density
            )
            page.wait_for_timeout(600)  # let the settle crossfade finish before the shot
            written.append(OUT / f"density-{density}.png")
            page.screenshot(path=str(written[-1]))
        page.get_by_test_id("density-select").select_option("full")
        written += themes_and_phone(browser, page, app)
        browser.close()
    server.stop()
    print("wrote " + ", ".join(str(path) for path in written))


def themes_and_phone(browser: Browser, page: Page, app: AppHarness) -> list[Path]:
    """The open turn in the light and the dark theme, then on a phone (light), and the
    builder in the dark theme."""
    assert app.frontend_url
    written = []
    for theme in ("light", "dark"):
        page.get_by_test_id("theme-select").select_option(theme)
        expect(page.locator("html")).to_have_class(theme)
        page.wait_for_timeout(300)  # let the colours settle before the shot
        written.append(OUT / f"chat-{theme}.png")
        page.screenshot(path=str(written[-1]))
    page.goto(app.frontend_url.rstrip("/") + "/agents")
    expect(page.get_by_test_id("describe-all-toggle").first).to_be_visible()
    page.get_by_test_id("agent-name").fill("Code reviewer")
    page.get_by_test_id("agent-save").click()
    expect(page.get_by_test_id("agent-row")).to_have_count(1)
    page.set_viewport_size({"width": 1100, "height": 760})
    page.wait_for_timeout(300)
    written.append(OUT / "builder-dark.png")
    page.screenshot(path=str(written[-1]))
    page.goto(app.frontend_url)
    page.get_by_test_id("theme-select").select_option("light")
    expect(page.locator("html")).to_have_class("light")

    phone = browser.new_context(
        viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True
    ).new_page()
    phone.goto(app.frontend_url)
    phone.get_by_test_id("menu-toggle").tap()
    phone.get_by_test_id("conversation-title").first.tap()
    expect(phone.get_by_test_id("timeline-mark")).to_have_count(4)
    phone.wait_for_timeout(600)
    written.append(OUT / "phone.png")
    phone.screenshot(path=str(written[-1]))
    phone.context.close()
    return written


SAME = "Searching the codebase"


if __name__ == "__main__":
    main()
