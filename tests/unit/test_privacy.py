"""Logs are copies that leave the conversation: no log line repeats the user's PII.

An MCP server's stderr often echoes the arguments it was called with; the client quotes
that stderr when a server fails. The conversation (the tool result the model and the
user see) keeps the server's words; the log line gets them PII-stripped.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from intent_ui.agent.tools.mcp import McpManager
from intent_ui.config import McpServerConfig

SERVER = Path(__file__).resolve().parents[1] / "support" / "mcp_github_server.py"
EMAIL = "alice@example.com"


async def test_an_mcp_failure_logs_the_servers_stderr_without_pii(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    config = McpServerConfig(
        command=sys.executable,
        args=[str(SERVER)],
        env={"MCP_CALL_LOG": str(tmp_path / "calls.jsonl")},
    )
    async with McpManager({"github": config}) as manager:
        crash = next(tool for tool in manager.tools() if tool.name == "crash")
        result = await crash.call({"reason": f"mail {EMAIL} failed"})
    assert f"crashing: mail {EMAIL} failed" in result.output  # the conversation's own record
    logged = [r.getMessage() for r in caplog.records if r.name.startswith("intent_ui")]
    assert any("crashing: mail [email] failed" in line for line in logged)
    assert EMAIL not in caplog.text
