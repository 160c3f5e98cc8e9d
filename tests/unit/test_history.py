"""The history sent back to the model is one thing, live or reloaded.

The run loop builds it between rounds; the next turn reads it from the stored event log.
These tests run a real turn (the run loop, its session, a SQLite file) and compare the two.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sqlalchemy import Engine

from intent_ui.agent.providers.base import TextChunk
from intent_ui.agent.session import TurnRequest, TurnSessions
from intent_ui.agent.tools.base import ToolResult
from intent_ui.config import AppConfig
from intent_ui.core.history import (
    CANCELLED_RESULT,
    FAILED_RESULT,
    INTERRUPTED_RESULT,
    call_arguments,
    call_result,
)
from intent_ui.store import conversations as conv
from intent_ui.store.models import LOCAL_USER_ID
from tests.support.run_loop import (
    GUARD,
    FakeTool,
    RunLoopRuntime,
    call,
    end,
)


async def test_a_reloaded_turn_sends_the_model_the_history_the_live_turn_sent(
    engine: Engine,
) -> None:
    entered = asyncio.Event()

    async def hang(args: dict[str, Any]) -> ToolResult:
        entered.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable: the turn is stopped first")

    # Two MCP servers with a tool of the same name: the model addresses each by its id.
    github = FakeTool("search", kind="mcp", server="github", self_describing=False)
    gitlab = FakeTool("search", kind="mcp", server="gitlab", self_describing=False, run=hang)
    runtime = RunLoopRuntime(
        [github, gitlab],
        [
            TextChunk("Looking in both."),
            *call("c1", "search_mcp_github", {"intent": "Searching GitHub", "pattern": "oauth"}),
            *call("c2", "search_mcp_gitlab", {"intent": "Searching GitLab", "pattern": "oauth"}),
            end("tool_use"),
        ],
    )
    config = AppConfig.model_validate({"endpoints": [{"kind": "demo"}]})
    fake: Any = runtime  # stands in for an AgentRuntime: `start_turn` is all a session asks
    sessions = TurnSessions(engine=engine, runtime=fake, config=config, flush_interval=0.01)
    chat = conv.create_conversation(engine, owner=LOCAL_USER_ID, endpoint="demo", model="demo")
    session = await sessions.start(TurnRequest(chat.id, "Where is OAuth?", "demo", "demo"))
    await asyncio.wait_for(entered.wait(), GUARD)
    session.stop()  # the GitLab search is still running: it is cancelled
    await asyncio.wait_for(session.wait(), GUARD)

    (run,) = runtime.runs
    reloaded = conv.history(engine, chat.id)
    assert reloaded == run.new_messages
    assert [c["name"] for c in reloaded[1]["tool_calls"]] == [
        "search_mcp_github",
        "search_mcp_gitlab",
    ]
    cancelled = reloaded[3]
    assert (cancelled["tool_call_id"], cancelled["name"], cancelled["is_error"]) == (
        "c2",
        "search_mcp_gitlab",
        True,
    )
    assert cancelled["content"] == CANCELLED_RESULT


@pytest.mark.parametrize(
    ("text", "sent"),
    [
        ('{"path": "."}', '{"path": "."}'),
        ("", "{}"),  # a tool without parameters may get no argument text at all
        ('{"intent": "Reading the conf', "{}"),  # cut off mid-stream
        ("[1, 2]", "{}"),
        ("null", "{}"),
    ],
)
def test_arguments_go_back_as_one_json_object(text: str, sent: str) -> None:
    assert call_arguments(text) == sent


@pytest.mark.parametrize(
    ("state", "output", "error", "result"),
    [
        ("settled", "3 matches", None, ("3 matches", False)),
        ("settled", "", None, ("", False)),
        ("error", "HTTP 404", "HTTP 404", ("HTTP 404", True)),
        ("error", "", "rate limited", ("rate limited", True)),
        ("error", "", None, (FAILED_RESULT, True)),
        ("cancelled", "", None, (CANCELLED_RESULT, True)),
        ("cancelled", "", "The turn failed", ("The turn failed", True)),
        ("running", "", None, (INTERRUPTED_RESULT, True)),
        ("background", "", None, (INTERRUPTED_RESULT, True)),
    ],
)
def test_every_call_gets_a_result(
    state: str, output: str, error: str | None, result: tuple[str, bool]
) -> None:
    assert call_result(state, output, error) == result
