"""A conversation on the demo endpoint driven past a small context budget: what the
provider receives once older turns are compacted, turn after turn."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from intent_ui.agent.providers.anthropic import messages_body
from intent_ui.agent.providers.base import ChatRequest, ProviderEvent
from intent_ui.agent.providers.demo import DemoProvider
from intent_ui.agent.providers.openai import chat_completions_body
from intent_ui.agent.runtime import AgentRuntime
from intent_ui.agent.session import TurnRequest, TurnSessions
from intent_ui.agent.tokenizer import get_tokenizer
from intent_ui.config import AppConfig
from intent_ui.core.compaction import LEDGER_HEADER, history_tokens
from intent_ui.core.history import turn_history
from intent_ui.core.turn import TurnView
from intent_ui.store import conversations as conv
from intent_ui.store.models import LOCAL_USER_ID
from intent_ui.store.turns import load_events

BUDGET = 60
"""Tokens: less than any turn that made a call (and than the ledger's header), so every
turn start that finds calls not compacted yet compacts them."""

# Each line: the tool [how it ended]: the demo model's intent → the tool's outcome · ...
LIST_LINE = "list_directory [success]: Listing the workspace files → "
README_LINE = ("read_file [success]: Reading README.md → ", " · files: README.md")
TODO_LINE = "grep_search [success]: Searching for TODO → "


@pytest.fixture
def requests(monkeypatch: pytest.MonkeyPatch) -> list[ChatRequest]:
    """Every request the demo model receives, in order."""
    received: list[ChatRequest] = []
    stream = DemoProvider.stream

    def recording(self: DemoProvider, request: ChatRequest) -> AsyncIterator[ProviderEvent]:
        received.append(request)
        return stream(self, request)

    monkeypatch.setattr(DemoProvider, "stream", recording)
    return received


def ledger(request: ChatRequest) -> list[str]:
    """The ledger block's lines (the first message), or [] when the request has none."""
    first = request.messages[0]
    if first["role"] != "system":
        return []
    header, *lines = str(first["content"]).split("\n")
    assert header == LEDGER_HEADER
    return lines


def before_the_question(request: ChatRequest) -> list[dict[str, object]]:
    """The request's messages before its last user message (the turns before this one)."""
    last = max(i for i, m in enumerate(request.messages) if m["role"] == "user")
    return request.messages[:last]


async def test_a_conversation_past_its_budget_sends_the_ledger_instead_of_old_tool_bodies(
    engine: Engine, tmp_path: Path, requests: list[ChatRequest]
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "README.md").write_text("# Project\n\n" + "It does things. " * 60 + "\n")
    (workspace / "app.py").write_text("# TODO: handle errors\nprint('hi')\n")
    config = AppConfig.model_validate(
        {
            "endpoints": [{"kind": "demo", "pacing_ms": 0, "context_budget": BUDGET}],
            "workspace": workspace,
        }
    )
    chat = conv.create_conversation(engine, owner=LOCAL_USER_ID, endpoint="demo", model="demo")
    firsts: list[ChatRequest] = []
    async with AgentRuntime(config) as runtime:
        sessions = TurnSessions(engine=engine, runtime=runtime, config=config)
        for text in ("list the files", "read README.md", "search for TODO", "read app.py"):
            sent = len(requests)
            session = await sessions.start(TurnRequest(chat.id, text, "demo", "demo"))
            await session.wait()
            assert session.view.calls(), f"{text!r} made no call"
            firsts.append(requests[sent])

    # The first turn has nothing before it. Every later one starts past the budget with
    # calls not compacted yet: the turns before it carry no tool call or result, and the
    # ledger is pinned first, one line per call, oldest first, every earlier line kept.
    assert ledger(firsts[0]) == []
    lines = [ledger(request) for request in firsts[1:]]
    assert [len(found) for found in lines] == [1, 2, 3]
    assert lines[0][0].startswith(LIST_LINE) and lines[0][0].endswith("· files: .")
    assert lines[1][:1] == lines[0]
    assert lines[1][1].startswith(README_LINE[0]) and lines[1][1].endswith(README_LINE[1])
    assert lines[2][:2] == lines[1] and lines[2][2].startswith(TODO_LINE)
    assert "queries: TODO" in lines[2][2]
    for request, asked in zip(firsts[1:], (1, 2, 3), strict=True):
        earlier = before_the_question(request)
        assert not any(m["role"] == "tool" or m.get("tool_calls") for m in earlier)
        users = [m["content"] for m in earlier if m["role"] == "user"]
        assert users == ["list the files", "read README.md", "search for TODO"][:asked]
    # Within a turn, every round's request keeps the block first.
    last_turn = requests[requests.index(firsts[3]) :]
    assert len(last_turn) > 1 and all(ledger(r) == lines[2] for r in last_turn)
    # The model reads less than the whole history would be (the README's text included).
    whole: list[dict[str, Any]] = []
    for message in conv.messages(engine, chat.id)[:-2]:
        if message.role == "user":
            whole.append({"role": "user", "content": message.content})
        elif message.role == "assistant":
            whole.extend(turn_history(TurnView.replay(load_events(engine, message.id))))
    count = get_tokenizer().count
    assert history_tokens(before_the_question(firsts[3]), count) < history_tokens(whole, count)

    # Each compaction is a message of the conversation where it happened, holding the
    # lines it added.
    shown = [(m.role, m.content) for m in conv.messages(engine, chat.id)]
    assert [role for role, _ in shown] == [
        "user",
        "assistant",
        *("compaction", "user", "assistant") * 3,
    ]
    assert [content.split("\n") for role, content in shown if role == "compaction"] == [
        lines[0],
        lines[1][1:],
        lines[2][2:],
    ]

    # Both wire formats carry the block as a system prompt ahead of the conversation.
    block = str(firsts[3].messages[0]["content"])
    assert messages_body(firsts[3])["system"].endswith(block)
    openai_messages = chat_completions_body(firsts[3])["messages"]
    system = [m for m in openai_messages if m["role"] == "system"]
    assert system[-1]["content"] == block
    assert openai_messages.index(system[-1]) == len(system) - 1
