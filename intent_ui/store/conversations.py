"""Conversations and their messages: CRUD, the display list, and the provider history.

An assistant message is one whole turn: its text plus every tool-call round it ran, kept
as its event log (`intent_ui.store.turns`). `history()` replays each turn and unfolds it
into the neutral provider shape with `intent_ui.core.history.turn_history`, the rules the
run loop follows between rounds too: per group (one provider round), an assistant
message with the text that came before it and its `tool_calls`, then one `tool` message
per call; trailing text last.

Every function that names a conversation by id takes its `owner` (a user id) and treats
another user's conversation as absent; `messages`, `history` and the appenders are called
only with an id that an owner-checked function returned.

A call that never finished (interrupted, cancelled, or still marked running) still gets a
`tool` result, as an error, because providers reject a tool call without a result.
"""

from __future__ import annotations

import re
import time
from typing import Any

from sqlalchemy import Engine, delete, exists, func, or_, update
from sqlmodel import Session, col, select

from intent_ui.core.history import turn_history
from intent_ui.core.turn import TurnView
from intent_ui.store.db import NotFoundError, open_session, store_errors
from intent_ui.store.models import Clock, Conversation, Message, TurnEventRow
from intent_ui.store.turns import load_events

__all__ = [
    "DEFAULT_TITLE",
    "add_user_message",
    "create_conversation",
    "delete_conversation",
    "get_conversation",
    "history",
    "list_conversations",
    "messages",
    "rename_conversation",
    "search_conversations",
    "start_assistant_message",
    "update_conversation",
]

DEFAULT_TITLE = "New chat"

_UNSET: Any = object()


@store_errors("create the conversation")
def create_conversation(
    engine: Engine,
    *,
    owner: str,
    endpoint: str,
    model: str,
    title: str = DEFAULT_TITLE,
    agent_id: str | None = None,
    now: Clock = time.time,
) -> Conversation:
    """Create and return a conversation; a blank title becomes `DEFAULT_TITLE`."""
    stamp = now()
    conversation = Conversation(
        owner_id=owner,
        title=title.strip() or DEFAULT_TITLE,
        endpoint=endpoint,
        model=model,
        agent_id=agent_id,
        created_at=stamp,
        updated_at=stamp,
    )
    with open_session(engine) as session:
        session.add(conversation)
        session.commit()
    return conversation


@store_errors("read the conversation")
def get_conversation(engine: Engine, conversation_id: str, *, owner: str) -> Conversation | None:
    """The conversation; None when it does not exist or belongs to someone else."""
    with open_session(engine) as session:
        return _owned(session, conversation_id, owner)


def _owned(session: Session, conversation_id: str, owner: str) -> Conversation | None:
    found = session.get(Conversation, conversation_id)
    return found if found is not None and found.owner_id == owner else None


@store_errors("list the conversations")
def list_conversations(
    engine: Engine, *, owner: str, limit: int | None = None
) -> list[Conversation]:
    """The owner's conversations, most recently active first."""
    statement = (
        select(Conversation)
        .where(col(Conversation.owner_id) == owner)
        .order_by(col(Conversation.updated_at).desc(), col(Conversation.created_at).desc())
    )
    if limit is not None:
        statement = statement.limit(max(limit, 0))
    with open_session(engine) as session:
        return list(session.exec(statement))


SEARCH_MAX_CHARS = 200
"""The longest text `search_conversations` looks for."""

SEARCH_LIMIT = 50
"""The most conversations one search returns."""


@store_errors("search the conversations")
def search_conversations(
    engine: Engine, query: str, *, owner: str, limit: int = SEARCH_LIMIT
) -> list[Conversation]:
    """The owner's conversations whose title or any message contains `query`, ignoring
    case, most recently active first, at most `limit`; a blank query lists them all (up
    to `limit`). `%`, `_` and `\\` in the query match themselves.

    A reply's text is searchable once its turn has ended (its summary holds it). SQLite
    folds case for ASCII letters only; PostgreSQL for every script. Raises ValueError for
    a query longer than `SEARCH_MAX_CHARS`.
    """
    needle = query.strip()
    if len(needle) > SEARCH_MAX_CHARS:
        raise ValueError(
            f"A conversation search is at most {SEARCH_MAX_CHARS} characters; "
            f"this one has {len(needle)}: shorten it."
        )
    statement = select(Conversation).where(col(Conversation.owner_id) == owner)
    if needle:
        pattern = "%" + re.sub(r"([\\%_])", r"\\\1", needle) + "%"
        in_messages = exists().where(
            col(Message.conversation_id) == Conversation.id,
            col(Message.content).ilike(pattern, escape="\\"),
        )
        statement = statement.where(
            or_(col(Conversation.title).ilike(pattern, escape="\\"), in_messages)
        )
    statement = statement.order_by(
        col(Conversation.updated_at).desc(), col(Conversation.created_at).desc()
    ).limit(max(limit, 0))
    with open_session(engine) as session:
        return list(session.exec(statement))


