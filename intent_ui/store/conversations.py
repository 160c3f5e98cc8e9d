"""Conversations and their messages: CRUD, the display list, and the provider history.

An assistant message is one whole turn: its text plus every tool-call round it ran.
`history()` unfolds each turn back into the neutral provider shape (see
`intent_ui.agent.providers.base.ChatRequest`): per round, an assistant message with its
`tool_calls`, then one `tool` message per call. Each call's `text_offset` (the length of
the turn's text when the call started) says which text came before which round.

Every function that names a conversation by id takes its `owner` (a user id) and treats
another user's conversation as absent; `messages`, `history` and the appenders are called
only with an id that an owner-checked function returned.

A call that never finished (interrupted, cancelled, or still marked running) still gets a
`tool` result, as an error, because providers reject a tool call without a result.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

from sqlalchemy import Engine, delete, func, update
from sqlmodel import Session, col, select

from intent_ui.store.db import NotFoundError, open_session
from intent_ui.store.models import Clock, Conversation, Message, ToolCall

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
    "start_assistant_message",
    "update_conversation",
]

DEFAULT_TITLE = "New chat"

_UNSET: Any = object()

_INTERRUPTED_RESULT = "The tool call did not finish; it was interrupted."
_CANCELLED_RESULT = "The tool call was cancelled before it finished."
_FAILED_RESULT = "The tool call failed."


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


def get_conversation(engine: Engine, conversation_id: str, *, owner: str) -> Conversation | None:
    """The conversation; None when it does not exist or belongs to someone else."""
    with open_session(engine) as session:
        return _owned(session, conversation_id, owner)


def _owned(session: Session, conversation_id: str, owner: str) -> Conversation | None:
    found = session.get(Conversation, conversation_id)
    return found if found is not None and found.owner_id == owner else None


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


def rename_conversation(
    engine: Engine, conversation_id: str, title: str, *, owner: str, now: Clock = time.time
) -> Conversation | None:
    """Set the title; None when the conversation does not exist or is someone else's.

    Raises ValueError for a blank title (the UI keeps the old one).
    """
    if not title.strip():
        raise ValueError("A conversation title cannot be blank; type at least one character.")
    return update_conversation(engine, conversation_id, owner=owner, title=title, now=now)


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


def delete_conversation(engine: Engine, conversation_id: str, *, owner: str) -> bool:
    """Delete a conversation with its messages and tool calls; False when not found or
    someone else's."""
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
        connection.execute(delete(ToolCall).where(col(ToolCall.message_id).in_(message_ids)))
        connection.execute(delete(Message).where(col(Message.conversation_id) == conversation_id))
        result = connection.execute(
            delete(Conversation).where(col(Conversation.id) == conversation_id)
        )
    return result.rowcount > 0


def add_user_message(
    engine: Engine, conversation_id: str, content: str, *, now: Clock = time.time
) -> str:
    """Append a user message; returns its id. Raises NotFoundError for an unknown chat."""
    return _append_message(engine, conversation_id, "user", content, "complete", now)


def start_assistant_message(engine: Engine, conversation_id: str, *, now: Clock = time.time) -> str:
    """Append an empty assistant message with status `streaming`; returns its id.

    Feed the turn into it with `intent_ui.store.turns.TurnRecorder`.
    """
    return _append_message(engine, conversation_id, "assistant", "", "streaming", now)


def messages(engine: Engine, conversation_id: str) -> list[Message]:
    """The conversation's messages in order, for display (tool calls: `load_turn_events`)."""
    statement = (
        select(Message)
        .where(Message.conversation_id == conversation_id)
        .order_by(col(Message.position))
    )
    with open_session(engine) as session:
        return list(session.exec(statement))


def history(engine: Engine, conversation_id: str) -> list[dict[str, Any]]:
    """The conversation as provider messages in the neutral shape of `ChatRequest`."""
    rows = messages(engine, conversation_id)
    calls_by_message = _calls_by_message(engine, [m.id for m in rows if m.role == "assistant"])
    out: list[dict[str, Any]] = []
    for message in rows:
        if message.role == "user":
            out.append({"role": "user", "content": message.content})
        elif message.role == "assistant":
            out.extend(_assistant_history(message, calls_by_message.get(message.id, [])))
    return out


def _assistant_history(message: Message, calls: list[ToolCall]) -> list[dict[str, Any]]:
    content = message.content
    out: list[dict[str, Any]] = []
    cursor = 0
    for block_calls in _rounds(calls):
        offset = min(max(min(c.text_offset for c in block_calls), cursor), len(content))
        out.append(
            {
                "role": "assistant",
                "content": content[cursor:offset],
                "tool_calls": [
                    {"id": c.call_id, "name": c.tool, "arguments": _history_arguments(c)}
                    for c in block_calls
                ],
            }
        )
        out.extend(_tool_result(c) for c in block_calls)
        cursor = offset
    trailing = content[cursor:]
    if trailing:
        out.append({"role": "assistant", "content": trailing})
    return out


def _rounds(calls: Iterable[ToolCall]) -> list[list[ToolCall]]:
    """Calls grouped by block, blocks and calls in the order they started."""
    blocks: dict[int, list[ToolCall]] = {}
    for call in sorted(calls, key=lambda c: (c.started_seq, c.call_id)):
        blocks.setdefault(call.block, []).append(call)
    return list(blocks.values())


def _history_arguments(call: ToolCall) -> str:
    if call.args_json is not None:
        return call.args_text
    # An interrupted call's text may be a JSON prefix; providers need an object.
    try:
        json.loads(call.args_text)
    except ValueError:
        return "{}"
    return call.args_text


def _tool_result(call: ToolCall) -> dict[str, Any]:
    if call.status == "settled":
        content, is_error = call.output, False
    elif call.status == "error":
        content, is_error = call.output or call.error or _FAILED_RESULT, True
    elif call.status == "cancelled":
        content, is_error = call.output or call.error or _CANCELLED_RESULT, True
    else:
        content, is_error = _INTERRUPTED_RESULT, True
    return {
        "role": "tool",
        "tool_call_id": call.call_id,
        "name": call.tool,
        "content": content,
        "is_error": is_error,
    }


def _calls_by_message(engine: Engine, message_ids: list[str]) -> dict[str, list[ToolCall]]:
    if not message_ids:
        return {}
    statement = select(ToolCall).where(col(ToolCall.message_id).in_(message_ids))
    grouped: dict[str, list[ToolCall]] = {}
    with open_session(engine) as session:
        for call in session.exec(statement):
            grouped.setdefault(call.message_id, []).append(call)
    return grouped


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
