"""The tool interface the run loop executes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

ToolKind = Literal["native", "mcp", "action"]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool returns. `outcome` / `outcome_patch` are tool-authored labels: the
    settled card label (docs/labels.md), which the model cannot know when it calls."""

    output: str
    is_error: bool = False
    outcome: str | None = None
    outcome_patch: dict[str, str] | None = None


class Tool(Protocol):
    """A callable tool.

    `definition` is `{"name", "description", "parameters", "allowed_callers"?}` as the
    model sees it before the capability pipeline, fixed for the tool object's life: the
    runtime reads it once per tool (`RequestCache`), so a tool whose schema changes is a
    new tool object. `tool_id` keys `tool_options`:
    native tools use their name, MCP tools `"{name}_mcp_{server}"`, actions
    `"{operationId}_action_{encoded_domain}"`. `call` receives arguments with the
    injected intent already stripped and never raises for tool failures: it returns
    `ToolResult(is_error=True)`.
    """

    @property
    def name(self) -> str: ...

    @property
    def tool_id(self) -> str: ...

    @property
    def kind(self) -> ToolKind: ...

    @property
    def server(self) -> str | None: ...

    @property
    def definition(self) -> dict[str, Any]: ...

    async def call(self, args: dict[str, Any]) -> ToolResult: ...
