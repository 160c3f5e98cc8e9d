"""The tables: users, conversations, their messages and tool calls, agents, memory entries.

Plain `sqlmodel.SQLModel` tables (what Reflex's `rx.Model` is built on), so the CLI never
imports Reflex while `rx.session()` still works with them. The schema is owned by the
alembic migrations in `migrations/`; never call `create_all` on it.

Portability (SQLite and PostgreSQL): ids are uuid4 hex strings generated in Python (so a
recorder can insert rows without a round trip), timestamps are float epoch seconds taken
from an injected `now` callable, and JSON values are TEXT columns written through
`encode_json` / `decode_json`.

Why tool calls are rows rather than a JSON blob on the message: a turn is flushed every
~100 ms while it streams, and only the calls that changed are rewritten (§5.4: intents
ride the call's arguments, so saving the raw argument text is what makes a reload render
identical labels).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

from sqlalchemy import Index, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

__all__ = [
    "FINAL_CALL_STATES",
    "LOCAL_USER_ID",
    "STORE_TABLES",
    "Agent",
    "Clock",
    "Conversation",
    "MemoryEntry",
    "Message",
    "ToolCall",
    "User",
    "decode_json",
    "encode_json",
    "new_id",
]

Clock = Callable[[], float]
"""Returns the current time in epoch seconds; `time.time` in the app, a counter in tests."""

LOCAL_USER_ID = "local"
"""The one user of an install without `auth:`; also the owner of rows older than users."""

FINAL_CALL_STATES: frozenset[str] = frozenset({"settled", "error", "cancelled"})
"""Tool-call statuses after which nothing about the call changes."""


def new_id() -> str:
    """A fresh primary key: 32 lowercase hex characters."""
    return uuid.uuid4().hex


def encode_json(value: Any) -> str:
    """JSON text for a TEXT column; keeps non-ASCII readable and keys in insertion order."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def decode_json(text: str | None, default: Any = None) -> Any:
    """The value stored by `encode_json`; `default` for NULL, blank or corrupt text.

    A hand-edited or truncated cell must not take a conversation or an agent down with it.
    """
    if text is None or not text.strip():
        return default
    try:
        return json.loads(text)
    except ValueError:
        return default


class User(SQLModel, table=True):
    """Someone who owns conversations, agents, memory and imported actions."""

    __tablename__ = "users"

    id: str = Field(default_factory=new_id, primary_key=True)
    name: str = Field(sa_type=Text, unique=True)
    # NULL for users who never sign in with a password (the local and header users).
    password_hash: str | None = Field(default=None, sa_type=Text, nullable=True)
    created_at: float


# Owners are not foreign keys: a user row is never deleted by the app, and the owner
# filter in every query is what keeps users apart.


class Conversation(SQLModel, table=True):
    __tablename__ = "conversations"
    __table_args__ = (Index("ix_conversations_updated_at", "updated_at"),)

    id: str = Field(default_factory=new_id, primary_key=True)
    owner_id: str = Field(index=True)
    title: str = Field(sa_type=Text)
    endpoint: str
    model: str
    # No foreign key: a chat may use the built-in default agent, which has no row.
    agent_id: str | None = Field(default=None, nullable=True)
    created_at: float
    updated_at: float


class Message(SQLModel, table=True):
    """One user message, or one assistant turn (all of its text and tool-call rounds)."""

    __tablename__ = "messages"
    __table_args__ = (
        UniqueConstraint("conversation_id", "position", name="uq_messages_conversation_position"),
    )

    id: str = Field(default_factory=new_id, primary_key=True)
    conversation_id: str = Field(foreign_key="conversations.id", ondelete="CASCADE", index=True)
    position: int
    role: str  # 'user' | 'assistant'
    content: str = Field(default="", sa_type=Text)
    status: str = "complete"  # 'complete' | 'streaming' | 'cancelled' | 'error'
    error: str | None = Field(default=None, sa_type=Text, nullable=True)
    # {"<block>": "<label>"}: JSON object keys are strings; readers convert back to int.
    activity_labels_json: str = Field(default="{}", sa_type=Text)
    # The TurnDone that ended the turn, so a reload replays the very same event.
    stop_reason: str | None = Field(default=None, nullable=True)
    done_seq: int | None = Field(default=None, nullable=True)
    last_seq: int = 0  # the highest event seq recorded
    created_at: float
    updated_at: float


