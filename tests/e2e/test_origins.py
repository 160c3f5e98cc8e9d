"""Other web pages cannot drive the app: a page served from another origin opens no event
socket and gets 403 from the HTTP API, while the app's own page chats as before.

Any page a user visits may try `new WebSocket("ws://127.0.0.1:8000/_event/...")`; the
browser sends that page's origin in the handshake and leaves the decision to the server.
The foreign page here is another web server on this machine, so no browser rule about
public pages reaching local addresses gets in the way: only the app decides.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Page, expect
from reflex.config import get_config
from reflex.testing import AppHarness

from tests.e2e.harness import running_app
from tests.e2e.scenario import send
from tests.support.loopback import serve_get

pytestmark = pytest.mark.e2e

FIRST_LOAD_MS = 60_000

OPEN_EVENT_SOCKET = """
url => new Promise(resolve => {
  const socket = new WebSocket(url);
  socket.onopen = () => { socket.close(); resolve("open"); };
  socket.onerror = () => resolve("refused");
})
"""
FETCH_STATUS = "url => fetch(url).then(response => response.status, () => 'blocked')"


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppHarness]:
    workdir = tmp_path_factory.mktemp("origins")
    config = f"endpoints:\n  - kind: demo\n    pacing_ms: 0\nworkspace: {workdir}\n"
    with running_app(workdir, config) as harness:
        yield harness


def backend_url() -> str:
    """The backend AppHarness started (it points the frontend there too)."""
    return get_config().api_url.rstrip("/")


def event_socket_url() -> str:
    return backend_url().replace("http://", "ws://", 1) + "/_event/?EIO=4&transport=websocket"


@pytest.fixture(scope="module")
def foreign_site() -> Iterator[str]:
    """Another web app on this machine (any page the user visits would do)."""
    page = b"<!doctype html><title>another site</title><h1>another site</h1>"
    with serve_get(page, "text/html") as site:
        yield f"{site}/"


def test_a_foreign_page_cannot_open_the_event_socket(
    app: AppHarness, foreign_site: str, page: Page
) -> None:
    page.goto(foreign_site)
    assert page.evaluate(OPEN_EVENT_SOCKET, event_socket_url()) == "refused"


def test_a_foreign_page_is_refused_by_the_http_api(
    app: AppHarness, foreign_site: str, page: Page
) -> None:
    page.goto(foreign_site)
    # The page cannot read any answer: the refusal carries no CORS headers.
    assert page.evaluate(FETCH_STATUS, f"{backend_url()}/ping") == "blocked"
    origin = foreign_site.rstrip("/")
    refused = httpx.get(f"{backend_url()}/ping", headers={"Origin": origin})
    assert refused.status_code == 403
    assert "server.allowed_origins" in refused.text
    # So is the CORS preflight a browser sends before a request with a body or a cookie.
    preflight = preflight_from(origin)
    assert preflight.status_code == 403
    assert "access-control-allow-origin" not in preflight.headers


def preflight_from(origin: str) -> httpx.Response:
    headers = {"Origin": origin, "Access-Control-Request-Method": "POST"}
    return httpx.options(f"{backend_url()}/ping", headers=headers)


def test_the_apps_own_page_still_connects_and_chats(app: AppHarness, page: Page) -> None:
    send(page, app, "list the files")
    reply = page.get_by_test_id("assistant-message")
    expect(reply).to_have_count(1, timeout=FIRST_LOAD_MS)
    expect(reply).to_have_attribute("data-status", "complete")
    # The same probe the foreign page ran, from the app's own origin.
    assert page.evaluate(OPEN_EVENT_SOCKET, event_socket_url()) == "open"
    assert page.evaluate(FETCH_STATUS, f"{backend_url()}/ping") == 200
    assert app.frontend_url is not None
    own = app.frontend_url.rstrip("/")
    assert preflight_from(own).headers["access-control-allow-origin"] == own
