"""Read-only share links to conversations: create, look up, revoke.

A link is a `ShareLink` row whose id is the secret in its URL (`/share/{id}`): anyone
holding it reads the conversation without signing in, until the owner revokes it. A
conversation has at most one live link at a time; creating one while it is live hands
out the same id, and after a revocation a new one gets a new id, so a revoked URL never
opens anything again.

Creating, reading and revoking take the owner (a user id) and treat another user's
conversation as absent, like every store module. `find_share` is the one lookup without
an owner: the link itself is the permission, and it answers only while the link is live
and the conversation still belongs to whoever shared it.
"""

from __future__ import annotations

import secrets
import time

from sqlalchemy import Engine, update
from sqlmodel import Session, col, select

from intent_ui.store.db import open_session, owned_row, store_errors
from intent_ui.store.models import Clock, Conversation, ShareLink

__all__ = ["SHARE_ID_BYTES", "create_share", "find_share", "live_share", "revoke_share"]

SHARE_ID_BYTES = 24
"""Random bytes in a share id (32 URL-safe characters): not guessable, not enumerable."""


@store_errors("share the conversation")
def create_share(
    engine: Engine, conversation_id: str, *, owner: str, now: Clock = time.time
) -> str | None:
    """The id of the conversation's live link, made now if it has none; None when the
    conversation does not exist or is someone else's."""
    with open_session(engine) as session:
        if owned_row(session, Conversation, conversation_id, owner) is None:
            return None
        live = _live(session, conversation_id, owner)
        if live is not None:
            return live
        link = ShareLink(
            id=secrets.token_urlsafe(SHARE_ID_BYTES),
            conversation_id=conversation_id,
            owner_id=owner,
            created_at=now(),
        )
        session.add(link)
        session.commit()
        return link.id


@store_errors("read the conversation's link")
def live_share(engine: Engine, conversation_id: str, *, owner: str) -> str | None:
    """The id of the conversation's live link; None when it has none or is not the
    owner's."""
    with open_session(engine) as session:
        if owned_row(session, Conversation, conversation_id, owner) is None:
            return None
        return _live(session, conversation_id, owner)


@store_errors("revoke the conversation's link")
def revoke_share(
    engine: Engine, conversation_id: str, *, owner: str, now: Clock = time.time
) -> bool:
    """Revoke the conversation's live link; False when it had none or is not the owner's."""
    with engine.begin() as connection:
        result = connection.execute(
            update(ShareLink)
            .where(
                col(ShareLink.conversation_id) == conversation_id,
                col(ShareLink.owner_id) == owner,
                col(ShareLink.revoked_at).is_(None),
            )
            .values(revoked_at=now())
        )
    return result.rowcount > 0


@store_errors("open the shared conversation")
def find_share(engine: Engine, share_id: str) -> str | None:
    """The conversation a link shows; None when the link is unknown or revoked, or the
    conversation is gone or no longer its sharer's."""
    if not share_id:
        return None
    statement = (
        select(ShareLink.conversation_id)
        .join(Conversation, col(Conversation.id) == col(ShareLink.conversation_id))
        .where(
            col(ShareLink.id) == share_id,
            col(ShareLink.revoked_at).is_(None),
            col(Conversation.owner_id) == col(ShareLink.owner_id),
        )
    )
    with open_session(engine) as session:
        return session.exec(statement).first()


def _live(session: Session, conversation_id: str, owner: str) -> str | None:
    statement = (
        select(ShareLink.id)
        .where(
            col(ShareLink.conversation_id) == conversation_id,
            col(ShareLink.owner_id) == owner,
            col(ShareLink.revoked_at).is_(None),
        )
        .order_by(col(ShareLink.created_at).desc())
    )
    return session.exec(statement).first()
