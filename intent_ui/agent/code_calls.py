"""Programmatic tool calling in one turn: who may call which tool, and the code bridge.

The run loop keeps one `CodeCalls` per turn, built from the definitions the capability
pipeline shaped (`allowed_callers` already applied, so the `programmatic_tools` switch is
honoured there):

- **Enforcement.** A code-only tool (`allowed_callers: ["code_execution"]`) is never
  offered to the model directly: it is left out of the offered definitions and out of
  what `tool_search` can promote, and a direct call to it (written from memory) is
  refused with an error saying where it can be called from.
- **The runner's description** lists the functions its programs can call, so the model
  knows them before it writes the program.
- **The bridge.** `run_tools_with_code` runs bound to this object (`bind`): each call the
  program makes comes here, is checked (code-callable, and whatever else the turn
  refuses, such as a tool outside the chosen goal), has the host-injected label and
  background flag stripped (marker-guarded: a tool's own `intent` survives), and runs
  through the loop's own invocation, with its timeout. Inner calls are unlabelled: they
  emit no events; the runner's one card stands for the program.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from intent_ui.agent.tools.base import Tool, ToolResult
from intent_ui.agent.tools.code_runner import RunToolsWithCodeTool, describe_functions
from intent_ui.core.capabilities.background import (
    RUN_IN_BACKGROUND_ARG,
    is_run_in_background_property,
    strip_background_from_tool_definitions,
    strip_run_in_background_arg,
)
from intent_ui.core.capabilities.intent import INTENT_ARG, is_intent_label_property
from intent_ui.core.capabilities.programmatic import (
    PTC_RUNNER_TOOL_NAMES,
    code_bridge_definitions,
    is_code_callable,
    is_code_only,
    strip_intent_for_code_bridge,
)

__all__ = ["CodeCalls", "Invoke", "Refuse"]

Invoke = Callable[[Tool, str, dict[str, Any]], Awaitable[ToolResult]]
"""How the loop runs one tool call (the tool, the name it was called by, its arguments)."""
Refuse = Callable[[str, Tool], ToolResult | None]
"""The turn's own refusal of a call (e.g. outside the chosen goal), or None."""


def _name(definition: Mapping[str, Any]) -> str:
    return str(definition.get("name"))


def _property(definition: Mapping[str, Any], key: str) -> object:
    schema = definition.get("parameters")
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    return props.get(key) if isinstance(props, Mapping) else None


class CodeCalls:
    """One turn's programmatic calling; it is the `ToolBridge` its runner calls through.

    `definitions` and `registry` are the shaped definitions (offered and deferred) under
    their model-facing names; `tools` maps those names to the tools.
    """

    def __init__(
        self,
        definitions: Sequence[Mapping[str, Any]],
        registry: Mapping[str, Mapping[str, Any]] | None,
        tools: Mapping[str, Tool],
        *,
        invoke: Invoke,
        refuse: Refuse | None = None,
    ) -> None:
        everything: dict[str, Mapping[str, Any]] = {}
        for definition in [*definitions, *(registry or {}).values()]:
            if isinstance(definition, Mapping):
                everything.setdefault(_name(definition), definition)
        self._tools = tools
        self._invoke = invoke
        self._refuse = refuse
        self.code_only: frozenset[str] = frozenset(
            name for name, definition in everything.items() if is_code_only(definition)
        )
        """Model-facing names of the tools only code may call."""
        callable_defs = [
            definition
            for name, definition in everything.items()
            if is_code_callable(definition) and name in tools and name not in PTC_RUNNER_TOOL_NAMES
        ]
        self._labelled = frozenset(
            _name(d) for d in callable_defs if is_intent_label_property(_property(d, INTENT_ARG))
        )
        self._flagged = frozenset(
            _name(d)
            for d in callable_defs
            if is_run_in_background_property(_property(d, RUN_IN_BACKGROUND_ARG))
        )
        bridged = strip_background_from_tool_definitions(code_bridge_definitions(callable_defs))
        self._definitions: tuple[Mapping[str, Any], ...] = tuple(bridged)

    # --- what the model is offered --------------------------------------------------------

    def offered(self, definitions: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """`definitions` without the code-only tools, each runner describing its functions."""
        out = []
        for definition in definitions:
            name = _name(definition)
            if name in self.code_only:
                continue
            if isinstance(self._tools.get(name), RunToolsWithCodeTool):
                described = f"{definition.get('description') or ''}\n\n{self.describe()}"
                definition = {**definition, "description": described.strip()}
            out.append(definition)
        return out

    def searchable(
        self, registry: Mapping[str, Any] | None, names: Sequence[str]
    ) -> tuple[Mapping[str, Any] | None, tuple[str, ...]]:
        """The deferred registry and names without the code-only tools: `tool_search` must
        never promote one into the model's direct tools."""
        kept = tuple(name for name in names if name not in self.code_only)
        if registry is None:
            return None, kept
        return {k: v for k, v in registry.items() if k not in self.code_only}, kept

    def describe(self) -> str:
        """The functions a program of this turn can call, as the runner lists them."""
        return describe_functions(self._definitions)

    def refusal(self, name: str) -> ToolResult | None:
        """The error for a direct call of a code-only tool (None for any other name)."""
        if name not in self.code_only:
            return None
        runners = [n for n, t in self._tools.items() if isinstance(t, RunToolsWithCodeTool)]
        where = (
            f"call it from a program run with {runners[0]}"
            if runners
            else "no code runner is offered in this conversation"
        )
        return ToolResult(
            f"'{name}' can only be called from code, not directly: {where}.", is_error=True
        )

    def bind(self, tool: Tool) -> Tool:
        """The tool to run for a direct call: a runner bound to this turn's bridge."""
        if isinstance(tool, RunToolsWithCodeTool):
            return tool.bound(self)
        return tool

    # --- the bridge -------------------------------------------------------------------------

    @property
    def definitions(self) -> Sequence[Mapping[str, Any]]:
        """The tools code may call, under their model-facing names, without labels."""
        return self._definitions

    async def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        """One inner call, as the program sent it; never raises for a tool failure."""
        callable_names = [_name(d) for d in self._definitions]
        tool = self._tools.get(name) if name in callable_names else None
        if tool is None:
            known = ", ".join(callable_names) or "none"
            return ToolResult(
                f"'{name}' cannot be called from code (tools code may call: {known}).",
                is_error=True,
            )
        if self._refuse is not None:
            refused = self._refuse(name, tool)
            if refused is not None:
                return refused
        stripped = strip_intent_for_code_bridge(args, label_bearing=name in self._labelled)
        if name in self._flagged:
            stripped = strip_run_in_background_arg(stripped)
        arguments = dict(stripped) if isinstance(stripped, Mapping) else {}
        return await self._invoke(tool, name, arguments)
