"""What a turn's request build reuses from the turns before it.

Every turn offers the agent's tools through the capability pipeline. Over a thousand MCP
tools, reading each definition (an MCP one is decoded, scrubbed and copied on every
read) and running the pipeline cost tens of milliseconds a turn for the same answer as
the turn before. A `RequestCache` (one per runtime) keeps:

- each tool's definition under its model-facing name, read and frozen once per tool
  object (`FrozenDefinition`, its content encoded once for the cache key). A tool
  object's definition is fixed for its life (`Tool.definition`): `McpManager` makes new
  tool objects when a server's tool list changes, a native tool's definition is a cached
  property, an imported action is a new tool when it is imported again;
- the pipeline's results by their inputs' content (`CapabilityCache`): a changed
  definition, option, capability or strictness is another key.

Tools it cannot remember (not weak-referenceable or not hashable) are read every turn
and still share the pipeline's cache by content.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping
from typing import Any

from intent_ui.agent.tools.base import Tool
from intent_ui.core.capabilities.cache import (
    DEFAULT_MAX_ENTRIES,
    CapabilityCache,
    FrozenDefinition,
    frozen_definition,
)

__all__ = ["RequestCache"]


class RequestCache:
    """One runtime's memory of request builds; safe to share between turns and threads."""

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        self.capabilities = CapabilityCache(max_entries)
        """The pipeline's results, at most `max_entries` distinct inputs."""
        self._definitions: weakref.WeakKeyDictionary[Tool, dict[str, FrozenDefinition]] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()

    def definition(self, tool: Tool, name: str) -> Mapping[str, Any]:
        """`tool.definition` offered as `name`, frozen; read once per tool and name.

        A definition that is not JSON (nothing the pipeline's cache can key) comes back
        as read, every time.
        """
        try:
            with self._lock:
                named = self._definitions.get(tool)
                found = None if named is None else named.get(name)
        except TypeError:
            return _read(tool, name)
        if found is not None:
            return found
        read = _read(tool, name)
        if isinstance(read, FrozenDefinition):
            with self._lock:
                self._definitions.setdefault(tool, {})[name] = read
        return read


def _read(tool: Tool, name: str) -> Mapping[str, Any]:
    definition = {**dict(tool.definition), "name": name}
    try:
        return frozen_definition(definition)
    except ValueError:
        return definition
