"""AgentRuntime: endpoints, providers, tool selection and default tool options."""

from __future__ import annotations

import logging
import sys
from collections import Counter
from pathlib import Path

import pytest

from intent_ui.agent.activity import DemoSummarizer
from intent_ui.agent.providers.demo import DemoProvider
from intent_ui.agent.runtime import AgentRuntime, UnknownEndpointError
from intent_ui.agent.tools.actions import load_action_tools
from intent_ui.agent.tools.memory import MEMORY_DEFAULT_OWNER, InMemoryMemoryStore
from intent_ui.config import AppConfig
from intent_ui.core.events import CallSettled, GoalSelected, TurnDone
from intent_ui.core.goals import GoalError


def config(tmp_path: Path, **extra: object) -> AppConfig:
    (tmp_path / "auth.py").write_text("OAuth here\n")
    data: dict[str, object] = {
        "endpoints": [{"kind": "demo", "pacing_ms": 0, "activity_label": True}],
        "workspace": tmp_path,
    }
    data.update(extra)
    return AppConfig.model_validate(data)


async def test_default_agent_describes_every_eligible_tool(tmp_path: Path) -> None:
    runtime = AgentRuntime(config(tmp_path))
    assert runtime.default_tool_options() == {"*": {"describe_intent": True}}
    off = AgentRuntime(config(tmp_path, capabilities=[]))
    assert off.default_tool_options() == {}


async def test_tools_for_filters_by_tool_id_and_none_means_all(tmp_path: Path) -> None:
    async with AgentRuntime(config(tmp_path)) as runtime:
        assert len(runtime.tools_for(None)) == len(runtime.tools) > 2
        picked = runtime.tools_for(["read_file", "grep_search", "not_there"])
        assert [tool.tool_id for tool in picked] == ["read_file", "grep_search"]


async def test_provider_for_builds_the_demo_once_with_the_pacing_override(tmp_path: Path) -> None:
    runtime = AgentRuntime(config(tmp_path), pacing_ms=7)
    provider = runtime.provider_for("demo")
    assert isinstance(provider, DemoProvider)
    assert provider.pacing_ms == 7
    assert runtime.provider_for(None) is provider
    assert isinstance(runtime.summarizer_for("demo"), DemoSummarizer)
    with pytest.raises(UnknownEndpointError, match="Unknown endpoint 'nope'"):
        runtime.provider_for("nope")
    await runtime.aclose()


async def test_start_turn_runs_the_demo_over_the_workspace(tmp_path: Path) -> None:
    async with AgentRuntime(config(tmp_path)) as runtime:
        run = runtime.start_turn(user_message="search for OAuth and MCP")
        events = [event async for event in run]
    outcomes = [e.outcome for e in events if isinstance(e, CallSettled)]
    assert Counter(outcomes) == Counter(["Found 1 match for OAuth", "No matches for MCP"])
    assert isinstance(events[-1], TurnDone)
    assert run.new_messages[-1]["role"] == "assistant"


async def test_a_users_turn_writes_their_memories_and_offers_their_actions(
    tmp_path: Path,
) -> None:
    store = InMemoryMemoryStore()
    document = {
        "openapi": "3.0.3",
        "info": {"title": "Pets", "version": "1"},
        "servers": [{"url": "https://pets.example"}],
        "paths": {"/pets": {"get": {"operationId": "listPets", "responses": {}}}},
    }
    actions, _ = load_action_tools([("pets.json", document)])
    async with AgentRuntime(config(tmp_path), memory_store=store) as runtime:
        runtime.set_action_tools({"alice": actions})
        assert [t.tool_id for t in runtime.tools_for(None, "alice") if t.kind == "action"] == [
            actions[0].tool_id
        ]
        assert [t for t in runtime.tools_for(None, "bob") if t.kind == "action"] == []
        run = runtime.start_turn(user_message="remember tone is brief", user_id="alice")
        async for _ in run:  # the turn runs as its events are read
            pass
    assert await store.get_all("alice") == {"tone": "brief"}
    assert await store.get_all(MEMORY_DEFAULT_OWNER) == {}


