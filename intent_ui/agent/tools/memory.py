"""Memory tools: `set_memory` / `delete_memory` over a `MemoryStore`.

The store is a small async key-value protocol so the run loop does not care where
memories live: `InMemoryMemoryStore` here (tests, the one-shot CLI), a database-backed
store in `intent_ui.store`. Memories belong to a user: the store takes the owner on every
call, and a tool is bound to one owner (`for_owner` gives the turn's copy), so one user's
turn never reads or writes another's memories.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import Field, field_validator

from intent_ui.agent.tools.base import ToolResult
from intent_ui.agent.tools.native import Args, NativeTool, short
from intent_ui.store.models import LOCAL_USER_ID

__all__ = [
    "MAX_MEMORY_KEY_CHARS",
    "MAX_MEMORY_VALUE_CHARS",
    "MEMORY_DEFAULT_OWNER",
    "DeleteMemoryTool",
    "InMemoryMemoryStore",
    "MemoryStore",
    "MemoryTool",
    "SetMemoryTool",
    "memory_tools",
]

MAX_MEMORY_KEY_CHARS = 100
MAX_MEMORY_VALUE_CHARS = 10_000

MEMORY_DEFAULT_OWNER = LOCAL_USER_ID
"""Whose memories a tool touches until a turn binds it to its user."""


class MemoryStore(Protocol):
    """Where memories live, per owner (a user id). Keys are short names; values are text."""

    async def get_all(self, owner: str) -> dict[str, str]: ...

    async def set(self, owner: str, key: str, value: str) -> None: ...

    async def delete(self, owner: str, key: str) -> bool:
        """Remove `owner`'s `key`; False when there was nothing under it."""
        ...


class InMemoryMemoryStore:
    """A process-local `MemoryStore` (lost on exit); `initial` is the default owner's."""

    def __init__(self, initial: dict[str, str] | None = None) -> None:
        self._items: dict[tuple[str, str], str] = {
            (MEMORY_DEFAULT_OWNER, k): v for k, v in (initial or {}).items()
        }

    async def get_all(self, owner: str) -> dict[str, str]:
        return {k: v for (o, k), v in sorted(self._items.items()) if o == owner}

    async def set(self, owner: str, key: str, value: str) -> None:
        self._items[(owner, key)] = value

    async def delete(self, owner: str, key: str) -> bool:
        return self._items.pop((owner, key), None) is not None


class MemoryTool(NativeTool):
    """A memory tool bound to one owner's memories."""

    def __init__(self, store: MemoryStore, owner: str = MEMORY_DEFAULT_OWNER) -> None:
        self.store = store
        self.owner = owner

    def for_owner(self, owner: str) -> MemoryTool:
        """The same tool over `owner`'s memories (tools are built once, turns are per user)."""
        return self if owner == self.owner else type(self)(self.store, owner)


class _KeyArgs(Args):
    key: str = Field(
        min_length=1,
        max_length=MAX_MEMORY_KEY_CHARS,
        description="Short name for the memory, e.g. preferred_language.",
    )

    @field_validator("key")
    @classmethod
    def _not_blank(cls, key: str) -> str:
        if not key.strip():
            raise ValueError("the key must not be blank")
        return key.strip()


class SetMemoryArgs(_KeyArgs):
    value: str = Field(
        max_length=MAX_MEMORY_VALUE_CHARS, description="What to remember under the key."
    )


class SetMemoryTool(MemoryTool):
    name = "set_memory"
    description = (
        "Remember a fact about the user or the project for later conversations, under a "
        "short key. Setting an existing key replaces its value."
    )
    Arguments = SetMemoryArgs

    async def run(self, args: SetMemoryArgs) -> ToolResult:
        await self.store.set(self.owner, args.key, args.value)
        return ToolResult(f"Remembered '{args.key}'.", outcome=f"Remembered {short(args.key)}")


class DeleteMemoryArgs(_KeyArgs):
    pass


class DeleteMemoryTool(MemoryTool):
    name = "delete_memory"
    description = "Forget a remembered fact by its key."
    Arguments = DeleteMemoryArgs

    async def run(self, args: DeleteMemoryArgs) -> ToolResult:
        if await self.store.delete(self.owner, args.key):
            return ToolResult(f"Forgot '{args.key}'.", outcome=f"Forgot {short(args.key)}")
        known = sorted(await self.store.get_all(self.owner))
        listing = ", ".join(known) if known else "none"
        return ToolResult(
            f"Nothing is remembered under '{args.key}' (keys: {listing}).",
            outcome=f"Nothing remembered as {short(args.key)}",
        )


def memory_tools(store: MemoryStore) -> list[NativeTool]:
    return [SetMemoryTool(store), DeleteMemoryTool(store)]
