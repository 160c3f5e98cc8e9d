"""Memory tools: `set_memory` / `delete_memory` over a `MemoryStore`.

The store is a small async key-value protocol so the run loop does not care where
memories live: `InMemoryMemoryStore` here (tests, the one-shot CLI), a database-backed
store in `intent_ui.store`.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import Field, field_validator

from intent_ui.agent.tools.base import ToolResult
from intent_ui.agent.tools.native import Args, NativeTool, short

__all__ = [
    "MAX_MEMORY_KEY_CHARS",
    "MAX_MEMORY_VALUE_CHARS",
    "DeleteMemoryTool",
    "InMemoryMemoryStore",
    "MemoryStore",
    "SetMemoryTool",
    "memory_tools",
]

MAX_MEMORY_KEY_CHARS = 100
MAX_MEMORY_VALUE_CHARS = 10_000


class MemoryStore(Protocol):
    """Where memories live. Keys are short names; values are text."""

    async def get_all(self) -> dict[str, str]: ...

    async def set(self, key: str, value: str) -> None: ...

    async def delete(self, key: str) -> bool:
        """Remove `key`; False when there was nothing under it."""
        ...


class InMemoryMemoryStore:
    """A process-local `MemoryStore` (lost on exit)."""

    def __init__(self, initial: dict[str, str] | None = None) -> None:
        self._items: dict[str, str] = dict(initial or {})

    async def get_all(self) -> dict[str, str]:
        return dict(self._items)

    async def set(self, key: str, value: str) -> None:
        self._items[key] = value

    async def delete(self, key: str) -> bool:
        return self._items.pop(key, None) is not None


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


class SetMemoryTool(NativeTool):
    name = "set_memory"
    description = (
        "Remember a fact about the user or the project for later conversations, under a "
        "short key. Setting an existing key replaces its value."
    )
    Arguments = SetMemoryArgs

    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    async def run(self, args: SetMemoryArgs) -> ToolResult:
        await self.store.set(args.key, args.value)
        return ToolResult(f"Remembered '{args.key}'.", outcome=f"Remembered {short(args.key)}")


class DeleteMemoryArgs(_KeyArgs):
    pass


class DeleteMemoryTool(NativeTool):
    name = "delete_memory"
    description = "Forget a remembered fact by its key."
    Arguments = DeleteMemoryArgs

    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    async def run(self, args: DeleteMemoryArgs) -> ToolResult:
        if await self.store.delete(args.key):
            return ToolResult(f"Forgot '{args.key}'.", outcome=f"Forgot {short(args.key)}")
        known = sorted(await self.store.get_all())
        listing = ", ".join(known) if known else "none"
        return ToolResult(
            f"Nothing is remembered under '{args.key}' (keys: {listing}).",
            outcome=f"Nothing remembered as {short(args.key)}",
        )


def memory_tools(store: MemoryStore) -> list[NativeTool]:
    return [SetMemoryTool(store), DeleteMemoryTool(store)]
