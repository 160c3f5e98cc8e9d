"""MCP client against a real stdio server (`tests/support/mcp_github_server.py`).

Tests that leave the server as they found it share one server (`shared`, module loop
scope: starting the server costs about a second); tests that crash, stall or shut a
server down start their own.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from intent_ui.agent.tools.mcp import McpManager, McpServerConnection, McpTool
from intent_ui.config import McpServerConfig
from intent_ui.core.capabilities.intent import INTENT_ARG, strip_intent
from tests.support.loopback import mcp_over_http

SERVER = Path(__file__).resolve().parents[1] / "support" / "mcp_github_server.py"


def server_config(call_log: Path) -> McpServerConfig:
    return McpServerConfig(
        command=sys.executable, args=[str(SERVER)], env={"MCP_CALL_LOG": str(call_log)}
    )


@pytest.fixture(scope="module")
def shared_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcp") / "calls.jsonl"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(shared_log: Path) -> AsyncIterator[McpManager]:
    async with McpManager({"github": server_config(shared_log)}, call_timeout=10) as mcp:
        yield mcp


@pytest.fixture
def manager(shared: McpManager, shared_log: Path) -> McpManager:
    shared_log.unlink(missing_ok=True)  # each test reads only its own calls
    return shared


@pytest.fixture
def call_log(shared_log: Path) -> Path:
    return shared_log


@pytest.fixture
def github(tmp_path: Path) -> McpServerConfig:
    return server_config(tmp_path / "calls.jsonl")


def by_name(manager: McpManager) -> dict[str, McpTool]:
    return {tool.name: tool for tool in manager.tools()}


def received(call_log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in call_log.read_text().splitlines()]


@pytest.mark.asyncio(loop_scope="module")
async def test_lists_the_server_tools(manager: McpManager) -> None:
    tools = by_name(manager)
    assert sorted(tools) == ["crash", "create_issue", "search_code", "slow"]
    search = tools["search_code"]
    assert (search.kind, search.server, search.tool_id) == (
        "mcp",
        "github",
        "search_code_mcp_github",
    )
    definition = search.definition
    assert definition["name"] == "search_code"
    assert definition["description"] == "Search code in a repository."
    assert list(definition["parameters"]["properties"]) == ["query", "repo"]
    assert "intent" not in definition
    assert manager.failures == {}


@pytest.mark.asyncio(loop_scope="module")
async def test_call_search_code(manager: McpManager, call_log: Path) -> None:
    result = await by_name(manager)["search_code"].call({"query": "OAuth"})
    assert not result.is_error
    assert result.output.splitlines()[0] == "3 matches for OAuth in acme/app"
    assert result.outcome is None
    assert received(call_log) == [
        {"tool": "search_code", "args": {"query": "OAuth", "repo": "acme/app"}}
    ]


@pytest.mark.asyncio(loop_scope="module")
async def test_business_intent_parameter_reaches_the_server_untouched(
    manager: McpManager, call_log: Path
) -> None:
    create = by_name(manager)["create_issue"]
    assert list(create.definition["parameters"]["properties"]) == ["title", "intent"]
    result = await create.call({"title": "Refund", "intent": "billing_inquiry"})
    assert result.output == "Created issue 'Refund' with intent billing_inquiry"
    assert received(call_log)[0]["args"] == {"title": "Refund", "intent": "billing_inquiry"}


@pytest.mark.asyncio(loop_scope="module")
async def test_stripped_label_never_reaches_the_server(manager: McpManager, call_log: Path) -> None:
    args = {INTENT_ARG: "Searching for OAuth handling", "query": "OAuth"}
    stripped = strip_intent(args)
    assert isinstance(stripped, dict)
    await by_name(manager)["search_code"].call(stripped)
    assert received(call_log)[0]["args"] == {"query": "OAuth", "repo": "acme/app"}


@pytest.mark.asyncio(loop_scope="module")
async def test_parallel_calls_to_one_server(manager: McpManager) -> None:
    search = by_name(manager)["search_code"]
    results = await asyncio.gather(*(search.call({"query": f"q{i}"}) for i in range(4)))
    assert [r.output.splitlines()[0] for r in results] == [
        f"3 matches for q{i} in acme/app" for i in range(4)
    ]


@pytest.mark.asyncio(loop_scope="module")
async def test_invalid_arguments_are_an_error_result(manager: McpManager) -> None:
    result = await by_name(manager)["search_code"].call({"repo": "acme/app"})
    assert result.is_error
    assert "query" in result.output
    follow_up = await by_name(manager)["search_code"].call({"query": "still up"})
    assert not follow_up.is_error


async def test_crash_mid_call_is_an_error_and_the_next_call_reconnects(
    github: McpServerConfig,
) -> None:
    async with McpManager({"github": github}) as manager:
        await _crash_and_recover(manager)


async def _crash_and_recover(manager: McpManager) -> None:
    tools = by_name(manager)
    crashed = await tools["crash"].call({"reason": "boom"})
    assert crashed.is_error
    assert crashed.output.startswith("MCP server 'github' exited during crash: ")
    assert "crashing: boom" in crashed.output  # the server's stderr tells why
    after = await tools["search_code"].call({"query": "after"})
    assert not after.is_error
    assert after.output.startswith("3 matches for after")
    assert manager.failures == {}


async def test_slow_call_times_out_and_the_server_keeps_serving(
    github: McpServerConfig,
) -> None:
    async with McpManager({"github": github}, call_timeout=0.2) as mcp:
        tools = by_name(mcp)
        result = await tools["slow"].call({"seconds": 30})
        assert result.is_error
        assert result.output == "MCP server 'github' did not answer slow within 0.2 s"
        assert not (await tools["search_code"].call({"query": "x"})).is_error


async def test_missing_command_is_recorded_and_other_servers_work(
    github: McpServerConfig,
) -> None:
    servers = {
        "broken": McpServerConfig(command="intent-ui-no-such-mcp-server"),
        "github": github,
    }
    async with McpManager(servers) as mcp:
        assert set(mcp.failures) == {"broken"}
        assert "'intent-ui-no-such-mcp-server' was not found" in mcp.failures["broken"]
        assert {tool.server for tool in mcp.tools()} == {"github"}
        assert not (await by_name(mcp)["search_code"].call({"query": "x"})).is_error


async def test_server_exiting_at_startup_reports_its_stderr() -> None:
    script = "import sys; sys.stderr.write('missing GITHUB_TOKEN\\n'); sys.exit(2)"
    servers = {"bad": McpServerConfig(command=sys.executable, args=["-c", script])}
    async with McpManager(servers, connect_timeout=10) as mcp:
        assert mcp.tools() == []
        assert "missing GITHUB_TOKEN" in mcp.failures["bad"]


async def test_escape_sequences_on_a_server_stderr_never_reach_the_reason() -> None:
    hostile = "\x1b]0;pwned\x07missing \x1b[31mGITHUB_TOKEN\x1b[0m\x9b2J\n"
    script = f"import sys; sys.stderr.write({hostile!r}); sys.exit(2)"
    servers = {"bad": McpServerConfig(command=sys.executable, args=["-c", script])}
    async with McpManager(servers, connect_timeout=10) as mcp:
        reason = mcp.failures["bad"]
    assert "missing GITHUB_TOKEN" in reason
    assert not any(char in reason for char in "\x1b\x07\x9b")


async def test_start_call_and_close_from_different_tasks(github: McpServerConfig) -> None:
    # A long-running app starts the manager at boot, calls from each turn's task and
    # closes at shutdown: three different tasks, none of which owns the session.
    mcp = McpManager({"github": github})
    await asyncio.create_task(mcp.start())
    search = by_name(mcp)["search_code"]
    first = await asyncio.create_task(search.call({"query": "turn 1"}))
    second = await asyncio.create_task(search.call({"query": "turn 2"}))
    assert [first.is_error, second.is_error] == [False, False]
    await asyncio.create_task(mcp.aclose())
    await mcp.aclose()  # idempotent
    result = await search.call({"query": "x"})
    assert result.is_error
    assert "shut down" in result.output


async def test_server_connection_context_manager(github: McpServerConfig) -> None:
    async with McpServerConnection("github", github) as conn:
        assert {tool.name for tool in conn.tools} == {
            "crash",
            "create_issue",
            "search_code",
            "slow",
        }
        answer = await conn.session.call_tool("search_code", {"query": "direct"})
        assert answer.isError is False


async def test_streamable_http_server_lists_and_calls(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "MCP_CALL_LOG": str(tmp_path / "calls.jsonl")}
    async with mcp_over_http([str(SERVER)], env) as url:
        config = McpServerConfig(url=url)
        async with McpManager({"github": config}, call_timeout=10) as mcp:
            tools = by_name(mcp)
            assert tools["search_code"].tool_id == "search_code_mcp_github"
            result = await tools["search_code"].call({"query": "oauth"})
            assert not result.is_error and "matches for oauth" in result.output
