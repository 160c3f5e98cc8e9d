"""The tools a user's agents may pick, as the agents page lists them, and their token costs.

Both are cached in the process (kept out of the Reflex state, which is pickled): the
catalogue per user and host, rebuilt after an import; the costs per tool definition, so a
definition is counted once. Everything here blocks (the database, parsing a stored
document, the tokenizer): call it from a worker thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from intent_ui.agent.tokenizer import get_tokenizer
from intent_ui.agent.tools.actions import load_action_tools
from intent_ui.agent.tools.registry import tool_family_of
from intent_ui.core.builder import BuilderTool
from intent_ui.core.tokens import ToolTokenCost, definition_text, tool_token_cost
from intent_ui.store import actions as action_store
from intent_ui.ui.builder_view import NATIVE_SOURCE
from intent_ui.ui.host import Host, refresh_actions

__all__ = ["catalogue", "priced_catalogue", "token_costs"]


def _builder_tool(tool: Any) -> BuilderTool:
    kind = tool.kind
    if kind == "mcp":
        source = tool.server or "mcp"
    elif kind == "action":
        source = getattr(tool, "domain", "") or "actions"
    else:
        source = NATIVE_SOURCE
    return BuilderTool(
        tool_id=tool.tool_id,
        name=tool.name,
        kind=kind,
        source=source,
        definition=tool.definition,
        family=tool_family_of(tool),
    )


def catalogue(
    host: Host, user: str, *, refresh: bool = False
) -> tuple[list[BuilderTool], dict[str, str]]:
    """Every tool `user`'s agents may pick (runtime tools, then the actions they imported),
    and why each unavailable MCP server is unavailable. `refresh` rebuilds it after an
    import."""
    cached = _catalogue_cache.get(user)
    if not refresh and cached is not None and cached[0] is host:
        return cached[1], cached[2]
    if refresh:
        refresh_actions(host)
    runtime_tools = host.runtime.tools
    tools = [_builder_tool(t) for t in runtime_tools]
    known = {t.tool_id for t in tools}
    stored = action_store.list_action_documents(host.engine, owner=user)
    actions, _problems = load_action_tools((d.source, d.document_json) for d in stored)
    tools.extend(_builder_tool(a) for a in actions if a.tool_id not in known)
    unavailable = dict(host.runtime.mcp_failures)
    _catalogue_cache[user] = (host, tools, unavailable)
    return tools, unavailable


_catalogue_cache: dict[str, tuple[Host, list[BuilderTool], dict[str, str]]] = {}


def priced_catalogue(
    host: Host, user: str
) -> tuple[list[BuilderTool], dict[str, str], dict[str, ToolTokenCost]]:
    """`catalogue` and the token costs of its tools."""
    tools, unavailable = catalogue(host, user)
    return tools, unavailable, token_costs(tools)


def token_costs(tools: Sequence[BuilderTool]) -> dict[str, ToolTokenCost]:
    """Token costs per tool id, counted once per definition text."""
    count = get_tokenizer().count
    out: dict[str, ToolTokenCost] = {}
    for tool in tools:
        key = (tool.tool_id, definition_text(tool.definition))
        cost = _COSTS.get(key)
        if cost is None:
            cost = _COSTS[key] = tool_token_cost(tool.definition, count)
        out[tool.tool_id] = cost
    return out


_COSTS: dict[tuple[str, str], ToolTokenCost] = {}
