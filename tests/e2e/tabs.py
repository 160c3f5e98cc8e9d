"""What a browser test does on the app's pages: address a path, ask in the chat, make an
agent, and open a tab in a browser context of its own (one per user or device)."""

from __future__ import annotations

from playwright.sync_api import Browser, BrowserContext, Page, expect
from reflex.testing import AppHarness

__all__ = ["Tab", "ask", "new_agent", "url_of"]


def url_of(app: AppHarness, path: str = "/") -> str:
    """The app's address of `path`."""
    assert app.frontend_url is not None
    return app.frontend_url.rstrip("/") + path


def ask(page: Page, text: str) -> None:
    """Type `text` into the open chat and press Send."""
    page.get_by_test_id("chat-input").fill(text)
    page.get_by_test_id("send-button").click()


def new_agent(page: Page, name: str) -> str:
    """Make and save an agent called `name` on the open agents page (the user's only one
    by that name); its id."""
    page.get_by_test_id("agent-new").click()
    page.get_by_test_id("agent-name").fill(name)
    page.get_by_test_id("agent-save").click()
    row = page.get_by_test_id("agent-row").filter(has_text=name)
    expect(row).to_have_count(1)
    agent_id = row.get_attribute("data-agent-id")
    assert agent_id
    return agent_id


class Tab:
    """A page in a browser context of its own (closed by the `contexts` fixture), keeping
    the page errors it met and every websocket frame it got."""

    def __init__(self, browser: Browser, contexts: list[BrowserContext]) -> None:
        context = browser.new_context()
        contexts.append(context)
        self.page = context.new_page()
        self.frames: list[str] = []
        self.errors: list[str] = []
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on(
            "websocket",
            lambda socket: socket.on("framereceived", lambda f: self.frames.append(str(f))),
        )

    def received(self, text: str, since: int = 0) -> bool:
        return any(text in frame for frame in self.frames[since:])