class ToolCall(SQLModel, table=True):
    """One tool call of an assistant turn, as the turn events described it."""

    __tablename__ = "tool_calls"
    __table_args__ = (UniqueConstraint("message_id", "call_id", name="uq_tool_calls_message_call"),)

    id: str = Field(default_factory=new_id, primary_key=True)
    message_id: str = Field(foreign_key="messages.id", ondelete="CASCADE", index=True)
    call_id: str
    tool: str
    server: str | None = Field(default=None, nullable=True)
    block: int
    label_bearing: bool = False
    args_text: str = Field(default="", sa_type=Text)  # raw streamed argument text
    args_json: str | None = Field(default=None, sa_type=Text, nullable=True)
    output: str = Field(default="", sa_type=Text)
    outcome: str | None = Field(default=None, sa_type=Text, nullable=True)
    outcome_patch_json: str | None = Field(default=None, sa_type=Text, nullable=True)
    status: str = "streaming"  # the events' CallState vocabulary
    error: str | None = Field(default=None, sa_type=Text, nullable=True)
    # Label sequence: the seq of the last label-relevant change (§5.2 "latest").
    seq: int
    started_seq: int
    # The seq of the argument fragment that made the streamed intent readable.
    intent_seq: int | None = Field(default=None, nullable=True)
    args_completed_seq: int | None = Field(default=None, nullable=True)
    backgrounded_seq: int | None = Field(default=None, nullable=True)
    settled_seq: int | None = Field(default=None, nullable=True)
    # Length of the assistant text when the call started: splits the turn's text into
    # the provider rounds it belongs to (history) and back into place (reload).
    text_offset: int = 0
    started_at: float
    args_completed_at: float | None = Field(default=None, nullable=True)
    settled_at: float | None = Field(default=None, nullable=True)


class Agent(SQLModel, table=True):
    __tablename__ = "agents"

    id: str = Field(default_factory=new_id, primary_key=True)
    owner_id: str = Field(index=True)
    # A shared agent is readable (and usable in chats) by every user; only its owner
    # edits or deletes it.
    shared: bool = False
    name: str = Field(sa_type=Text)
    instructions: str = Field(default="", sa_type=Text)
    endpoint: str | None = Field(default=None, nullable=True)
    model: str | None = Field(default=None, nullable=True)
    tools_json: str = Field(default="[]", sa_type=Text)  # list of tool ids
    # {tool_id: {describe_intent, defer_loading, run_in_background, allowed_callers}}
    tool_options_json: str = Field(default="{}", sa_type=Text)
    created_at: float
    updated_at: float

    @property
    def tools(self) -> list[str]:
        value = decode_json(self.tools_json, [])
        return [t for t in value if isinstance(t, str)] if isinstance(value, list) else []

    @property
    def tool_options(self) -> dict[str, dict[str, Any]]:
        value = decode_json(self.tool_options_json, {})
        if not isinstance(value, dict):
            return {}
        return {k: dict(v) for k, v in value.items() if isinstance(v, dict)}


class MemoryEntry(SQLModel, table=True):
    __tablename__ = "memory_entries"

    # Keys are unique per owner: two users may both remember a `tone`.
    owner_id: str = Field(primary_key=True)
    key: str = Field(primary_key=True)
    value: str = Field(sa_type=Text)
    updated_at: float


STORE_TABLES: frozenset[str] = frozenset(
    {
        User.__tablename__,
        Conversation.__tablename__,
        Message.__tablename__,
        ToolCall.__tablename__,
        Agent.__tablename__,
        MemoryEntry.__tablename__,
    }
)
"""The tables these migrations own (other SQLModel tables may share the metadata)."""
