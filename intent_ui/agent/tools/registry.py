"""Assemble the tool list for a run, and map model-facing names back to tools.

Tool names must be unique on the wire. Native tools keep their bare names; an MCP tool
keeps its bare name too unless another tool shares it, then it is offered as its tool id
`{name}_mcp_{server}`. `ToolIndex` resolves whatever the model sends back: the exact
model-facing name, a tool id, or a bare MCP name when only one server has it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from intent_ui.agent.subagents import SubagentTool
from intent_ui.agent.tools.ask_user import AskUserQuestionTool
from intent_ui.agent.tools.base import Tool
from intent_ui.agent.tools.bash import BashTool
from intent_ui.agent.tools.code_runner import RunToolsWithCodeTool
from intent_ui.agent.tools.delete_file import DeleteFileTool
from intent_ui.agent.tools.mcp import McpManager
from intent_ui.agent.tools.memory import MemoryStore, memory_tools
from intent_ui.agent.tools.native import file_tools
from intent_ui.agent.tools.protected import DATABASE, STATE, ProtectedFiles
from intent_ui.agent.tools.sandbox import Sandbox, SandboxLimits, sandbox_available
from intent_ui.agent.tools.web_search import WebSearchTool
from intent_ui.agent.tools.workspace import Workspace
from intent_ui.config import AppConfig
from intent_ui.core.capabilities.programmatic import PROGRAMMATIC_TOOLS_CAPABILITY
from intent_ui.core.goals import tool_family

__all__ = [
    "ToolIndex",
    "app_sandbox",
    "build_tools",
    "model_facing_name",
    "native_tools",
    "sandbox_tools",
    "sandbox_unavailable",
    "tool_family_of",
    "tool_source",
]

logger = logging.getLogger(__name__)


def native_tools(
    workspace: Workspace, *, memory_store: MemoryStore, web_search_url: str | None = None
) -> list[Tool]:
    """File tools (`delete_file` last), memory tools, `ask_user_question`, `subagent`,
    and `web_search` when a search service is configured."""
    tools: list[Tool] = [
        *file_tools(workspace),
        DeleteFileTool(workspace),
        *memory_tools(memory_store),
        AskUserQuestionTool(),
        SubagentTool(),
    ]
    if web_search_url:
        tools.append(WebSearchTool(web_search_url))
    return tools


def app_sandbox(config: AppConfig, protected: ProtectedFiles) -> Sandbox:
    """The sandbox of the configuration's workspace, with its limits. The app's database
    and saved sessions are hidden in it: they hold every user's data."""
    limits = config.sandbox
    return Sandbox(
        config.workspace,
        limits=SandboxLimits(
            wall_s=limits.time_limit_s,
            cpu_s=limits.cpu_limit_s,
            memory_bytes=limits.memory_mb * 1024 * 1024,
            processes=limits.processes,
            output_bytes=limits.output_kb * 1024,
        ),
        hidden=[entry.path for entry in protected.entries if entry.what in (DATABASE, STATE)],
        writable=limits.write_workspace and _may_write(config, protected),
        read_only=protected.paths,
    )


def _may_write(config: AppConfig, protected: ProtectedFiles) -> bool:
    """Whether the sandbox may see the workspace writable (`sandbox.write_workspace`): not
    when the app's own files could not be listed, nor when the workspace holds the app's
    checkout (its importable modules are protected by pattern, which no read-only bind
    can cover)."""
    root = Path(config.workspace).expanduser().resolve()
    refusal = protected.problem
    for entry in protected.entries:
        if entry.scope == "modules" and (entry.path == root or root in entry.path.parents):
            refusal = f"the workspace {root} holds the app's own checkout ({entry.path})"
    if refusal is not None:
        logger.warning(
            "sandbox.write_workspace is on, but the sandbox keeps the workspace read-only: %s",
            refusal,
        )
        return False
    return True


def sandbox_unavailable(config: AppConfig) -> str | None:
    """Why the sandboxed tools (`bash_tool`, `run_tools_with_code`) are not offered, or
    None when they are."""
    if not config.sandbox.enabled:
        return "the sandbox is switched off in the configuration (sandbox: enabled: false)"
    return sandbox_available(config.workspace)


def sandbox_tools(config: AppConfig, protected: ProtectedFiles) -> list[Tool]:
    """`bash_tool`, and `run_tools_with_code` while `programmatic_tools` is on; none where
    the sandbox cannot run (`sandbox_unavailable` says why)."""
    if sandbox_unavailable(config) is not None:
        return []
    sandbox = app_sandbox(config, protected)
    tools: list[Tool] = [BashTool(sandbox)]
    if PROGRAMMATIC_TOOLS_CAPABILITY in config.capabilities:
        tools.append(RunToolsWithCodeTool(sandbox))
    return tools


def build_tools(
    config: AppConfig, *, memory_store: MemoryStore, mcp_manager: McpManager | None = None
) -> list[Tool]:
    """Every tool a run may offer: native tools (the sandboxed ones where the sandbox
    works), then the connected MCP servers' tools."""
    protected = ProtectedFiles.for_app(config)
    tools = native_tools(
        Workspace(config.workspace, protected=protected),
        memory_store=memory_store,
        web_search_url=config.web_search.url if config.web_search else None,
    )
    tools.extend(sandbox_tools(config, protected))
    if mcp_manager is not None:
        tools.extend(mcp_manager.tools())
    return tools


def tool_source(tool: Tool) -> str | None:
    """The MCP server of an MCP tool, the domain of an action, None for a native tool."""
    if tool.kind == "mcp":
        return tool.server
    if tool.kind == "action":
        return getattr(tool, "domain", None) or None
    return None


def tool_family_of(tool: Tool) -> str:
    """The family a goal delegates to for this tool (`core.goals.tool_family`)."""
    return tool_family(tool.kind, tool.name, tool_source(tool), tool.tool_id)


def model_facing_name(tool: Tool, all_tools: Iterable[Tool]) -> str:
    """`tool.name`, unless another tool has the same name and this one is not native."""
    if tool.kind == "native":
        return tool.name
    return _offered_name(tool, sum(1 for other in all_tools if other.name == tool.name))


def _offered_name(tool: Tool, namesakes: int) -> str:
    """`model_facing_name`, given how many tools are called `tool.name`."""
    return tool.name if tool.kind == "native" or namesakes <= 1 else tool.tool_id


class ToolIndex:
    """The tools of one run, addressable by model-facing name or tool id."""

    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools: list[Tool] = list(tools)
        self._bare: dict[str, list[Tool]] = {}
        for tool in self._tools:
            self._bare.setdefault(tool.name, []).append(tool)
        self._by_model_name: dict[str, Tool] = {}
        for tool in self._tools:
            self._by_model_name.setdefault(self.model_name(tool), tool)
        self._by_id = {tool.tool_id: tool for tool in self._tools}

    @property
    def tools(self) -> Sequence[Tool]:
        return tuple(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)

    def model_name(self, tool: Tool) -> str:
        """The name this tool is offered under."""
        # The namesakes counted once, not per tool: a thousand tools named one by one
        # against every other cost a quarter of a second a turn.
        return _offered_name(tool, len(self._bare.get(tool.name, ())))

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
