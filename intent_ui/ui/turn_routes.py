"""The page's turns over plain HTTP, under `/_iu/`: a live turn's stream, snapshots of
stored turns, and the detail of an expanded card.

- `GET /_iu/turns/{message_id}/stream?token=T&lang=L[&from=ID]`: the turn as server-sent
  events. A running turn streams its feed's frames from the page's last id
  (`Last-Event-ID`, which `EventSource` sends by itself when it reconnects, wins over
  `from`), then `event: end`: this process's session, or with several workers the
  follower of another worker's turn (`host.live`). A finished turn is sent as one
  snapshot from its log, then `event: end`.
- `GET /_iu/turns?ids=a,b&token=T&lang=L`: `{"turns": {id: {"id": last_id, "ops": [...]}}}`,
  a snapshot per turn (a running one's from its feed, so the stream can follow on).
- `GET /_iu/turns/{message_id}/calls/{call_id}?token=T&lang=L`: the card's full label,
  arguments and result (`call_detail`), and its turn's trace id when traces are on,
  fetched only when a card is expanded.

Every request carries a token from `stream_tokens` and is checked again here: an owner
token's conversation must be the user's (the owner-filtered store), a share token's must
still be shared (`resolve_share`), and the turn must be a message of that conversation.
A bad or expired token is 401, a conversation or turn out of reach 404, a card's detail
through a share link 403; each with `{"error": ...}`. A stream through a share link asks
again every `SHARE_RECHECK_S` and ends with `event: revoked` once it is no longer shared.

The page is served from the frontend's port and these routes from the backend's, so
answers carry CORS headers for the request's `Origin`: `OriginGuard`, in front of these
routes, has already refused every origin but the app's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from intent_ui.agent.tracing import turn_trace_id
from intent_ui.core.cards import CallDetail, call_detail
from intent_ui.core.locale import negotiate_language
from intent_ui.core.patches import END_EVENT, Frame, TurnPatcher
from intent_ui.core.turn import TurnView
from intent_ui.store import conversations as conv_store
from intent_ui.store import users as users_store
from intent_ui.store.shares import find_share
from intent_ui.ui.host import Host, get_host
from intent_ui.ui.stream_tokens import OwnerGrant, ShareGrant, StreamGrant, read_stream_token

__all__ = [
    "KEEPALIVE_S",
    "MAX_SNAPSHOT_IDS",
    "PREFIX",
    "SHARE_RECHECK_S",
    "TurnRoutes",
    "resolve_share",
    "turn_routes_app",
]

logger = logging.getLogger(__name__)

PREFIX = "/_iu/"
"""Requests under this path are these routes'; every other one is Reflex's."""

KEEPALIVE_S = 15.0
"""A comment line this often keeps proxies from closing an idle stream."""

SHARE_RECHECK_S = 1.0
"""How often a stream through a share link checks that the link still shares."""

MAX_SNAPSHOT_IDS = 500

_RETRY = b"retry: 500\n\n"
_KEEPALIVE = b": ka\n\n"
_REVOKED = b"event: revoked\ndata: {}\n\n"
_NO_STORE = {"Cache-Control": "no-store"}


def resolve_share(host: Host, share_id: str) -> str | None:
    """The conversation share `share_id` shows, or None when there is no such share or it
    was revoked. Blocking (a store read)."""
    return find_share(host.engine, share_id)


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=_NO_STORE)


def _lang(request: Request) -> str:
    # Bounded to the catalogue's languages: a running turn keeps a feed per language.
    return negotiate_language(request.query_params.get("lang"))


def _grant(request: Request, host: Host) -> StreamGrant:
    grant = read_stream_token(host.config.auth, request.query_params.get("token"))
    if grant is None:
        raise _Refused(401, "The token is missing, invalid or expired; reload the page.")
    return grant


async def _conversation(host: Host, grant: StreamGrant) -> str:
    """The conversation `grant` reads, checked against the store now."""
    if isinstance(grant, ShareGrant):
        shared = await asyncio.to_thread(resolve_share, host, grant.share_id)
        if shared is None:
            raise _Refused(401, "This link no longer shares a conversation.")
        return shared
    if host.config.auth is not None:
        epoch = await asyncio.to_thread(users_store.session_epoch, host.engine, grant.user_id)
        if epoch is None or epoch != grant.epoch:
            raise _Refused(401, "You were signed out since this page opened; sign in again.")
    owned = await asyncio.to_thread(
        conv_store.get_conversation, host.engine, grant.conversation_id, owner=grant.user_id
    )
    if owned is None:
        raise _Refused(404, "There is no such conversation.")
    return grant.conversation_id


async def _check_turns(host: Host, conversation_id: str, message_ids: list[str]) -> None:
    """404 unless every one of `message_ids` is a turn of the conversation, on any of its
    branches (a tab may still show one that another tab has flipped away from)."""
    unknown = []
    for message_id in message_ids:
        session = host.sessions.get(message_id)
        if session is None or session.conversation_id != conversation_id:
            unknown.append(message_id)
    if not unknown:
        return
    turns = await asyncio.to_thread(conv_store.turn_ids, host.engine, conversation_id)
    missing = [message_id for message_id in unknown if message_id not in turns]
    if missing:
        raise _Refused(404, f"There is no turn {missing[0]} in this conversation.")


async def _authorize(request: Request, message_ids: list[str]) -> tuple[Host, StreamGrant, str]:
    host = await get_host()
    grant = _grant(request, host)
    conversation_id = await _conversation(host, grant)
    await _check_turns(host, conversation_id, message_ids)
    return host, grant, conversation_id


def _stored_snapshot(host: Host, message_id: str, lang: str) -> Frame:
    """A turn from its log (replayed once and cached by the host). Blocking."""
    view = host.turn(message_id)
    return Frame(str(view.last_seq), TurnPatcher(message_id, lang).snapshot(view))


# --- the routes ---------------------------------------------------------------------------


async def stream_turn(request: Request) -> Response:
    message_id = request.path_params["message_id"]
    try:
        host, grant, conversation_id = await _authorize(request, [message_id])
    except _Refused as refused:
        return _error(refused.status, refused.message)
    lang = _lang(request)
    last_id = request.headers.get("last-event-id") or request.query_params.get("from") or None
    session = await host.live.get(message_id)
    body = (
        session.feed(lang).subscribe(
            last_id, idle_s=KEEPALIVE_S if not isinstance(grant, ShareGrant) else SHARE_RECHECK_S
        )
        if session is not None
        else _stored_stream(host, message_id, lang)
    )
    still_shared = None
    if isinstance(grant, ShareGrant):
        share_id = grant.share_id

        async def still_shared() -> bool:
            try:
                shared = await asyncio.to_thread(resolve_share, host, share_id)
            except Exception:  # the store is down: no answer is not a revocation
                logger.warning("Checking share %s failed", share_id, exc_info=True)
                return True
            return shared == conversation_id

    return _EventStream(
        _event_stream(body, still_shared),
        media_type="text/event-stream",
        headers={**_NO_STORE, "X-Accel-Buffering": "no"},
    )


async def _stored_stream(host: Host, message_id: str, lang: str) -> AsyncIterator[bytes]:
    frame = await asyncio.to_thread(_stored_snapshot, host, message_id, lang)
    yield frame.wire(message_id) + END_EVENT


async def turn_snapshots(request: Request) -> Response:
    raw = request.query_params.get("ids")
    if raw is None:
        return _error(400, "Say which turns: ids=ID,ID,...")
    ids = list(dict.fromkeys(i for i in (p.strip() for p in raw.split(",")) if i))
    if len(ids) > MAX_SNAPSHOT_IDS:
        return _error(400, f"Ask for at most {MAX_SNAPSHOT_IDS} turns at a time.")
    try:
        host, _, _ = await _authorize(request, ids)
    except _Refused as refused:
        return _error(refused.status, refused.message)
    lang = _lang(request)
    # A running turn's snapshot comes from its feed (on the loop), so its stream follows on.
    live = await host.live.get_many(ids)
    frames: dict[str, Frame | None] = {
        i: live[i].feed(lang).snapshot() if i in live else None for i in ids
    }
    stored = [i for i, frame in frames.items() if frame is None]

    def replay() -> dict[str, Frame]:
        return {i: _stored_snapshot(host, i, lang) for i in stored}

    if stored:
        frames.update(await asyncio.to_thread(replay))
    turns = {i: {"id": f.id, "ops": f.ops} for i, f in frames.items() if f is not None}
    return JSONResponse({"turns": turns}, headers=_NO_STORE)


async def call_detail_route(request: Request) -> Response:
    message_id = request.path_params["message_id"]
    call_id = request.path_params["call_id"]
    try:
        host, grant, _ = await _authorize(request, [message_id])
    except _Refused as refused:
        return _error(refused.status, refused.message)
    if not isinstance(grant, OwnerGrant):
        return _error(403, "A shared conversation shows no call details.")
    lang = _lang(request)

    def detail(view: TurnView) -> CallDetail | None:
        return call_detail(view, call_id, lang) if view.call(call_id) is not None else None

    session = await host.live.get(message_id)
    if session is not None:
        # A running view changes on the loop: it is read there, not from a thread.
        found = detail(session.view)
    else:
        found = await asyncio.to_thread(lambda: detail(host.turn(message_id)))
    if found is None:
        return _error(404, f"There is no call {call_id} in this turn.")
    trace_id = turn_trace_id(message_id) if host.sessions.tracing is not None else None
    if trace_id is not None:
        found["trace_id"] = trace_id
    return JSONResponse(found, headers=_NO_STORE)


async def _not_found(request: Request, exc: Exception) -> Response:
    if isinstance(exc, HTTPException):
        return _error(exc.status_code, str(exc.detail))
    return _error(500, "The request failed.")


def turn_routes_app() -> Starlette:
    """The routes (without CORS: `TurnRoutes` adds it)."""
    return Starlette(
        routes=[
            Route("/_iu/turns", turn_snapshots, methods=["GET"]),
            Route("/_iu/turns/{message_id}/stream", stream_turn, methods=["GET"]),
            Route("/_iu/turns/{message_id}/calls/{call_id}", call_detail_route, methods=["GET"]),
        ],
        exception_handlers={HTTPException: _not_found},
    )


# --- streaming ------------------------------------------------------------------------------


async def _event_stream(
    body: AsyncIterator[bytes], still_shared: Callable[[], Awaitable[bool]] | None
) -> AsyncIterator[bytes]:
    """`body` as the stream's bytes: `retry` first, a keep-alive comment when it has been
    quiet for `KEEPALIVE_S`, and (through a share link) `event: revoked` once the link no
    longer shares, checked at most every `SHARE_RECHECK_S`. A live turn's body says when
    it was idle with an empty chunk (`PatchFeed.subscribe`), so a page costs the writing
    of its bytes and no task or timer per frame."""
    loop = asyncio.get_running_loop()
    yield _RETRY
    written = checked = loop.time()
    try:
        async for chunk in body:
            now = loop.time()
            if still_shared is not None and now - checked >= SHARE_RECHECK_S:
                checked = now
                if not await still_shared():
                    yield _REVOKED
                    return
            if chunk:
                yield chunk
                written = now
            elif now - written >= KEEPALIVE_S:
                yield _KEEPALIVE
                written = now
    finally:
        closer = getattr(body, "aclose", None)
        if closer is not None:
            with contextlib.suppress(RuntimeError):
                await closer()


class _EventStream(StreamingResponse):
    """A streaming response that stops as soon as the client goes away, whatever ASGI
    version the server speaks (Starlette listens for the disconnect only below 2.4, and a
    stream of a quiet turn would otherwise notice at its next keep-alive)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            async with anyio.create_task_group() as group:

                async def stream() -> None:
                    await self.stream_response(send)
                    group.cancel_scope.cancel()

                group.start_soon(stream)
                await self.listen_for_disconnect(receive)
                group.cancel_scope.cancel()
        except* OSError:
            pass  # the client went away mid-write
        finally:
            closer = getattr(self.body_iterator, "aclose", None)
            if closer is not None:
                await closer()


