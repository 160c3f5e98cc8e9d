"""`DbMemoryStore`: the memory tools' key-value store, kept in the `memory_entries` table.

Implements `intent_ui.agent.tools.memory.MemoryStore`. Each call runs its small blocking
query in `asyncio.to_thread`, so the event loop never waits on the database.
"""

from __future__ import annotations

import asyncio
import time

from sqlalchemy import Engine, delete, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import col

from intent_ui.store.db import store_errors
from intent_ui.store.models import Clock, MemoryEntry

__all__ = ["DbMemoryStore"]


class DbMemoryStore:
    """Memory entries that survive restarts."""

    def __init__(self, engine: Engine, *, now: Clock = time.time) -> None:
        self._engine = engine
        self._now = now

    async def get_all(self) -> dict[str, str]:
        """Every entry, by key."""
        return await asyncio.to_thread(self._get_all)

    async def set(self, key: str, value: str) -> None:
        """Create or replace the entry for `key`."""
        await asyncio.to_thread(self._set, key, value)

    async def delete(self, key: str) -> bool:
        """Remove the entry; False when there was none."""
        return await asyncio.to_thread(self._delete, key)

    @store_errors("read the memory")
    def _get_all(self) -> dict[str, str]:
        with self._engine.connect() as connection:
            rows = connection.execute(
                select(col(MemoryEntry.key), col(MemoryEntry.value)).order_by(col(MemoryEntry.key))
            ).all()
        return {key: value for key, value in rows}

    @store_errors("save the memory entry")
    def _set(self, key: str, value: str) -> None:
        # Update-else-insert works the same on SQLite and PostgreSQL; a parallel call that
        # inserted the same key first makes the insert fail once, and the retry updates.
        for attempt in range(2):
            try:
                with self._engine.begin() as connection:
                    values = {"value": value, "updated_at": self._now()}
                    result = connection.execute(
                        update(MemoryEntry).where(col(MemoryEntry.key) == key).values(**values)
                    )
                    if result.rowcount == 0:
                        connection.execute(insert(MemoryEntry).values(key=key, **values))
                return
            except IntegrityError:
                if attempt:
                    raise

    @store_errors("delete the memory entry")
    def _delete(self, key: str) -> bool:
        with self._engine.begin() as connection:
            result = connection.execute(delete(MemoryEntry).where(col(MemoryEntry.key) == key))
        return result.rowcount > 0
