"""OriginGuard: the backend answers only the app's own page and the configured origins;
another page's websocket handshake and HTTP requests get 403 before the app sees them."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from starlette.types import Message

from intent_ui.ui import origin_guard
from intent_ui.ui.origin_guard import OriginGuard

APP_PAGE = "http://localhost:3000"
CONFIGURED = ("https://chat.example.com",)


class Backend:
    """Stands in for Reflex's app: records what reached it and answers 200 / accepts."""

    def __init__(self) -> None:
        self.reached: list[str] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.reached.append(scope["type"])
        if scope["type"] == "websocket":
            await receive()
            await send({"type": "websocket.accept"})
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"pong"})


@pytest.fixture(autouse=True)
def _frontend(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reflex's config as `reflex run` leaves it: the frontend on port 3000."""
    config = SimpleNamespace(deploy_url=f"{APP_PAGE}/", frontend_port=3000)
    monkeypatch.setattr(origin_guard, "get_config", lambda: config)


async def get(guard: OriginGuard, headers: dict[str, str]) -> httpx.Response:
    transport = httpx.ASGITransport(app=guard)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
        return await http.get("/ping", headers=headers)


async def handshake(guard: OriginGuard, origin: str | None) -> Message:
    """The first message the guarded app sends on a websocket handshake."""
    headers = [(b"origin", origin.encode())] if origin else []
    scope = {"type": "websocket", "path": "/_event/", "headers": headers}
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "websocket.connect"}

    async def send(message: Message) -> None:
        sent.append(message)

    await guard(scope, receive, send)
    return sent[0]


async def test_a_foreign_pages_websocket_is_refused_before_the_app() -> None:
    backend = Backend()
    guard = OriginGuard(backend, CONFIGURED)
    assert (await handshake(guard, "https://evil.example"))["type"] == "websocket.close"
    assert backend.reached == []


@pytest.mark.parametrize(
    "origin",
    [APP_PAGE, "http://127.0.0.1:3000", "https://chat.example.com", None],
)
async def test_the_apps_own_page_and_configured_origins_connect(origin: str | None) -> None:
    guard = OriginGuard(Backend(), CONFIGURED)
    assert (await handshake(guard, origin))["type"] == "websocket.accept"


async def test_a_foreign_pages_http_request_is_refused_and_says_how_to_allow_it() -> None:
    backend = Backend()
    response = await get(OriginGuard(backend, CONFIGURED), {"Origin": "https://evil.example"})
    assert response.status_code == 403
    assert "add it to server.allowed_origins in intent_ui.yaml" in response.text
    assert backend.reached == []


async def test_http_requests_from_the_app_or_without_an_origin_pass() -> None:
    guard = OriginGuard(Backend(), CONFIGURED)
    assert (await get(guard, {"Origin": APP_PAGE})).text == "pong"
    assert (await get(guard, {})).text == "pong"


async def test_the_frontend_port_is_read_when_the_request_comes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """AppHarness learns the frontend's port only after the app is built."""
    config = SimpleNamespace(deploy_url=None, frontend_port=None)
    monkeypatch.setattr(origin_guard, "get_config", lambda: config)
    guard = OriginGuard(Backend(), ())
    assert (await handshake(guard, "http://localhost:41234"))["type"] == "websocket.close"
    config.deploy_url = "http://localhost:41234/"
    assert (await handshake(guard, "http://localhost:41234"))["type"] == "websocket.accept"


async def test_a_refused_origin_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    guard = OriginGuard(Backend(), ())
    for _ in range(3):
        await handshake(guard, "https://evil.example")
    refusals = [r for r in caplog.records if "https://evil.example" in r.getMessage()]
    assert len(refusals) == 1
    assert "server.allowed_origins" in refusals[0].getMessage()
