"""Tools the agent can call: native file/memory/search tools, the sandboxed `bash_tool` and
`run_tools_with_code` (`sandbox.py`), and MCP server tools.

`registry.build_tools` assembles them for a run; `base.Tool` is the protocol they share.
The re-exports below load lazily, so importing `intent_ui.agent.tools.base` alone does
not pull in the MCP SDK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from intent_ui.agent.tools.base import Tool, ToolKind, ToolResult
    from intent_ui.agent.tools.mcp import McpManager, McpServerConnection, McpTool
    from intent_ui.agent.tools.memory import InMemoryMemoryStore, MemoryStore
    from intent_ui.agent.tools.registry import ToolIndex, build_tools, model_facing_name
    from intent_ui.agent.tools.workspace import OutsideWorkspaceError, Workspace

_EXPORTS: dict[str, str] = {
    "InMemoryMemoryStore": "memory",
    "McpManager": "mcp",
    "McpServerConnection": "mcp",
    "McpTool": "mcp",
    "MemoryStore": "memory",
    "OutsideWorkspaceError": "workspace",
    "Tool": "base",
    "ToolIndex": "registry",
    "ToolKind": "base",
    "ToolResult": "base",
    "Workspace": "workspace",
    "build_tools": "registry",
    "model_facing_name": "registry",
}

__all__ = [
    "InMemoryMemoryStore",
    "McpManager",
    "McpServerConnection",
    "McpTool",
    "MemoryStore",
    "OutsideWorkspaceError",
    "Tool",
    "ToolIndex",
    "ToolKind",
    "ToolResult",
    "Workspace",
    "build_tools",
    "model_facing_name",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