def test_model_spec_naming_unknown_tools_is_warned_with_the_known_ones() -> None:
    from intent_ui.agent.runtime import spec_tool_warnings
    from intent_ui.agent.tools.base import ToolResult
    from intent_ui.config import ModelSpec

    class Named:
        def __init__(self, name: str, tool_id: str) -> None:
            self.name, self.tool_id = name, tool_id
            self.definition = {"name": name, "parameters": {"type": "object"}}

        async def call(self, args: dict) -> ToolResult:  # pragma: no cover - not called
            return ToolResult(output="")

    tools = [Named("read_file", "read_file"), Named("search_code", "search_code_mcp_github")]
    specs = [
        ModelSpec(name="ok", endpoint="demo", model="demo", describe_intent=["search_code"]),
        ModelSpec(name="typo", endpoint="demo", model="demo", describe_intent=["serch_code"]),
        ModelSpec(name="all", endpoint="demo", model="demo", describe_intent=True),
    ]
    warnings = spec_tool_warnings(specs, tools)  # type: ignore[arg-type]
    assert warnings == [
        "model_specs[1] (typo): describe_intent names unknown tools serch_code; "
        "known tools: read_file, search_code_mcp_github"
    ]


GITHUB_SERVER = Path(__file__).resolve().parents[1] / "support" / "mcp_github_server.py"


async def test_a_model_spec_takes_tool_names_and_warns_of_those_that_never_get_an_intent(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The GitHub server's `create_issue` has its own `intent` parameter: no label fits.
    spec = {
        "name": "A",
        "endpoint": "demo",
        "model": "demo",
        "describe_intent": ["search_code", "create_issue", "serch_code"],
    }
    servers = {"github": {"command": sys.executable, "args": [str(GITHUB_SERVER)]}}
    with caplog.at_level(logging.WARNING, logger="intent_ui.agent.runtime"):
        async with AgentRuntime(
            config(tmp_path, mcp_servers=servers, model_specs=[spec])
        ) as runtime:
            run = runtime.start_turn(user_message="hi", tool_options=runtime.spec_tool_options("A"))
    # Named by its name, not its id, the search still gets its intent.
    assert run.intent_tool_names == {"search_code"}
    warnings = [r.getMessage() for r in caplog.records if r.name == "intent_ui.agent.runtime"]
    assert warnings[0].startswith(
        "model_specs[0] (A): describe_intent names unknown tools serch_code; known tools: "
    )
    assert warnings[1] == (
        "model_specs[0] (A): describe_intent names tools that never get an intent: "
        "create_issue (it declares its own 'intent' parameter)"
    )


GOALS = [
    {"id": "remember", "description": "Remember a fact about the user", "delegates": ["memory"]},
    {
        "id": "research",
        "description": "Search the code for where things are handled",
        "delegates": ["read"],
    },
]


async def test_an_agent_with_goals_chooses_one_and_uses_only_its_tools_offline(
    tmp_path: Path,
) -> None:
    async with AgentRuntime(config(tmp_path)) as runtime:
        run = runtime.start_turn(
            user_message="search for OAuth and MCP",
            agent_tool_ids=["grep_search", "set_memory"],
            goals=GOALS,
        )
        events = [event async for event in run]
    (goal,) = [e for e in events if isinstance(e, GoalSelected)]
    assert goal.label == "Search the code for where things are handled"
    outcomes = [e.outcome for e in events if isinstance(e, CallSettled)]
    assert outcomes[0] == "Goal: Search the code for where things are handled"
    assert Counter(outcomes[1:]) == Counter(["Found 1 match for OAuth", "No matches for MCP"])
    assert run.definitions == [d for d in run.definitions if d["name"] == "grep_search"]


async def test_invalid_goals_refuse_the_turn_naming_the_goal(tmp_path: Path) -> None:
    async with AgentRuntime(config(tmp_path)) as runtime:
        with pytest.raises(GoalError, match="Goal 'research': describe when"):
            runtime.start_turn(user_message="hi", goals=[{"id": "research", "description": ""}])
