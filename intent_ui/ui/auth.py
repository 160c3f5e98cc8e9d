"""Who is using the app, resolved again on every event; never a user id the browser sent.

- No `auth:` in the config: everyone is the local user (`local`), no sign-in.
- `mode: header`: the reverse proxy's user header on the websocket handshake (Reflex keeps
  the handshake's headers server-side and copies them into every event, so a browser
  cannot change them per event). A connection without it is refused, and so is one
  carrying it from a peer that is not one of `server.trusted_proxies`.
- `mode: password`: a sign-in cookie holding the user id, signed with `auth.secret`
  (itsdangerous) and checked, with its age, on every event. A browser can send any cookie
  value, so only the signature makes it count. The token also carries the user's
  `session_epoch`: raising it (sign out everywhere, a new password) ends every older
  sign-in. The cookie is `Secure` when the page is served over HTTPS (`cookie_is_secure`).

Signing out, and any event that finds the tab's sign-in gone or another user's cookie in
it, resets every state of the tab (`AuthState._forget_tab`): the page may hydrate from
the state at any time, the sign-in page too, so nothing of the previous user stays there.

`AuthState` is the base of every page state, so each handler asks `await
self.current_user(host)` and hands the id to the store, which filters by it.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

import reflex as rx
from itsdangerous import BadSignature, URLSafeTimedSerializer
from reflex.istate.data import RouterData

from intent_ui.config import AuthConfig, ServerConfig
from intent_ui.core.proxies import client_address, is_trusted
from intent_ui.store import users as user_store
from intent_ui.store.models import LOCAL_USER_ID
from intent_ui.ui.host import Host, get_host
from intent_ui.ui.sign_in_throttle import sign_in_throttle

__all__ = [
    "LOGIN_ROUTE",
    "SECURE_SIGN_IN_COOKIE",
    "SIGN_IN_COOKIE",
    "SIGN_IN_MAX_AGE_S",
    "AuthState",
    "cookie_is_secure",
    "read_sign_in",
    "sign_in_token",
]

LOGIN_ROUTE = "/login"
# The cookie names and the salt keep their old word: a new value would sign everyone out.
SIGN_IN_COOKIE = "intent_ui_session"
SECURE_SIGN_IN_COOKIE = "__Secure-intent_ui_session"
"""The sign-in cookie of pages served over HTTPS: the prefix makes the browser refuse it
unless it is `Secure` and was set by a secure page."""
SIGN_IN_MAX_AGE_S = 14 * 24 * 3600
_SALT = "intent_ui.session"


def _serializer(auth: AuthConfig) -> URLSafeTimedSerializer:
    assert auth.secret  # the config refuses password mode without one
    return URLSafeTimedSerializer(auth.secret, salt=_SALT)


def sign_in_token(auth: AuthConfig, user: user_store.User) -> str:
    """The cookie value that signs `user` in, until their `session_epoch` is raised."""
    return str(_serializer(auth).dumps([user.id, user.session_epoch]))


def read_sign_in(host: Host, auth: AuthConfig, token: str) -> user_store.User | None:
    """The user a sign-in cookie signs in; None when it is missing, forged, expired, or
    from before the user's sign-ins were ended (sign out everywhere, a new password).
    Blocking (reads the user's row)."""
    if not token:
        return None
    try:
        user_id, epoch = _serializer(auth).loads(token, max_age=SIGN_IN_MAX_AGE_S)
    except (BadSignature, ValueError, TypeError):
        return None
    if not isinstance(user_id, str) or type(epoch) is not int:
        return None
    user = user_store.get_user(host.engine, user_id)
    if user is None or not user.password_hash or epoch != user.session_epoch:
        return None
    return user


def cookie_is_secure(setting: bool | None, origin: str) -> bool:
    """Whether the sign-in cookie is `Secure`: as `auth.secure_cookie` says, else (None)
    exactly when the page was served over HTTPS.

    The page itself writes the cookie, so the page's scheme is what counts, and the
    browser states it in the `Origin` of the websocket handshake: a proxy that ends TLS in
    front of the app changes nothing, and no forwarded header needs trusting. A `Secure`
    cookie written by a plain-http page would be dropped (except on localhost)."""
    if setting is not None:
        return setting
    return origin.strip().lower().startswith("https://")


_header_users: dict[tuple[str, str], str] = {}
"""User ids by (database, header name): an id belongs to the database that made it."""


def _header_user(host: Host, name: str) -> str:
    key = (str(host.engine.url), name)
    cached = _header_users.get(key)
    if cached is None:
        cached = _header_users[key] = user_store.ensure_user(host.engine, name).id
    return cached


def _sign_in_wait_message(seconds: float) -> str:
    minutes = max(1, math.ceil(seconds / 60))
    unit = "minute" if minutes == 1 else "minutes"
    return f"Too many failed sign-ins; try again in {minutes} {unit}."


def _client_address(router: RouterData, server: ServerConfig) -> str:
    """The client's address as the last trusted proxy saw it. Reflex's `client_ip` is the
    socket's TCP peer (with its `trusted_proxy_hops` left at 0, which this app relies
    on); X-Forwarded-For counts only from the proxies in `server.trusted_proxies`."""
    forwarded_for = router.headers.raw_headers.get("x-forwarded-for", "")
    return client_address(router.session.client_ip, forwarded_for, server.trusted_proxies)


class AuthState(rx.State):
    """The base of every page state: the sign-in cookie and the sign-in problem, if any."""

    sign_in_cookie: str = rx.Cookie(
        "", name=SIGN_IN_COOKIE, max_age=SIGN_IN_MAX_AGE_S, same_site="strict"
    )
    secure_sign_in_cookie: str = rx.Cookie(
        "", name=SECURE_SIGN_IN_COOKIE, max_age=SIGN_IN_MAX_AGE_S, same_site="strict", secure=True
    )
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
            peer = self.router.session.client_ip
            if name and not is_trusted(peer, host.config.server.trusted_proxies):
                self.auth_error = (
                    f"The {auth.header} header came from {peer}, which is not a trusted proxy "
                    "(server.trusted_proxies), so it is refused. Open the app at the proxy's "
                    "address."
                )
                return None
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
        secure, plain = self.secure_sign_in_cookie, self.sign_in_cookie
        user = await asyncio.to_thread(read_sign_in, host, auth, secure or plain)
        if user is None:
            if self.can_sign_out:
                # This tab was signed in and its sign-in ended elsewhere (signed out
                # everywhere, a new password, its age): drop what it holds of that user.
                await self._forget_tab()
            self.auth_error = "Sign in to continue."
            self.can_sign_out = False
            return None
        if self.signed_in_as and self.signed_in_as != user.name:
            # Another user's cookie reached this tab (they signed in in another tab of
            # this browser): nothing of the previous user may stay.
            await self._forget_tab()
            self.secure_sign_in_cookie, self.sign_in_cookie = secure, plain
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
        client = _client_address(self.router, host.config.server)
        # Guessing a password costs the guesser time, and the argon2 check it makes the
        # server run is not repeated at will (ui/sign_in_throttle.py: how many, how long).
        throttle = sign_in_throttle()
        wait = await throttle.retry_after(named, client)
        if wait > 0:
            self.auth_error = _sign_in_wait_message(wait)
            return None
        # argon2 is slow on purpose: off the event loop, which serves every tab's stream.
        user = await asyncio.to_thread(user_store.authenticate, host.engine, name, password)
        if user is None:
            await throttle.failed(named, client)
            self.auth_error = "That name and password do not match; try again."
            return None
        await throttle.succeeded(named)
        await self._forget_tab()  # nothing of whoever used this tab before stays
        self._keep_sign_in(auth, sign_in_token(auth, user))
        self.auth_error = ""
        self.signed_in_as = user.name
        self.can_sign_out = True
        return rx.redirect("/")

    def _keep_sign_in(self, auth: AuthConfig, token: str) -> None:
        """Give the browser `token` in the cookie its page's scheme calls for."""
        if cookie_is_secure(auth.secure_cookie, self.router.headers.origin):
            self.secure_sign_in_cookie, self.sign_in_cookie = token, ""
        else:
            self.secure_sign_in_cookie, self.sign_in_cookie = "", token

    async def _forget_tab(self) -> None:
        """Reset every state of this tab to its defaults, the sign-in cookie included:
        conversations, open messages, the live turn, pickers, agents, captured calls.

        Generic on purpose, so a var added later cannot be forgotten here. Each state is
        loaded first (a state manager may keep them apart) so the reset reaches it, and
        stops what this process does for the tab on its behalf (`_stop_tab_work`)."""
        root = await self.get_state(AuthState)
        pending = list(AuthState.get_substates())
        while pending:
            state_class = pending.pop()
            state = await root.get_state(state_class)
            assert isinstance(state, AuthState)  # a substate of AuthState is one
            state._stop_tab_work()
            pending.extend(state_class.get_substates())
        root.reset()

    def _stop_tab_work(self) -> None:
        """Stop work this process does for this tab on this state's behalf (a state that
        has such work overrides this); called when the tab forgets its user."""

    async def _signed_out(self) -> Any:
        await self._forget_tab()
        return rx.redirect(LOGIN_ROUTE)

    @rx.event
    async def sign_out(self) -> Any:
        """Sign this tab out; nothing of the user stays in it."""
        return await self._signed_out()

    @rx.event
    async def sign_out_everywhere(self) -> Any:
        """End every sign-in of the signed-in user, on every device, then sign out here."""
        host = await get_host()
        auth = host.config.auth
        user = await self.current_user(host)
        if user is not None and auth is not None and auth.mode == "password":
            await asyncio.to_thread(user_store.end_sign_ins, host.engine, user)
        return await self._signed_out()