@store_errors("rename the conversation")
def rename_conversation(
    engine: Engine, conversation_id: str, title: str, *, owner: str, now: Clock = time.time
) -> Conversation | None:
    """Set the title; None when the conversation does not exist or is someone else's.

    Raises ValueError for a blank title (the UI keeps the old one).
    """
    if not title.strip():
        raise ValueError("A conversation title cannot be blank; type at least one character.")
    return update_conversation(engine, conversation_id, owner=owner, title=title, now=now)


@store_errors("update the conversation")
def update_conversation(
    engine: Engine,
    conversation_id: str,
    *,
    owner: str,
    title: str | None = None,
    endpoint: str | None = None,
    model: str | None = None,
    agent_id: str | None = _UNSET,
    now: Clock = time.time,
) -> Conversation | None:
    """Change the given fields (`agent_id=None` detaches the agent); None when not found
    or someone else's."""
    with open_session(engine) as session:
        conversation = _owned(session, conversation_id, owner)
        if conversation is None:
            return None
        if title is not None and title.strip():
            conversation.title = title.strip()
        if endpoint is not None:
            conversation.endpoint = endpoint
        if model is not None:
            conversation.model = model
        if agent_id is not _UNSET:
            conversation.agent_id = agent_id
        conversation.updated_at = now()
        session.add(conversation)
        session.commit()
        return conversation


@store_errors("delete the conversation")
def delete_conversation(engine: Engine, conversation_id: str, *, owner: str) -> bool:
    """Delete a conversation with its messages and their event logs; False when not found
    or someone else's."""
    message_ids = select(Message.id).where(Message.conversation_id == conversation_id)
    # Explicit deletes rather than relying on ON DELETE CASCADE, which SQLite only
    # honours on connections that enabled foreign keys (e.g. not on `rx.session()`).
    with engine.begin() as connection:
        owned = connection.execute(
            select(Conversation.id).where(
                col(Conversation.id) == conversation_id, col(Conversation.owner_id) == owner
            )
        ).first()
        if owned is None:
            return False
        connection.execute(
            delete(TurnEventRow).where(col(TurnEventRow.message_id).in_(message_ids))
        )
        connection.execute(delete(Message).where(col(Message.conversation_id) == conversation_id))
        result = connection.execute(
            delete(Conversation).where(col(Conversation.id) == conversation_id)
        )
    return result.rowcount > 0


@store_errors("save the message")
def add_user_message(
    engine: Engine, conversation_id: str, content: str, *, now: Clock = time.time
) -> str:
    """Append a user message; returns its id. Raises NotFoundError for an unknown chat."""
    return _append_message(engine, conversation_id, "user", content, "complete", now)


@store_errors("start the reply")
def start_assistant_message(engine: Engine, conversation_id: str, *, now: Clock = time.time) -> str:
    """Append an empty assistant message with status `streaming`; returns its id.

    Its turn's session appends the events with `intent_ui.store.turns.EventLog`.
    """
    return _append_message(engine, conversation_id, "assistant", "", "streaming", now)


@store_errors("read the messages")
def messages(engine: Engine, conversation_id: str) -> list[Message]:
    """The conversation's messages in order, for display (a turn's events: `load_events`)."""
    statement = (
        select(Message)
        .where(Message.conversation_id == conversation_id)
        .order_by(col(Message.position))
    )
    with open_session(engine) as session:
        return list(session.exec(statement))


@store_errors("read the conversation history")
def history(engine: Engine, conversation_id: str) -> list[dict[str, Any]]:
    """The conversation as provider messages in the neutral shape of `ChatRequest`."""
    out: list[dict[str, Any]] = []
    for message in messages(engine, conversation_id):
        if message.role == "user":
            out.append({"role": "user", "content": message.content})
        elif message.role == "assistant":
            out.extend(turn_history(TurnView.replay(load_events(engine, message.id))))
    return out


def _append_message(
    engine: Engine, conversation_id: str, role: str, content: str, status: str, now: Clock
) -> str:
    stamp = now()
    with open_session(engine) as session:
        conversation = session.get(Conversation, conversation_id)
        if conversation is None:
            raise NotFoundError(
                f"No conversation {conversation_id!r}: it was deleted or never created; "
                "start a new chat."
            )
        last = session.exec(
            select(func.max(Message.position)).where(Message.conversation_id == conversation_id)
        ).one()
        message = Message(
            conversation_id=conversation_id,
            position=0 if last is None else last + 1,
            role=role,
            content=content,
            status=status,
            created_at=stamp,
            updated_at=stamp,
        )
        session.add(message)
        session.execute(
            update(Conversation)
            .where(col(Conversation.id) == conversation_id)
            .values(updated_at=stamp)
        )
        session.commit()
        return message.id
