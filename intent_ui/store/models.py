"""The tables: users, conversations, their messages and turn event logs, read-only share
links, agents, memory entries.

Plain `sqlmodel.SQLModel` tables (what Reflex's `rx.Model` is built on), so the CLI never
imports Reflex while `rx.session()` still works with them. The schema is owned by the
alembic migrations in `migrations/`; never call `create_all` on it.

Portability (SQLite and PostgreSQL): ids are uuid4 hex strings generated in Python (so a
recorder can insert rows without a round trip), timestamps are float epoch seconds taken
from an injected `now` callable, and JSON values are TEXT columns written through
`encode_json` / `decode_json`.

An assistant turn is its append-only event log (`TurnEventRow`, keyed by message and seq):
every view, live or reloaded, is `TurnView.replay` of those events, so nothing is stored
twice and no second reducer can disagree with the first. Intents ride the calls' argument
events, which is what makes a reload render identical labels. The message row keeps a
small summary written when the turn ends (its reply text, status, error, stop reason).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

from sqlalchemy import Index, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from intent_ui.core.display import DEFAULT_DENSITY
from intent_ui.core.theme import DEFAULT_THEME
from intent_ui.store.capture_events import CaptureEvent
from intent_ui.store.checkpoints import CheckpointBlob, CheckpointRow
from intent_ui.store.dashboard import DashboardCall, DashboardCount, DashboardIntent

__all__ = [
    "LOCAL_USER_ID",
    "STORE_TABLES",
    "Agent",
    "Clock",
    "Conversation",
    "MemoryEntry",
    "Message",
    "ShareLink",
    "TurnEventRow",
    "User",
    "decode_json",
    "encode_json",
    "new_id",
]

Clock = Callable[[], float]
"""Returns the current time in epoch seconds; `time.time` in the app, a counter in tests."""

LOCAL_USER_ID = "local"
"""The one user of an install without `auth:`; also the owner of rows older than users."""


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
    # The chat's display density (`intent_ui.core.display`), remembered per user.
    density: str = Field(default=DEFAULT_DENSITY, sa_column_kwargs={"server_default": "full"})
    # The colour theme (`intent_ui.core.theme`), remembered per user like the density.
    theme: str = Field(default=DEFAULT_THEME, sa_column_kwargs={"server_default": "system"})
    # Signed into every session cookie; raising it ends the user's sessions everywhere.
    session_epoch: int = Field(default=0, sa_column_kwargs={"server_default": "0"})


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
    """One user message, or one assistant turn (all of its text and tool-call rounds).

    For an assistant turn, `content`, `status`, `error` and `stop_reason` are a summary
    written when the turn ends; the turn itself is its `TurnEventRow`s.

    A conversation's messages are a tree (`intent_ui.store.conversations`): each follows
    its `parent_id` (NULL for a first message), and a message regenerated, edited or
    continued gets siblings or a child there. `chosen` marks the one sibling the
    conversation shows; following chosen children from the first message is the path
    the page lists and the model reads. `position` orders all of them by creation.
    """

    __tablename__ = "messages"
    __table_args__ = (
        UniqueConstraint("conversation_id", "position", name="uq_messages_conversation_position"),
    )

    id: str = Field(default_factory=new_id, primary_key=True)
    conversation_id: str = Field(foreign_key="conversations.id", ondelete="CASCADE", index=True)
    position: int
    role: str  # 'user' | 'assistant' | 'compaction' (store.conversations.history)
    content: str = Field(default="", sa_type=Text)
    status: str = "complete"  # 'complete' | 'streaming' | 'cancelled' | 'error'
    error: str | None = Field(default=None, sa_type=Text, nullable=True)
    stop_reason: str | None = Field(default=None, nullable=True)
    # Not a foreign key: a message is only ever deleted with its whole conversation.
    parent_id: str | None = Field(default=None, nullable=True)
    chosen: bool = Field(default=True, sa_column_kwargs={"server_default": "1"})
    created_at: float
    updated_at: float


class TurnEventRow(SQLModel, table=True):
    """One event of an assistant turn (`intent_ui.core.events`), in seq order.

    `kind` is the event class name and `data` its other fields as JSON. Consecutive
    argument or text fragments written in one flush may share a row (the seq of the last
    one): replaying them gives the same view.
    """

    __tablename__ = "turn_events"

    message_id: str = Field(foreign_key="messages.id", ondelete="CASCADE", primary_key=True)
    seq: int = Field(primary_key=True)
    kind: str
    data: str = Field(default="{}", sa_type=Text)


class ShareLink(SQLModel, table=True):
    """A read-only link to a conversation (`intent_ui.store.shares`): whoever holds its id
    reads the conversation, without signing in, until its owner revokes it.

    The id is the secret (`secrets.token_urlsafe`), unlike the uuid4 keys of the other
    tables. A revoked link keeps its row, so it can never be issued again.
    """

    __tablename__ = "share_links"

    id: str = Field(primary_key=True)
    conversation_id: str = Field(foreign_key="conversations.id", ondelete="CASCADE", index=True)
    owner_id: str
    created_at: float
    revoked_at: float | None = Field(default=None, nullable=True)


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
    # [{id, description, delegates}]: turn-level goals (core.goals), validated on write
    goals_json: str = Field(default="[]", sa_type=Text)
    # [{id, description, category, goal_ids, ...}]: the scopes those goals work on
    scopes_json: str = Field(default="[]", sa_type=Text)
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

    @property
    def goals(self) -> list[dict[str, Any]]:
        value = decode_json(self.goals_json, [])
        return [dict(g) for g in value if isinstance(g, dict)] if isinstance(value, list) else []

    @property
    def scopes(self) -> list[dict[str, Any]]:
        value = decode_json(self.scopes_json, [])
        return [dict(g) for g in value if isinstance(g, dict)] if isinstance(value, list) else []


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
        TurnEventRow.__tablename__,
        ShareLink.__tablename__,
        Agent.__tablename__,
        MemoryEntry.__tablename__,
        CaptureEvent.__tablename__,
        CheckpointRow.__tablename__,
        CheckpointBlob.__tablename__,
        DashboardCall.__tablename__,
        DashboardCount.__tablename__,
        DashboardIntent.__tablename__,
    }
)
"""The tables these migrations own (other SQLModel tables may share the metadata)."""
