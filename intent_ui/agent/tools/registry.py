"""Assemble the tool list for a run, and map model-facing names back to tools.

Tool names must be unique on the wire. Native tools keep their bare names; an MCP tool
keeps its bare name too unless another tool shares it, then it is offered as its tool id
`{name}_mcp_{server}`. `ToolIndex` resolves whatever the model sends back: the exact
model-facing name, a tool id, or a bare MCP name when only one server has it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from intent_ui.agent.tools.base import Tool
from intent_ui.agent.tools.mcp import McpManager
from intent_ui.agent.tools.memory import MemoryStore, memory_tools
from intent_ui.agent.tools.native import file_tools
from intent_ui.agent.tools.protected import ProtectedFiles
from intent_ui.agent.tools.web_search import WebSearchTool
from intent_ui.agent.tools.workspace import Workspace
from intent_ui.config import AppConfig
from intent_ui.core.goals import tool_family

__all__ = [
    "ToolIndex",
    "build_tools",
    "model_facing_name",
    "native_tools",
    "tool_family_of",
    "tool_group",
]


def native_tools(
    workspace: Workspace, *, memory_store: MemoryStore, web_search_url: str | None = None
) -> list[Tool]:
    """File tools, memory tools, and `web_search` when a search service is configured."""
    tools: list[Tool] = [*file_tools(workspace), *memory_tools(memory_store)]
    if web_search_url:
        tools.append(WebSearchTool(web_search_url))
    return tools


def build_tools(
    config: AppConfig, *, memory_store: MemoryStore, mcp_manager: McpManager | None = None
) -> list[Tool]:
    """Every tool a run may offer: native tools, then the connected MCP servers' tools."""
    tools = native_tools(
        Workspace(config.workspace, protected=ProtectedFiles.for_app(config)),
        memory_store=memory_store,
        web_search_url=config.web_search.url if config.web_search else None,
    )
    if mcp_manager is not None:
        tools.extend(mcp_manager.tools())
    return tools


def tool_group(tool: Tool) -> str | None:
    """The MCP server of an MCP tool, the domain of an action, None for a native tool."""
    if tool.kind == "mcp":
        return tool.server
    if tool.kind == "action":
        return getattr(tool, "domain", None) or None
    return None


def tool_family_of(tool: Tool) -> str:
    """The family a goal delegates to for this tool (`core.goals.tool_family`)."""
    return tool_family(tool.kind, tool.name, tool_group(tool), tool.tool_id)


def model_facing_name(tool: Tool, all_tools: Iterable[Tool]) -> str:
    """`tool.name`, unless another tool has the same name and this one is not native."""
    if tool.kind == "native":
        return tool.name
    clashes = sum(1 for other in all_tools if other.name == tool.name)
    return tool.name if clashes <= 1 else tool.tool_id


class ToolIndex:
    """The tools of one run, addressable by model-facing name or tool id."""

    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools: list[Tool] = list(tools)
        self._by_model_name: dict[str, Tool] = {}
        for tool in self._tools:
            self._by_model_name.setdefault(self.model_name(tool), tool)
        self._by_id = {tool.tool_id: tool for tool in self._tools}
        self._bare: dict[str, list[Tool]] = {}
        for tool in self._tools:
            self._bare.setdefault(tool.name, []).append(tool)

    @property
    def tools(self) -> Sequence[Tool]:
        return tuple(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)

    def model_name(self, tool: Tool) -> str:
        """The name this tool is offered under."""
        return model_facing_name(tool, self._tools)

    def definitions(self) -> list[dict[str, object]]:
        """Every tool's definition, renamed to its model-facing name."""
        out = []
        for tool in self._tools:
            definition = dict(tool.definition)
            definition["name"] = self.model_name(tool)
            out.append(definition)
        return out

    def resolve(self, name: str) -> Tool | None:
        """The tool for a name the model used, or None when it names no tool (or is ambiguous)."""
        found = self._by_model_name.get(name) or self._by_id.get(name)
        if found is not None:
            return found
        bare = [tool for tool in self._bare.get(name, []) if tool.kind == "mcp"]
        return bare[0] if len(bare) == 1 else None
