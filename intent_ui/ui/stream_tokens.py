"""Short-lived tokens that let a page read turns over plain HTTP (`turn_routes`).

The event socket knows who a tab is (`auth.py` resolves it on every event), but the turn
stream and its snapshots are plain requests to the backend from `EventSource` and
`fetch`, on another port than the page, so no sign-in cookie comes with them. The page
state mints a token for what the tab may read and hands it to the page:

- an owner token `{"u": user_id, "c": conversation_id, "e": epoch}`: a signed-in user's
  own conversation; the routes check it against the owner-filtered store on every
  request, and, with sign-in on, the user's sign-in epoch against the stored one, so
  signing out everywhere (or a new password) ends the tokens the user's pages hold too;
- a share token `{"s": share_id}`: a read-only link; the routes ask the share (which may
  be revoked) for its conversation.

Tokens are signed (itsdangerous) with `auth.secret` when the config sets one, else with a
secret made at random when the process starts (several workers behind one address then
need `auth.secret` set, or a token minted by one is refused by the others). A token
opens a stream or answers a request for `TOKEN_MAX_AGE_S` after it was minted; a stream
opened in time runs to its end.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from itsdangerous import BadData, URLSafeTimedSerializer

from intent_ui.config import AuthConfig

__all__ = [
    "TOKEN_MAX_AGE_S",
    "OwnerGrant",
    "ShareGrant",
    "StreamGrant",
    "mint_owner_token",
    "mint_share_token",
    "read_stream_token",
]

TOKEN_MAX_AGE_S = 15 * 60

_SALT = "intent_ui.turn_stream"
_PROCESS_SECRET = secrets.token_urlsafe(32)


@dataclass(frozen=True, slots=True)
class OwnerGrant:
    """A signed-in user reads one of their conversations."""

    user_id: str
    conversation_id: str
    epoch: int | None
    """The user's sign-in epoch when the token was minted (None: no stored user, as the
    local user without sign-in)."""


@dataclass(frozen=True, slots=True)
class ShareGrant:
    """Anyone with the link reads the conversation a share shows, while it is shared."""

    share_id: str


StreamGrant = OwnerGrant | ShareGrant


def _serializer(auth: AuthConfig | None) -> URLSafeTimedSerializer:
    secret = auth.secret if auth is not None and auth.secret else _PROCESS_SECRET
    return URLSafeTimedSerializer(secret, salt=_SALT)


def mint_owner_token(
    auth: AuthConfig | None, user_id: str, conversation_id: str, epoch: int | None
) -> str:
    """A token for `user_id`'s conversation (`auth`: the loaded config's `auth`; `epoch`:
    the user's sign-in epoch now, `store.users.session_epoch`)."""
    return str(_serializer(auth).dumps({"u": user_id, "c": conversation_id, "e": epoch}))


def mint_share_token(auth: AuthConfig | None, share_id: str) -> str:
    """A read-only token for the conversation share `share_id` shows."""
    return str(_serializer(auth).dumps({"s": share_id}))


def read_stream_token(
    auth: AuthConfig | None, token: str | None, *, max_age_s: int = TOKEN_MAX_AGE_S
) -> StreamGrant | None:
    """What `token` grants; None when it is missing, forged, expired or malformed."""
    if not token:
        return None
    try:
        payload = _serializer(auth).loads(token, max_age=max_age_s)
    except (BadData, ValueError, TypeError):
        return None
    if not isinstance(payload, dict):
        return None
    if payload.keys() == {"u", "c", "e"} and _named(payload["u"]) and _named(payload["c"]):
        epoch = payload["e"]
        if epoch is None or (isinstance(epoch, int) and not isinstance(epoch, bool)):
            return OwnerGrant(payload["u"], payload["c"], epoch)
    if payload.keys() == {"s"} and _named(payload["s"]):
        return ShareGrant(payload["s"])
    return None


def _named(value: object) -> bool:
    return isinstance(value, str) and bool(value)
