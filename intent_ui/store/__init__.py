"""Persistence: SQLModel tables, alembic migrations, and the queries the app runs.

Open the database with `init_db()` (SQLite file by default, `DB_URL` for PostgreSQL), then
use the function modules: `conversations`, `turns` (a turn's event log), `agents`,
`memory`, and `users` (who owns all of those). The package imports no Reflex, so the
CLI can use it.
"""

from __future__ import annotations

from intent_ui.store.agents import (
    create_agent,
    delete_agent,
    duplicate_agent,
    get_agent,
    get_own_agent,
    list_agents,
    set_tool_option,
    set_tool_options_bulk,
    update_agent,
    with_tool_option,
)
from intent_ui.store.conversations import (
    add_user_message,
    create_conversation,
    delete_conversation,
    get_conversation,
    history,
    list_conversations,
    messages,
    rename_conversation,
    start_assistant_message,
    update_conversation,
)
from intent_ui.store.db import (
    DatabaseError,
    NotFoundError,
    StoreError,
    database_url,
    dispose_engines,
    init_db,
)
from intent_ui.store.memory import DbMemoryStore
from intent_ui.store.models import (
    LOCAL_USER_ID,
    Agent,
    Conversation,
    MemoryEntry,
    Message,
    TurnEventRow,
    User,
)
from intent_ui.store.turns import EventLog, load_events, mark_interrupted

__all__ = [
    "LOCAL_USER_ID",
    "Agent",
    "Conversation",
    "DatabaseError",
    "DbMemoryStore",
    "EventLog",
    "MemoryEntry",
    "Message",
    "NotFoundError",
    "StoreError",
    "TurnEventRow",
    "User",
    "add_user_message",
    "create_agent",
    "create_conversation",
    "database_url",
    "delete_agent",
    "delete_conversation",
    "dispose_engines",
    "duplicate_agent",
    "get_agent",
    "get_conversation",
    "get_own_agent",
    "history",
    "init_db",
    "list_agents",
    "list_conversations",
    "load_events",
    "mark_interrupted",
    "messages",
    "rename_conversation",
    "set_tool_option",
    "set_tool_options_bulk",
    "start_assistant_message",
    "update_agent",
    "update_conversation",
    "with_tool_option",
]
