"""`DbMemoryStore`: the memory tools' key-value store, kept in the `memory_entries` table.

Implements `intent_ui.agent.tools.memory.MemoryStore`: every call names the owner (a user
id), and keys are unique per owner, so users never see or overwrite each other's
memories. Each call runs its small blocking
query in `asyncio.to_thread`, so the event loop never waits on the database.
"""

from __future__ import annotations

import asyncio
import time

from sqlalchemy import ColumnElement, Engine, and_, delete, insert, select, update
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

    async def get_all(self, owner: str) -> dict[str, str]:
        """Every entry of `owner`, by key."""
        return await asyncio.to_thread(self._get_all, owner)

    async def set(self, owner: str, key: str, value: str) -> None:
        """Create or replace `owner`'s entry for `key`."""
        await asyncio.to_thread(self._set, owner, key, value)

    async def delete(self, owner: str, key: str) -> bool:
        """Remove `owner`'s entry; False when there was none."""
        return await asyncio.to_thread(self._delete, owner, key)

    @store_errors("read the memory")
    def _get_all(self, owner: str) -> dict[str, str]:
        with self._engine.connect() as connection:
            rows = connection.execute(
                select(col(MemoryEntry.key), col(MemoryEntry.value))
                .where(col(MemoryEntry.owner_id) == owner)
                .order_by(col(MemoryEntry.key))
            ).all()
        return {key: value for key, value in rows}

    @store_errors("save the memory entry")
    def _set(self, owner: str, key: str, value: str) -> None:
        # Update-else-insert works the same on SQLite and PostgreSQL; a parallel call that
        # inserted the same key first makes the insert fail once, and the retry updates.
        for attempt in range(2):
            try:
                with self._engine.begin() as connection:
                    values = {"value": value, "updated_at": self._now()}
                    result = connection.execute(
                        update(MemoryEntry).where(_entry(owner, key)).values(**values)
                    )
                    if result.rowcount == 0:
                        connection.execute(
                            insert(MemoryEntry).values(owner_id=owner, key=key, **values)
                        )
                return
            except IntegrityError:
                if attempt:
                    raise

    @store_errors("delete the memory entry")
    def _delete(self, owner: str, key: str) -> bool:
        with self._engine.begin() as connection:
            result = connection.execute(delete(MemoryEntry).where(_entry(owner, key)))
        return result.rowcount > 0


def _entry(owner: str, key: str) -> ColumnElement[bool]:
    return and_(col(MemoryEntry.owner_id) == owner, col(MemoryEntry.key) == key)
