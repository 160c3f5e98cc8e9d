"""A wrapped server in its own process, driven by the real `mcp` client over stdio and
streamable HTTP. Capture is switched on by `INTENT_CAPTURE` and its JSON-lines sink named
by the `INTENT_CAPTURE_CONFIG` file, the way a deployed server would be configured."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from intent_ui.core.capture import CONTEXT_ARG
from tests.support.capture_servers import ServerKind
from tests.support.loopback import mcp_over_http

SCRIPT = Path(__file__).resolve().parents[1] / "support" / "capture_server.py"

Connect = Callable[[ServerKind, dict[str, str]], AbstractAsyncContextManager[ClientSession]]


def _capture_env(tmp_path: Path) -> tuple[dict[str, str], Path]:
    log = tmp_path / "capture.jsonl"
    config = tmp_path / "capture.json"
    config.write_text(json.dumps({"intent": True, "sink": {"jsonl": str(log)}}))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "INTENT_CAPTURE": "1"}
    env["INTENT_CAPTURE_CONFIG"] = str(config)
    return env, log


@asynccontextmanager
async def _over_stdio(kind: ServerKind, env: dict[str, str]) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=sys.executable, args=[str(SCRIPT), kind], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@asynccontextmanager
async def _over_http(kind: ServerKind, env: dict[str, str]) -> AsyncIterator[ClientSession]:
    async with (
        mcp_over_http([str(SCRIPT), kind], env) as url,
        streamable_http_client(url) as (read, write, _session_id),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@pytest.fixture(params=[_over_stdio, _over_http], ids=["stdio", "streamable-http"])
def connect(request: pytest.FixtureRequest) -> Connect:
    return request.param


def _records(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


async def test_wrapped_server_advertises_captures_and_records(
    connect: Connect, server_kind: ServerKind, tmp_path: Path
) -> None:
    env, log = _capture_env(tmp_path)
    async with connect(server_kind, env) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        captured = await session.call_tool(
            "book_car",
            {"city": "Munich", "days": 2, CONTEXT_ARG: "Weekend trip, call 555-867-5309"},
        )
        bare = await session.call_tool("book_car", {"city": "Rome", "days": 1})
        widget = await session.call_tool("refresh_map", {"area": "centre"})
        failed = await session.call_tool("explode", {CONTEXT_ARG: "Trying the failing tool"})

    assert tools["book_car"].inputSchema["required"][-1] == CONTEXT_ARG
    assert CONTEXT_ARG not in tools["refresh_map"].inputSchema["required"]
    block = captured.content[0]
    assert isinstance(block, types.TextContent)
    assert json.loads(block.text)["args"] == {"city": "Munich", "days": 2}
    assert not bare.isError and not widget.isError and failed.isError

    records = _records(log)
    assert [
        (r["tool"], r["intent"], r["intent_context"], r["intent_source"], r["status"])
        for r in records
    ] == [
        ("book_car", "Weekend trip, call [phone]", "required", "context_parameter", "ok"),
        ("book_car", None, "required", None, "ok"),
        ("refresh_map", None, "optional", None, "ok"),
        ("explode", "Trying the failing tool", "required", "context_parameter", "error"),
    ]
    assert all(isinstance(r["duration_ms"], float) and r["duration_ms"] >= 0 for r in records)


async def test_without_the_switch_the_process_serves_tools_untouched(
    connect: Connect, server_kind: ServerKind, tmp_path: Path
) -> None:
    env, _log = _capture_env(tmp_path)
    env["INTENT_CAPTURE"] = "0"
    async with connect(server_kind, env) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert all(
        CONTEXT_ARG not in t.inputSchema.get("properties", {})
        for n, t in tools.items()
        if n != "annotate"
    )
