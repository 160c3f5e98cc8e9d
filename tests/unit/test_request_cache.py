"""`RequestCache`: a turn offers the model exactly what it would without the cache, and
later turns reuse the earlier ones' work (each tool read once, the pipeline run once)."""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

import pytest

from intent_ui.agent.request_cache import RequestCache
from intent_ui.agent.run import TurnRun
from intent_ui.agent.tools.base import ToolKind, ToolResult
from intent_ui.core.capabilities import ALL_CAPABILITIES
from intent_ui.core.capabilities.intent import with_intent


class CountingTool:
    """An MCP-like (or native) tool that counts how often its definition is read."""

    def __init__(self, name: str, *, kind: ToolKind = "mcp", server: str = "github") -> None:
        self.name = name
        self.kind: ToolKind = kind
        self.server = server if kind == "mcp" else None
        self.reads = 0
        self.schema: dict[str, Any] = {
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["query"],
        }

    @property
    def tool_id(self) -> str:
        return self.name if self.kind == "native" else f"{self.name}_mcp_{self.server}"

    @property
    def definition(self) -> dict[str, Any]:
        self.reads += 1
        if self.kind == "native":
            params = dict(with_intent(self.schema))
            return {"name": self.name, "description": "native", "parameters": params}
        return {"name": self.name, "description": f"{self.name} tool", "parameters": self.schema}

    async def call(self, args: dict[str, Any]) -> ToolResult:
        return ToolResult("ok")


def agent() -> list[CountingTool]:
    # Two MCP tools called `search` on two servers: both are offered under their ids.
    return [
        CountingTool("read_file", kind="native"),
        CountingTool("search"),
        CountingTool("search", server="gitlab"),
        CountingTool("crm_lookup"),
    ]


OPTIONS: dict[str, Any] = {
    "*": {"describe_intent": True},
    "crm_lookup_mcp_github": {"defer_loading": True},
    "search_mcp_gitlab": {"run_in_background": True},
}


def turn(
    tools: Sequence[CountingTool],
    cache: RequestCache | None,
    *,
    options: dict[str, Any] | None = None,
    strict: bool = False,
) -> TurnRun:
    return TurnRun(
        provider=None,  # type: ignore[arg-type]  # a turn that is never run
        model="m",
        history=[],
        user_message="hi",
        tools=tools,
        tool_options=copy.deepcopy(OPTIONS if options is None else options),
        capabilities=ALL_CAPABILITIES,
        system=None,
        strict=strict,
        request_cache=cache,
    )


def offer(run: TurnRun) -> str:
    """What the model is offered and how its calls are read, as one comparable text."""
    return json.dumps(
        {
            "tools": run.definitions,
            "intent": sorted(run.intent_tool_names),
            "background": sorted(run.background_tool_names),
        }
    )


@pytest.mark.parametrize("strict", [False, True])
def test_a_cached_turn_offers_what_an_uncached_one_does(strict: bool) -> None:
    tools = agent()
    cache = RequestCache()
    expected = offer(turn(tools, None, strict=strict))
    assert offer(turn(tools, cache, strict=strict)) == expected
    assert offer(turn(tools, cache, strict=strict)) == expected
    assert (cache.capabilities.misses, cache.capabilities.hits) == (1, 1)


def test_each_tool_is_read_once_across_turns() -> None:
    tools = agent()
    cache = RequestCache()
    for _ in range(3):
        turn(tools, cache)
    assert [tool.reads for tool in tools] == [1, 1, 1, 1]


def test_a_new_tool_object_is_read_again_and_its_change_reaches_the_model() -> None:
    cache = RequestCache()
    tools = agent()
    turn(tools, cache)
    replaced = CountingTool("search")
    replaced.schema = {"type": "object", "properties": {"pattern": {"type": "string"}}}
    changed = [tools[0], replaced, *tools[2:]]
    run = turn(changed, cache)
    assert replaced.reads == 1
    assert offer(run) == offer(turn(changed, None))
    offered = {d["name"]: d for d in run.definitions}
    assert list(offered["search_mcp_github"]["parameters"]["properties"]) == ["intent", "pattern"]


def test_changed_options_change_the_offer() -> None:
    tools = agent()
    cache = RequestCache()
    turn(tools, cache)
    off = {"*": {"describe_intent": False}}
    run = turn(tools, cache, options=off)
    assert offer(run) == offer(turn(tools, None, options=off))
    assert "search_mcp_github" not in run.intent_tool_names
    assert cache.capabilities.misses == 2


def test_a_turn_cannot_change_what_the_next_turn_is_offered() -> None:
    tools = agent()
    cache = RequestCache()
    first = turn(tools, cache)
    expected = offer(first)
    first.definitions.append({"name": "extra"})  # its own list: allowed
    with pytest.raises(TypeError):
        first.definitions[0]["description"] = "changed"
    assert offer(turn(tools, cache)) == expected


def test_tools_that_cannot_be_remembered_are_read_every_turn() -> None:
    class Unhashable(CountingTool):
        __hash__ = None  # type: ignore[assignment]

    tools = [Unhashable("search")]
    cache = RequestCache()
    runs = [turn(tools, cache) for _ in range(2)]
    assert tools[0].reads == 2
    assert offer(runs[1]) == offer(turn(tools, None))
    assert cache.capabilities.hits == 1  # the pipeline still keys them by content
