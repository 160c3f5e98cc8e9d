"""Refuses the event socket and the HTTP API to web pages other than the app's own.

Any page a user visits can open a websocket to `localhost`, and the browser lets it: the
server is the one to check `Origin`. `GuardedApp` puts `OriginGuard` around the whole
backend, in front of Reflex's own CORS layer (which would otherwise approve every
origin's preflight), so another page's handshake, preflight or request gets 403 before
Reflex sees it. A request without `Origin` passes: browsers send it on every websocket
handshake and cross-origin request, which is all a foreign page can make; other clients
are kept out by where the app listens (`server.bind`) and by sign-in (`auth`).

The app's own page is looked up in Reflex's config on each check, because its port is
known only once the frontend runs (`reflex run` may move to a free port, AppHarness
picks one).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import reflex as rx
from reflex.config import get_config
from starlette.types import ASGIApp, Receive, Scope, Send

from intent_ui.config import load_config
from intent_ui.core.origins import allowed_origins, is_allowed
from intent_ui.ui.turn_routes import TurnRoutes

__all__ = ["GuardedApp", "OriginGuard"]

logger = logging.getLogger(__name__)

_REPORTED_MAX = 100
"""Refused origins logged once each, up to this many (a page can invent any number)."""


class OriginGuard:
    """ASGI middleware: 403 for a request whose `Origin` is neither the app's page nor
    one of `configured` (normalised origins, as `server.allowed_origins` holds them)."""

    def __init__(self, app: ASGIApp, configured: Sequence[str]) -> None:
        self._app = app
        self._configured = tuple(configured)
        self._reported: set[str] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            origin = _origin(scope)
            if origin is not None and not self.allows(origin):
                self._report(origin, scope)
                if scope["type"] == "websocket":
                    # Closing before accepting answers the handshake with 403.
                    await send({"type": "websocket.close", "code": 1008})
                else:
                    await _forbidden(send, origin)
                return
        await self._app(scope, receive, send)

    def allows(self, origin: str) -> bool:
        config = get_config()
        allowed = allowed_origins(self._configured, config.deploy_url, config.frontend_port)
        return is_allowed(origin, allowed)

    def _report(self, origin: str, scope: Scope) -> None:
        if origin in self._reported or len(self._reported) >= _REPORTED_MAX:
            return
        self._reported.add(origin)
        what = "the event socket" if scope["type"] == "websocket" else scope.get("path", "")
        logger.warning(
            "Refused %s to a page at %s: not the app's own address. If users open the app "
            "there, add it to server.allowed_origins in intent_ui.yaml.",
            what,
            origin,
        )


class GuardedApp(rx.App):
    """`rx.App` whose backend (what the server gets from `app()`) is wrapped in an
    `OriginGuard` with `server.allowed_origins` (read when the server starts it). Inside
    the guard, requests under `/_iu/` go to the page's turn routes (`turn_routes`), the
    rest to Reflex."""

    def __call__(self) -> ASGIApp:
        backend = TurnRoutes(super().__call__())
        return OriginGuard(backend, load_config().server.allowed_origins)


def _origin(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"origin":
            return bytes(value).decode("latin-1")
    return None


async def _forbidden(send: Send, origin: str) -> None:
    body = (
        f"A page at {origin} may not use this app. If users open the app there, add it to "
        "server.allowed_origins in intent_ui.yaml.\n"
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 403,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
