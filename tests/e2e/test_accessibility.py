"""Every page passes an axe-core scan (WCAG 2.1 A and AA) with no serious or critical
issue, in the light theme and in the dark one, whether dark comes from the system (the
browser prefers dark, the theme follows the system) or from the user's choice in the
`theme-select` (on a browser that prefers light).

The chat page is scanned while a turn streams (live cards and the live header), after it
finished (a settled group, a single call, an expanded card) and after a demo turn with a
long result opened; then the builder with its tool switches, the "Describe all" switches
and the OpenAPI import form, the intents page, and the sign-in page (password mode). The
theme chosen is the user's: it survives a reload, reaches the other pages and the
sign-in page, and follows the user to another browser.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import Page, expect
from reflex.testing import AppHarness

from tests.e2e.axe import assert_accessible
from tests.e2e.harness import add_password_users, github_mcp_block, running_app
from tests.e2e.scenario import Scenario, calls_script, openai_config
from tests.e2e.tabs import ask
from tests.support.sse_server import ReplayServer

pytestmark = pytest.mark.e2e

FIRST_LOAD_MS = 60_000
"""The first visit starts the MCP server and loads the tokenizer."""

SECRET = "e2e-only-session-secret-0123456789abcdef"
PASSWORD = "alice-password"

SCHEMES = {
    # name: (what the browser prefers, the theme chosen, the colours the page shows)
    "light": ("light", "system", "light"),
    "dark-by-system": ("dark", "system", "dark"),
    "dark-by-choice": ("light", "dark", "dark"),
}


@pytest.fixture(scope="module")
def app(server: ReplayServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppHarness]:
    workdir = tmp_path_factory.mktemp("a11y")
    workspace = workdir / "workspace"
    workspace.mkdir()
    # Enough matching lines that a demo search's result scrolls inside its card.
    (workspace / "auth.py").write_text(
        "".join(f"# OAuth step {n}: the MCP client refreshes its token\n" for n in range(60))
    )
    add_password_users(workdir, {"alice": PASSWORD})
    config = (
        openai_config(server, "  - kind: demo\n    pacing_ms: 0\n")
        + github_mcp_block()
        + f"workspace: {workspace}\n"
        + f"auth:\n  mode: password\n  secret: {SECRET}\n  operators: [alice]\n"
    )
    with running_app(workdir, config) as harness:
        yield harness


@pytest.fixture(params=list(SCHEMES))
def scheme(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def url(app: AppHarness, path: str = "/") -> str:
    assert app.frontend_url is not None
    return app.frontend_url.rstrip("/") + path


def shows(page: Page, colours: str) -> None:
    """The page is painted in `colours` (Reflex's class on <html>)."""
    expect(page.locator("html")).to_have_class(re.compile(rf"(^|\s){colours}(\s|$)"))


def sign_in(page: Page, app: AppHarness) -> None:
    page.goto(url(app))
    expect(page.get_by_test_id("login-name")).to_be_visible(timeout=FIRST_LOAD_MS)
    page.get_by_test_id("login-name").fill("alice")
    page.get_by_test_id("login-password").fill(PASSWORD)
    page.get_by_test_id("login-submit").click()
    expect(page.get_by_test_id("signed-in-as")).to_have_text("alice", timeout=FIRST_LOAD_MS)


def signed_in(open_page: Callable[..., Page], app: AppHarness, scheme: str) -> Page:
    """A browser preferring the scheme's colours, signed in as alice, on the chat with
    the scheme's theme chosen."""
    prefers, theme, colours = SCHEMES[scheme]
    page = open_page(color_scheme=prefers)
    sign_in(page, app)
    page.get_by_test_id("theme-select").select_option(theme)
    expect(page.get_by_test_id("theme-select")).to_have_value(theme)
    shows(page, colours)
    return page


def search(call_id: str, intent: str, query: str) -> tuple[str, str, dict[str, str]]:
    return (call_id, "search_code", {"intent": intent, "query": query})


def test_the_chat_page_while_a_turn_streams_and_once_it_finished(
    app: AppHarness, open_page: Callable[..., Page], scenario: Scenario, scheme: str
) -> None:
    page = signed_in(open_page, app, scheme)
    page.get_by_test_id("new-chat").click()
    release = threading.Event()
    scenario.first = calls_script(
        [
            search("call_a", "Searching for MCP wiring", "mcp"),
            search("call_b", "Searching for OAuth handling", "oauth"),
        ],
        hold_when='"Searching for OAuth',
        release=release,
    )
    try:
        ask(page, "Search for MCP wiring and OAuth handling")
        expect(page.get_by_test_id("tool-call").nth(1)).to_have_attribute(
            "data-state", "streaming", timeout=FIRST_LOAD_MS
        )
        expect(page.get_by_test_id("stop-button")).to_be_visible()
        assert_accessible(page)
    finally:
        release.set()
    expect(page.get_by_test_id("assistant-message").last).to_contain_text("Done.")
    # A second turn with one call, so the page holds a group and a lone card.
    scenario.first = calls_script([search("call_c", "Searching for the router", "router")])
    ask(page, "And the router")
    expect(page.get_by_test_id("assistant-message")).to_have_count(2)
    expect(page.get_by_test_id("assistant-message").last).to_contain_text("Done.")
    expect(page.get_by_test_id("tool-call")).to_have_count(3)
    page.get_by_test_id("tool-call").first.get_by_role("button").first.click()
    expect(page.get_by_test_id("tool-call-result").first).to_be_visible()
    assert_accessible(page)


def test_a_demo_turn_with_a_long_result_opened(
    app: AppHarness, open_page: Callable[..., Page], scheme: str
) -> None:
    page = signed_in(open_page, app, scheme)
    page.get_by_test_id("new-chat").click()
    page.get_by_test_id("endpoint-select").select_option("demo")
    ask(page, "find where OAuth and MCP are handled")
    turn = page.get_by_test_id("assistant-message").last
    expect(turn).to_have_attribute("data-status", "complete", timeout=FIRST_LOAD_MS)
    expect(turn.get_by_test_id("tool-group").first).to_be_visible()
    turn.get_by_test_id("tool-call").first.get_by_role("button").first.click()
    result = turn.get_by_test_id("tool-call-result").first
    expect(result).to_be_visible()
    assert result.evaluate("pre => pre.scrollHeight > pre.clientHeight"), "the result scrolls"
    assert_accessible(page)


def test_the_builder(app: AppHarness, open_page: Callable[..., Page], scheme: str) -> None:
    page = signed_in(open_page, app, scheme)
    page.goto(url(app, "/agents"))
    expect(page.get_by_test_id("describe-all-toggle").first).to_be_visible(timeout=FIRST_LOAD_MS)
    shows(page, SCHEMES[scheme][2])
    page.get_by_test_id("agent-name").fill(f"Reviewer ({scheme})")
    page.get_by_test_id("agent-save").click()
    expect(page.get_by_test_id("builder-notice")).to_be_visible()
    assert_accessible(page)


def test_the_intents_and_sign_in_pages(
    app: AppHarness, open_page: Callable[..., Page], scheme: str
) -> None:
    page = signed_in(open_page, app, scheme)
    colours = SCHEMES[scheme][2]
    page.goto(url(app, "/intents"))
    expect(page.get_by_test_id("capture-empty")).to_be_visible(timeout=FIRST_LOAD_MS)
    shows(page, colours)
    assert_accessible(page)
    page.get_by_test_id("logout").click()
    expect(page.get_by_test_id("login-name")).to_be_visible()
    shows(page, colours)  # the browser keeps the last theme for whoever signs in next
    assert_accessible(page)


def test_the_chosen_theme_survives_a_reload_and_follows_the_user(
    app: AppHarness, open_page: Callable[..., Page]
) -> None:
    page = signed_in(open_page, app, "dark-by-choice")
    page.reload()
    expect(page.get_by_test_id("theme-select")).to_have_value("dark", timeout=FIRST_LOAD_MS)
    shows(page, "dark")
    page.goto(url(app, "/agents"))
    expect(page.get_by_test_id("agents-page")).to_be_visible(timeout=FIRST_LOAD_MS)
    shows(page, "dark")
    # Another browser (a new device: nothing remembered, it prefers light) shows the
    # user's theme once they sign in.
    other = open_page(color_scheme="light")
    sign_in(other, app)
    expect(other.get_by_test_id("theme-select")).to_have_value("dark")
    shows(other, "dark")
    # Choosing the system's theme there follows the browser's light preference.
    other.get_by_test_id("theme-select").select_option("system")
    shows(other, "light")
    other.reload()
    expect(other.get_by_test_id("theme-select")).to_have_value("system", timeout=FIRST_LOAD_MS)
    shows(other, "light")
