"""Who is using the app, resolved again on every event; never a user id the browser sent.

- No `auth:` in the config: everyone is the local user (`local`), no sign-in.
- `mode: header`: the reverse proxy's user header on the websocket handshake (Reflex keeps
  the handshake's headers server-side and copies them into every event, so a browser
  cannot change them per event). A connection without it is refused.
- `mode: password`: a session cookie holding the user id, signed with `auth.secret`
  (itsdangerous) and checked, with its age, on every event. A browser can send any cookie
  value, so only the signature makes it count. The token also carries a fingerprint of the
  password hash: changing a password signs out that user's other sessions.

`AuthState` is the base of every page state, so each handler asks `await
self.current_user(host)` and hands the id to the store, which filters by it.
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

import reflex as rx
from itsdangerous import BadSignature, URLSafeTimedSerializer

from intent_ui.config import AuthConfig
from intent_ui.core.throttle import FailureThrottle
from intent_ui.store import users as user_store
from intent_ui.store.models import LOCAL_USER_ID
from intent_ui.ui.host import Host, get_host

__all__ = [
    "LOGIN_ROUTE",
    "SESSION_COOKIE",
    "SESSION_MAX_AGE_S",
    "AuthState",
    "read_session",
    "sign_session",
]

LOGIN_ROUTE = "/login"
SESSION_COOKIE = "intent_ui_session"
SESSION_MAX_AGE_S = 14 * 24 * 3600
_SALT = "intent_ui.session"
_FINGERPRINT_CHARS = 16


def _serializer(auth: AuthConfig) -> URLSafeTimedSerializer:
    assert auth.secret  # the config refuses password mode without one
    return URLSafeTimedSerializer(auth.secret, salt=_SALT)


def _fingerprint(user: user_store.User) -> str:
    return (user.password_hash or "")[-_FINGERPRINT_CHARS:]


def sign_session(auth: AuthConfig, user: user_store.User) -> str:
    """The cookie value that signs `user` in."""
    return str(_serializer(auth).dumps([user.id, _fingerprint(user)]))


def read_session(host: Host, auth: AuthConfig, token: str) -> user_store.User | None:
    """The user a session cookie signs in; None when it is missing, forged, expired, or
    older than the user's current password. Blocking (reads the user's row)."""
    if not token:
        return None
    try:
        user_id, fingerprint = _serializer(auth).loads(token, max_age=SESSION_MAX_AGE_S)
    except (BadSignature, ValueError, TypeError):
        return None
    user = user_store.get_user(host.engine, str(user_id))
    if user is None or not user.password_hash or fingerprint != _fingerprint(user):
        return None
    return user


_header_users: dict[tuple[tuple[str, str], str], str] = {}


def _header_user(host: Host, name: str) -> str:
    key = (host.key, name)
    cached = _header_users.get(key)
    if cached is None:
        cached = _header_users[key] = user_store.ensure_user(host.engine, name).id
    return cached


_failed_by_name = FailureThrottle(limit=5)
_failed_by_client = FailureThrottle(limit=50)
"""Failed sign-ins of this process in the last five minutes: five for one user name, or
fifty from one client address (many people can share one, behind a NAT or a proxy), and
that name or address waits. Guessing a password costs the guesser time, and the argon2
check it makes the server run is not repeated at will."""


def _sign_in_wait_message(seconds: float) -> str:
    minutes = max(1, math.ceil(seconds / 60))
    unit = "minute" if minutes == 1 else "minutes"
    return f"Too many failed sign-ins; try again in {minutes} {unit}."


class AuthState(rx.State):
    """The base of every page state: the session cookie and the sign-in problem, if any."""

    session: str = rx.Cookie("", name=SESSION_COOKIE, max_age=SESSION_MAX_AGE_S, same_site="strict")
    auth_error: str = ""
    signed_in_as: str = ""
    can_sign_out: bool = False

    async def current_user(self, host: Host) -> str | None:
        """The signed-in user's id, or None (and `auth_error` says why)."""
        auth = host.config.auth
        if auth is None:
            return LOCAL_USER_ID
        if auth.mode == "header":
            name = self.router.headers.raw_headers.get(auth.header.lower(), "").strip()
            if not name:
                self.auth_error = (
                    f"This request did not come through the sign-in proxy (no {auth.header} "
                    "header), so it is refused. Open the app at the proxy's address."
                )
                return None
            try:
                user_id = _header_user(host, name)
            except ValueError as exc:
                self.auth_error = f"The {auth.header} header is not a usable user name: {exc}"
                return None
            self.auth_error = ""
            self.signed_in_as = name
            return user_id
        user = await asyncio.to_thread(read_session, host, auth, self.session)
        if user is None:
            self.auth_error = "Sign in to continue."
            self.can_sign_out = False
            return None
        self.auth_error = ""
        self.signed_in_as = user.name
        self.can_sign_out = True
        return user.id

    async def sign_in_redirect(self, host: Host) -> Any:
        """Where to send a browser that is not signed in (password mode): the login page."""
        auth = host.config.auth
        if auth is not None and auth.mode == "password":
            return rx.redirect(LOGIN_ROUTE)
        return None

    @rx.event
    async def sign_in(self, form: dict[str, Any]) -> Any:
        host = await get_host()
        auth = host.config.auth
        if auth is None or auth.mode != "password":
            return rx.redirect("/")
        name = str(form.get("name") or "")
        password = str(form.get("password") or "")
        named = name.strip().casefold()
        guards = (
            (_failed_by_name, named),
            (_failed_by_client, self.router.session.client_ip),
        )
        wait = max(guard.retry_after(key, time.monotonic()) for guard, key in guards)
        if wait > 0:
            self.auth_error = _sign_in_wait_message(wait)
            return None
        # argon2 is slow on purpose: off the event loop, which serves every tab's stream.
        user = await asyncio.to_thread(user_store.authenticate, host.engine, name, password)
        if user is None:
            for guard, key in guards:
                guard.failed(key, time.monotonic())
            self.auth_error = "That name and password do not match; try again."
            return None
        _failed_by_name.succeeded(named)
        self.session = sign_session(auth, user)
        self.auth_error = ""
        self.signed_in_as = user.name
        self.can_sign_out = True
        return rx.redirect("/")

    @rx.event
    def sign_out(self) -> Any:
        self.session = ""
        self.signed_in_as = ""
        self.can_sign_out = False
        return rx.redirect(LOGIN_ROUTE)