# --- mounting -------------------------------------------------------------------------------


class TurnRoutes:
    """ASGI: HTTP requests under `PREFIX` go to the turn routes (with CORS for the page's
    origin, preflights answered here), everything else to `app` (Reflex)."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app
        self._routes = turn_routes_app()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not str(scope.get("path", "")).startswith(PREFIX):
            await self._app(scope, receive, send)
            return
        origin = _header(scope, b"origin")
        if scope.get("method") == "OPTIONS":
            await _preflight(send, origin)
            return
        if origin is None:
            await self._routes(scope, receive, send)
            return

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), *_cors(origin)]}
            await send(message)

        await self._routes(scope, receive, send_with_cors)


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value)
    return None


def _cors(origin: bytes) -> list[tuple[bytes, bytes]]:
    return [(b"access-control-allow-origin", origin), (b"vary", b"Origin")]


async def _preflight(send: Send, origin: bytes | None) -> None:
    headers = [(b"content-length", b"0")]
    if origin is not None:
        headers += [
            *_cors(origin),
            (b"access-control-allow-methods", b"GET, OPTIONS"),
            (b"access-control-allow-headers", b"Accept, Cache-Control, Last-Event-ID"),
            (b"access-control-max-age", b"600"),
        ]
    await send({"type": "http.response.start", "status": 204, "headers": headers})
    await send({"type": "http.response.body", "body": b""})
